package filegraph

import "slices"

// components numbers the strongly connected components of files under
// next (Tarjan's algorithm): two files get the same number when each
// reaches the other.
func components(files []string, next func(string) []string) map[string]int {
	index, low, comp := map[string]int{}, map[string]int{}, map[string]int{}
	onStack := map[string]bool{}
	var stack []string
	n, ncomp := 0, 0
	var strong func(v string)
	strong = func(v string) {
		index[v], low[v] = n, n
		n++
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range next(v) {
			if _, seen := index[w]; !seen {
				strong(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] != index[v] {
			return
		}
		for {
			w := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			onStack[w] = false
			comp[w] = ncomp
			if w == v {
				break
			}
		}
		ncomp++
	}
	for _, f := range files {
		if _, seen := index[f]; !seen {
			strong(f)
		}
	}
	return comp
}

// levels returns each file's level: 1 plus the highest level of the
// files its component uses outside itself.
func levels(files []string, next func(string) []string, comp map[string]int) map[string]int {
	members := map[int][]string{}
	for _, f := range files {
		members[comp[f]] = append(members[comp[f]], f)
	}
	of := map[int]int{} // component -> level
	var level func(c int) int
	level = func(c int) int {
		if l, ok := of[c]; ok {
			return l
		}
		best := 0
		for _, f := range members[c] {
			for _, to := range next(f) {
				if d := comp[to]; d != c {
					best = max(best, level(d))
				}
			}
		}
		of[c] = best + 1
		return best + 1
	}
	out := map[string]int{}
	for _, f := range files {
		out[f] = level(comp[f])
	}
	return out
}

// cyclic returns the components of more than one file, each with the
// edges between its files and those of them that run back up.
func cyclic(files []string, edges []Edge, comp map[string]int) []Component {
	byComp := map[int]*Component{}
	var out []*Component
	for _, f := range files { // sorted: a component's first file comes first
		c := byComp[comp[f]]
		if c == nil {
			c = &Component{}
			byComp[comp[f]] = c
			out = append(out, c)
		}
		c.Files = append(c.Files, f)
	}
	for _, e := range edges {
		if comp[e.From] == comp[e.To] {
			c := byComp[comp[e.From]]
			c.Edges = append(c.Edges, e)
		}
	}
	var multi []Component
	for _, c := range out {
		if len(c.Files) > 1 {
			c.Order = breakOrder(c.Files, c.Edges)
			c.BackEdges = backEdges(c.Order, c.Edges)
			multi = append(multi, *c)
		}
	}
	return multi
}

// chain returns one longest chain: from the first file on the top level,
// each step to a file one level down that the current file, or another
// file of its component, uses.
func chain(files []string, next func(string) []string, comp map[string]int, level map[string]int) []string {
	if len(files) == 0 {
		return nil
	}
	cur := files[0]
	for _, f := range files {
		if level[f] > level[cur] {
			cur = f
		}
	}
	out := []string{cur}
	for level[cur] > 1 {
		from, to := stepDown(files, next, comp, level, cur)
		if to == "" { // cannot happen: levels gives every such file a step
			break
		}
		if from != cur {
			out = append(out, from)
		}
		out = append(out, to)
		cur = to
	}
	return out
}

// stepDown returns a file of cur's component, cur itself if it can, and
// a file one level down it uses; "", "" if none does, which levels rules
// out for a file above level 1.
func stepDown(files []string, next func(string) []string, comp map[string]int, level map[string]int, cur string) (from, to string) {
	candidates := append([]string{cur}, slices.DeleteFunc(slices.Clone(files), func(f string) bool {
		return f == cur || comp[f] != comp[cur]
	})...)
	for _, f := range candidates {
		for _, t := range next(f) {
			if comp[t] != comp[cur] && level[t] == level[cur]-1 {
				return f, t
			}
		}
	}
	return "", ""
}
