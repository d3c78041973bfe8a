package filegraph

import (
	"slices"
	"testing"
)

// edge returns an edge of n uses of one identifier.
func edge(from, to string, n int) Edge {
	return Edge{From: from, To: to, Uses: slices.Repeat([]Use{{Name: to + "Name", Line: 1}}, n)}
}

// TestBreakOrderMovesTheGreedyChoiceToTheLightestBackEdges: in the shape
// a back reference gives partition (a level-1 file b.go calling run.go,
// which sits over loop.go, which uses manager.go a hundred times), the
// greedy order puts loop.go first and leaves run.go -> loop.go running
// back; moving run.go to the top leaves only b.go's own two uses back.
func TestBreakOrderMovesTheGreedyChoiceToTheLightestBackEdges(t *testing.T) {
	files := []string{"b.go", "loop.go", "manager.go", "run.go"}
	edges := []Edge{
		edge("b.go", "manager.go", 1), edge("b.go", "run.go", 1),
		edge("loop.go", "manager.go", 100),
		edge("manager.go", "b.go", 5),
		edge("run.go", "loop.go", 2), edge("run.go", "manager.go", 10),
	}
	if g := greedyOrder(files, edges); backWeight(g, edges) != 4 {
		t.Fatalf("greedy order %v leaves %d uses back, want the 4 this test is about", g, backWeight(g, edges))
	}
	order := breakOrder(files, edges)
	if want := []string{"run.go", "loop.go", "manager.go", "b.go"}; !slices.Equal(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
	var back []string
	for _, e := range backEdges(order, edges) {
		back = append(back, e.From+" -> "+e.To)
	}
	if want := []string{"b.go -> manager.go", "b.go -> run.go"}; !slices.Equal(back, want) {
		t.Errorf("back edges %v, want %v", back, want)
	}
}
