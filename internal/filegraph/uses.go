package filegraph

import (
	"go/token"
	"go/types"
	"path/filepath"
)

// uses maps a using file to a declaring file to the uses between them.
type uses map[string]map[string][]Use

// collectUses returns the uses from one of c's files of an identifier
// declared at package level in another of its files.
func collectUses(c *checked) uses {
	own := map[string]bool{}
	for _, n := range c.names {
		own[n] = true
	}
	u := uses{}
	add := func(at token.Pos, obj types.Object) {
		if obj == nil || obj.Pkg() != c.pkg || !obj.Pos().IsValid() || !packageLevel(c.pkg, obj) {
			return
		}
		pos := c.fset.Position(at)
		from, to := filepath.Base(pos.Filename), filepath.Base(c.fset.Position(obj.Pos()).Filename)
		if from == to || !own[from] || !own[to] {
			return
		}
		if u[from] == nil {
			u[from] = map[string][]Use{}
		}
		u[from][to] = append(u[from][to], Use{Name: obj.Name(), Line: pos.Line})
	}
	for id, obj := range c.info.Uses {
		add(id.Pos(), obj)
	}
	for sel, s := range c.info.Selections {
		// x.F promoted through embedded fields: each embedded field the
		// path walks through is used too, at the selector.
		t := s.Recv()
		for _, i := range s.Index()[:len(s.Index())-1] {
			st, ok := structOf(t)
			if !ok {
				break
			}
			f := st.Field(i)
			add(sel.Sel.Pos(), f)
			t = f.Type()
		}
	}
	return u
}

// structOf returns the struct t or *t is, if it is one.
func structOf(t types.Type) (*types.Struct, bool) {
	if p, ok := t.Underlying().(*types.Pointer); ok {
		t = p.Elem()
	}
	st, ok := t.Underlying().(*types.Struct)
	return st, ok
}

// packageLevel reports whether obj is declared at package level: in the
// package scope, or a method, struct field or interface method; not a
// local, parameter, label or type parameter.
func packageLevel(pkg *types.Package, obj types.Object) bool {
	switch o := obj.(type) {
	case *types.Var:
		if o.IsField() {
			return true
		}
	case *types.Func:
		if sig, ok := o.Type().(*types.Signature); ok && sig.Recv() != nil {
			return true
		}
	case *types.TypeName:
		if _, ok := o.Type().(*types.TypeParam); ok {
			return false
		}
	}
	return obj.Parent() == pkg.Scope()
}
