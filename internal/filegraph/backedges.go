package filegraph

import "slices"

// weights maps a file to the files it uses (or that use it) to the
// number of uses.
type weights map[string]map[string]int

// add counts n uses between a and b.
func (w weights) add(a, b string, n int) {
	if w[a] == nil {
		w[a] = map[string]int{}
	}
	w[a][b] += n
}

// toward returns the uses between f and the files of left.
func (w weights) toward(f string, left []string) int {
	n := 0
	for g, k := range w[f] {
		if slices.Contains(left, g) {
			n += k
		}
	}
	return n
}

// breakOrder orders a component's files, users before the files they
// use, so that the edges running back up (from a file to one before it)
// carry few uses: the greedy order of Eades, Lin and Smyth for a small
// feedback arc set, an edge weighing as many as its uses, then improved
// by moving one file at a time while that lowers the uses running back.
func breakOrder(files []string, edges []Edge) []string {
	return improve(greedyOrder(files, edges), edges)
}

// greedyOrder is the order of Eades, Lin and Smyth: see placeNext.
func greedyOrder(files []string, edges []Edge) []string {
	out, in := weights{}, weights{}
	for _, e := range edges {
		out.add(e.From, e.To, len(e.Uses))
		in.add(e.To, e.From, len(e.Uses))
	}
	left := slices.Clone(files)
	var top, bottom []string
	for len(left) > 0 {
		f, toTop := placeNext(left, out, in)
		left = slices.DeleteFunc(left, func(g string) bool { return g == f })
		if toTop {
			top = append(top, f)
		} else {
			bottom = append([]string{f}, bottom...)
		}
	}
	return append(top, bottom...)
}

// placeNext picks the file of left to place next: a file that uses none of
// left goes next from the bottom; else a file none of left uses goes
// next from the top; else the file whose uses of left most outweigh
// left's uses of it goes next from the top. Ties go to the first file.
func placeNext(left []string, out, in weights) (file string, toTop bool) {
	for _, f := range left {
		if out.toward(f, left) == 0 {
			return f, false
		}
	}
	for _, f := range left {
		if in.toward(f, left) == 0 {
			return f, true
		}
	}
	best, most := "", 0
	for _, f := range left {
		if d := out.toward(f, left) - in.toward(f, left); best == "" || d > most {
			best, most = f, d
		}
	}
	return best, true
}

// improve moves one file of order at a time to the place that most
// lowers the uses running back up, until no move lowers them.
func improve(order []string, edges []Edge) []string {
	cost := backWeight(order, edges)
	for better := true; better; {
		better = false
		for _, f := range slices.Clone(order) {
			rest := slices.DeleteFunc(slices.Clone(order), func(g string) bool { return g == f })
			for i := range len(rest) + 1 {
				o := slices.Insert(slices.Clone(rest), i, f)
				if c := backWeight(o, edges); c < cost {
					order, cost, better = o, c, true
				}
			}
		}
	}
	return order
}

// backWeight returns the uses on the edges that run back up order.
func backWeight(order []string, edges []Edge) int {
	n := 0
	for _, e := range backEdges(order, edges) {
		n += len(e.Uses)
	}
	return n
}

// backEdges returns the edges that run back up order: from a file to one
// before it.
func backEdges(order []string, edges []Edge) []Edge {
	var back []Edge
	for _, e := range edges {
		if slices.Index(order, e.From) > slices.Index(order, e.To) {
			back = append(back, e)
		}
	}
	return back
}
