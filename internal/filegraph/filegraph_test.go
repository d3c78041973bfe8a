package filegraph_test

import (
	"context"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zkelect/zkelect/internal/filegraph"
)

// measure measures pattern, skipping t when the go command is not on PATH.
func measure(t *testing.T, pattern string) (*filegraph.Graph, error) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skipf("the go command is not on PATH (%v): filegraph runs go list", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return filegraph.Measure(ctx, pattern)
}

// names returns the identifiers of uses, sorted, without repeats.
func names(uses []filegraph.Use) []string {
	var out []string
	for _, u := range uses {
		out = append(out, u.Name)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// TestMeasureFindsTheFixturesCycleAndChain: in testdata/fixture, a.go
// and b.go use each other and sit on level 4 over the chain top.go ->
// mid.go -> base.go; doc.go declares nothing used and sits on level 1;
// the test file is not measured; a field reached through an embedded
// one uses the embedded field's file too.
func TestMeasureFindsTheFixturesCycleAndChain(t *testing.T) {
	g, err := measure(t, "./testdata/fixture")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", g)
	if want := []string{"a.go", "b.go", "base.go", "doc.go", "mid.go", "top.go"}; !slices.Equal(g.Files, want) {
		t.Fatalf("files %v, want %v", g.Files, want)
	}
	if len(g.Components) != 1 || !slices.Equal(g.Components[0].Files, []string{"a.go", "b.go"}) {
		t.Fatalf("components %+v, want one of a.go and b.go", g.Components)
	}
	edges := map[string][]string{}
	for _, e := range g.Components[0].Edges {
		edges[e.From+">"+e.To] = names(e.Uses)
	}
	wantCycle := map[string][]string{"a.go>b.go": {"B", "helper", "name"}, "b.go>a.go": {"A", "Size"}}
	if len(edges) != len(wantCycle) {
		t.Fatalf("component's edges %v, want %v", edges, wantCycle)
	}
	for k, w := range wantCycle {
		if !slices.Equal(edges[k], w) {
			t.Errorf("component's edge %s uses %v, want %v", k, edges[k], w)
		}
	}
	if c := g.Components[0]; !slices.Equal(c.Order, []string{"a.go", "b.go"}) ||
		len(c.BackEdges) != 1 || c.BackEdges[0].From != "b.go" || c.BackEdges[0].To != "a.go" {
		t.Errorf("order %v, back edges %v; want a.go first and the lighter b.go -> a.go back", c.Order, c.BackEdges)
	}
	wantLevels := [][]string{{"base.go", "doc.go"}, {"mid.go"}, {"top.go"}, {"a.go", "b.go"}}
	if !slices.EqualFunc(g.Levels, wantLevels, slices.Equal) {
		t.Errorf("levels %v, want %v", g.Levels, wantLevels)
	}
	if l := g.Level("b.go"); l != 4 {
		t.Errorf("b.go on level %d, want 4", l)
	}
	if want := []string{"a.go", "b.go", "top.go", "mid.go", "base.go"}; !slices.Equal(g.Chain, want) {
		t.Errorf("chain %v, want %v", g.Chain, want)
	}
	for _, e := range g.Edges {
		if e.From == "top.go" && e.To == "mid.go" && !slices.Contains(names(e.Uses), "inner") {
			t.Errorf("top.go -> mid.go uses %v, want the embedded field inner among them", names(e.Uses))
		}
		if e.To == "fixture_test.go" || e.From == "fixture_test.go" {
			t.Errorf("edge %v of a test file", e)
		}
	}
	if s := g.String(); !strings.Contains(s, "    b.go -> a.go (2): A@") || !strings.Contains(s, "longest chain: a.go -> b.go -> top.go") {
		t.Errorf("report lacks the back edge's identifiers or the chain:\n%s", s)
	}
}

// TestMeasureRefusesAMissingPackage: a pattern that names no package is
// an error naming the pattern, not an empty graph.
func TestMeasureRefusesAMissingPackage(t *testing.T) {
	g, err := measure(t, "./testdata/nothing")
	if err == nil || !strings.Contains(err.Error(), "./testdata/nothing") {
		t.Fatalf("Measure of a missing package = %v, %v; want an error naming it", g, err)
	}
}

// TestMeasureRefusesSeveralPackages: a pattern naming two packages is
// an error; a graph is of one package.
func TestMeasureRefusesSeveralPackages(t *testing.T) {
	g, err := measure(t, "github.com/zkelect/zkelect/internal/...")
	if err == nil || !strings.Contains(err.Error(), "want one") {
		t.Fatalf("Measure of several packages = %v, %v; want an error", g, err)
	}
}
