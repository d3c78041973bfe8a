package filegraph

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// String reports g for a reader who has to move code: the file count;
// each component of more than one file, with an order of its files and
// the identifiers on each edge running back up it (what to move to break
// the cycle); the level count, the files on each level from the top, and
// the longest chain.
func (g *Graph) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d files, %d levels, cycles between files: %d\n",
		g.Package, len(g.Files), len(g.Levels), len(g.Components))
	for _, c := range g.Components {
		fmt.Fprintf(&b, "cycle of %d files: %s\n", len(c.Files), strings.Join(c.Files, " "))
		fmt.Fprintf(&b, "  in the order %s, %d of its %d edges run back up; move their identifiers:\n",
			strings.Join(c.Order, " "), len(c.BackEdges), len(c.Edges))
		for _, e := range c.BackEdges {
			fmt.Fprintf(&b, "    %s\n", e)
		}
	}
	for l := len(g.Levels); l >= 1; l-- {
		fmt.Fprintf(&b, "level %2d: %s\n", l, strings.Join(g.Levels[l-1], " "))
	}
	fmt.Fprintf(&b, "longest chain: %s\n", strings.Join(g.Chain, " -> "))
	return b.String()
}

// String reports e as "from -> to (uses): name@line, ...", one entry per
// identifier with the lines that use it.
func (e Edge) String() string {
	lines := map[string][]string{}
	for _, u := range e.Uses {
		lines[u.Name] = append(lines[u.Name], fmt.Sprint(u.Line))
	}
	names := slices.Sorted(maps.Keys(lines))
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + "@" + strings.Join(lines[n], ",")
	}
	return fmt.Sprintf("%s -> %s (%d): %s", e.From, e.To, len(e.Uses), strings.Join(parts, " "))
}
