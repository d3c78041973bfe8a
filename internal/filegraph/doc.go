// Package filegraph measures how the non-test files of one Go package
// depend on each other, so a test can hold a package's files in order.
//
// File X uses file Y (X != Y) when X uses an identifier declared at
// package level in Y: a type, func, method, struct field, interface
// method, const or var, as go/types resolves it (types.Info.Uses), plus
// the embedded fields a selector walks through implicitly (x.F promoted
// through an embedded E uses E's field too). Locals, parameters, labels
// and type parameters do not count.
//
// Files that use each other, directly or through others, form one
// strongly connected component: a reference running back up. A file's
// level is 1 plus the highest level of the files it uses, a component
// counting as one level; the package's level count is its longest chain.
//
// Measure runs the go command (go list -export -deps -json) for the
// compiled export data of the package's dependencies and type-checks
// the package's own files from source; it needs the go command on PATH
// and writes nothing but the go command's build cache.
package filegraph
