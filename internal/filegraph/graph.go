package filegraph

import (
	"context"
	"fmt"
	"maps"
	"slices"
)

// Graph is how the non-test files of one package use each other. Files
// are named by base name (run.go); every list is sorted, so two measures
// of the same source are equal.
type Graph struct {
	// Package is the measured package's import path.
	Package string
	// Files are the package's non-test Go files (GoFiles and CgoFiles of
	// go list), sorted.
	Files []string
	// Edges are all the file-to-file uses, sorted by From then To.
	Edges []Edge
	// Components are the strongly connected components of more than one
	// file: files that use each other, directly or through others, each
	// with the edges between its own files. Empty when the files form no
	// cycle. Sorted by first file.
	Components []Component
	// Levels holds the files on each level, Levels[0] being level 1 (files
	// that use no other file). len(Levels) is the longest chain of
	// components; a component counts as one level and its files share it.
	Levels [][]string
	// Chain is one longest chain, from a file on the top level down to a
	// file on level 1, each file using the next, except that two files of
	// one component may follow each other (the first reaches the second
	// through the component).
	Chain []string

	level map[string]int
}

// Edge is one file's uses of identifiers declared in another file.
type Edge struct {
	// From is the using file, To the declaring one.
	From, To string
	// Uses are From's uses of To's identifiers, in source order.
	Uses []Use
}

// Use is one use of an identifier declared in another file.
type Use struct {
	// Name is the identifier (a type, func, method, field, const or var).
	Name string
	// Line is the 1-based line of the use in the using file.
	Line int
}

// Component is a set of files that use each other, directly or through
// others, so they cannot order into levels.
type Component struct {
	// Files are the component's files, sorted.
	Files []string
	// Edges are all the edges between the component's files.
	Edges []Edge
	// Order proposes an order of Files, users first, in which BackEdges
	// are the only edges running back up, from a file to one before it.
	Order []string
	// BackEdges are the edges that break the component once their uses
	// move (the identifiers down to a file below, or the use up): a
	// small set of few uses, found by a heuristic, not always the smallest.
	BackEdges []Edge
}

// Measure measures the package pattern names (a directory such as
// ./partition or an import path, relative to the current directory's
// module). It runs the go command, so it needs it on PATH, and
// type-checks the package's files; ctx bounds the go command. A pattern
// that names no package or several, a package whose files do not
// type-check (cgo files included, which it does not preprocess), or a
// failing go command is an error.
func Measure(ctx context.Context, pattern string) (*Graph, error) {
	c, err := load(ctx, pattern)
	if err != nil {
		return nil, fmt.Errorf("measure files of %s: %w", pattern, err)
	}
	return build(c.path, c.names, collectUses(c)), nil
}

// Level returns the level of file, 1 for a file that uses no other, or 0
// if file is not one of g's files.
func (g *Graph) Level(file string) int {
	return g.level[file]
}

// build orders files by u into components and levels.
func build(pkg string, files []string, u uses) *Graph {
	g := &Graph{Package: pkg, Files: slices.Sorted(slices.Values(files))}
	for _, from := range g.Files {
		for _, to := range slices.Sorted(maps.Keys(u[from])) {
			us := slices.Clone(u[from][to])
			slices.SortFunc(us, func(a, b Use) int { return a.Line - b.Line })
			g.Edges = append(g.Edges, Edge{From: from, To: to, Uses: us})
		}
	}
	next := func(f string) []string { return slices.Sorted(maps.Keys(u[f])) }
	comp := components(g.Files, next)
	g.level = levels(g.Files, next, comp)
	g.Components = cyclic(g.Files, g.Edges, comp)
	for _, f := range g.Files {
		l := g.level[f]
		for len(g.Levels) < l {
			g.Levels = append(g.Levels, nil)
		}
		g.Levels[l-1] = append(g.Levels[l-1], f)
	}
	g.Chain = chain(g.Files, next, comp, g.level)
	return g
}
