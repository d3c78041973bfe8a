package partition

import "github.com/zkelect/zkelect/partition/assign"

// The sticky assignment lives in package partition/assign (pure, standard
// library only). These names keep working for one release so that code
// written against earlier releases compiles unchanged.

// AssignmentFormat is the version of the assignment rule.
//
// Deprecated: use assign.Format; this alias is kept for one release.
const AssignmentFormat = assign.Format

// Input is the state an assignment is computed from.
//
// Deprecated: use assign.Input; this alias is kept for one release.
type Input = assign.Input

// Assign returns the target member of every shard of in (see assign.Assign).
//
// Deprecated: use assign.Assign; this wrapper is kept for one release.
func Assign(in Input) map[string]string { return assign.Assign(in) }
