package filegraph

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// listed is the part of one package of go list -json that Measure reads.
type listed struct {
	ImportPath string
	Dir        string
	Export     string
	GoFiles    []string
	CgoFiles   []string
	DepOnly    bool
}

// checked is one type-checked package: its files' syntax and what
// go/types resolved in them.
type checked struct {
	path  string
	dir   string
	names []string // base names of the non-test files, as go list gives them
	fset  *token.FileSet
	pkg   *types.Package
	info  *types.Info
}

// goList runs go list -export -deps -json pattern in the current
// directory and returns the one package the pattern names and the export
// data file of every package it lists, by import path.
func goList(ctx context.Context, pattern string) (listed, map[string]string, error) {
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "go", "list", "-export", "-deps", "-json", "--", pattern)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return listed{}, nil, fmt.Errorf("go list %s: %w: %s", pattern, err, strings.TrimSpace(stderr.String()))
	}
	var targets []listed
	exports := map[string]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return listed{}, nil, fmt.Errorf("decode go list %s: %w", pattern, err)
		}
		exports[p.ImportPath] = p.Export
		if !p.DepOnly {
			targets = append(targets, p)
		}
	}
	if len(targets) != 1 {
		return listed{}, nil, fmt.Errorf("go list %s: %d packages, want one", pattern, len(targets))
	}
	return targets[0], exports, nil
}

// load lists the package pattern names, parses its non-test files and
// type-checks them against its dependencies' export data.
func load(ctx context.Context, pattern string) (*checked, error) {
	target, exports, err := goList(ctx, pattern)
	if err != nil {
		return nil, err
	}
	c := &checked{
		path:  target.ImportPath,
		dir:   target.Dir,
		names: append(append([]string{}, target.GoFiles...), target.CgoFiles...),
		fset:  token.NewFileSet(),
		info: &types.Info{
			Uses:       map[*ast.Ident]types.Object{},
			Selections: map[*ast.SelectorExpr]*types.Selection{},
		},
	}
	files := make([]*ast.File, 0, len(c.names))
	for _, n := range c.names {
		f, err := parser.ParseFile(c.fset, filepath.Join(c.dir, n), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", n, err)
		}
		files = append(files, f)
	}
	imp := importer.ForCompiler(c.fset, "gc", func(path string) (io.ReadCloser, error) {
		e := exports[path]
		if e == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(e)
	})
	conf := types.Config{Importer: imp}
	c.pkg, err = conf.Check(c.path, c.fset, files, c.info)
	if err != nil {
		return nil, fmt.Errorf("type-check %s: %w", c.path, err)
	}
	return c, nil
}
