package assign_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/zkelect/zkelect/partition/assign"
)

// updateGolden rewrites the golden vectors from the current Assign. Use it
// only together with a new assign.Format: a vector that
// changes under the same format is a release reshuffling a fleet.
var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/assignment-v*.json from the current Assign")

// goldenFile holds the assignment vectors of one format version.
type goldenFile struct {
	Format  int            `json:"format"`
	Vectors []goldenVector `json:"vectors"`
}

// goldenVector is one input and the assignment a release computed for it.
type goldenVector struct {
	Name   string            `json:"name"`
	Input  assign.Input      `json:"input"`
	Target map[string]string `json:"target"`
}

func goldenPath(format int) string {
	return filepath.Join("testdata", fmt.Sprintf("assignment-v%d.json", format))
}

// TestAssignGoldenVectors pins the assignment: for every stored input, Assign
// returns exactly the targets recorded when the vectors were written, so a
// rolling upgrade to this release reshuffles no shard.
func TestAssignGoldenVectors(t *testing.T) {
	p := goldenPath(assign.Format)
	if *updateGolden {
		writeGolden(t, p, goldenInputs())
	}
	g := readGolden(t)
	if g.Format != assign.Format || len(g.Vectors) == 0 {
		t.Fatalf("%s: format %d with %d vectors, want format %d", p, g.Format, len(g.Vectors), assign.Format)
	}
	for _, v := range g.Vectors {
		got := assign.Assign(v.Input)
		if !maps.Equal(got, v.Target) {
			t.Errorf("vector %q: assignment differs from the recorded one in %d of %d shards",
				v.Name, moves(v.Target, got), len(v.Target))
		}
	}
}

// readGolden reads the golden vectors of the current format.
func readGolden(t *testing.T) goldenFile {
	t.Helper()
	p := goldenPath(assign.Format)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("read golden vectors: %v", err)
	}
	var g goldenFile
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatalf("decode %s: %v", p, err)
	}
	return g
}

func writeGolden(t *testing.T, p string, inputs []goldenVector) {
	t.Helper()
	for i := range inputs {
		inputs[i].Target = assign.Assign(inputs[i].Input)
	}
	data, err := json.MarshalIndent(goldenFile{Format: assign.Format, Vectors: inputs}, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// goldenInputs builds the stored inputs: cold starts, steady states with
// joins and leaves, reservations, excess and tokens, from a fixed seed.
func goldenInputs() []goldenVector {
	rng := rand.New(rand.NewPCG(13, 2026))
	var out []goldenVector
	add := func(name string, in assign.Input) { out = append(out, goldenVector{Name: name, Input: in}) }
	add("cold start, 64 shards over 3 members", assign.Input{Shards: shardRange(0, 64), Members: members(3)})
	add("cold start, 10 named shards over 4 members", assign.Input{
		Shards: []string{"eu", "us", "ap", "sa", "af", "oc", "an", "me", "ca", "mx"}, Members: []string{"node-a", "node-b", "node-c", "node-d"}})
	add("fewer shards than members", assign.Input{Shards: shardRange(0, 3), Members: members(7)})
	for _, c := range []struct{ shards, members int }{{100, 3}, {256, 5}, {300, 7}, {97, 4}} {
		in := randomInput(rng, c.shards, c.members)
		add(fmt.Sprintf("random holders, %d shards over %d members", c.shards, c.members), in)
	}
	shards := shardRange(0, 120)
	cur, tok := steadyState(shards, members(4))
	add("member joins a steady state", assign.Input{Shards: shards, Members: members(5), Current: cur, Tokens: tok})
	add("member leaves a steady state", assign.Input{Shards: shards, Members: members(3), Current: cur, Tokens: tok})
	reserved := maps.Clone(cur)
	for s, m := range reserved {
		if m == "m1" {
			reserved[s] = "m1-gone"
		}
	}
	add("reservation of an absent member", assign.Input{Shards: shards, Members: slices.DeleteFunc(members(4), func(m string) bool { return m == "m1" }), Current: reserved, Tokens: tok})
	over := map[string]string{}
	for _, s := range shards {
		over[s] = "m0"
	}
	add("one member holds everything", assign.Input{Shards: shards, Members: members(4), Current: over, Tokens: tok})
	add("weights 1:2:3:1 over a steady state", assign.Input{Shards: shards, Members: members(4), Current: cur, Tokens: tok,
		Weights: map[string]int{"m0": 1, "m1": 2, "m2": 3, "m3": 1}})
	add("a drained member", assign.Input{Shards: shards, Members: members(4), Current: cur, Tokens: tok, Drained: []string{"m2"}})
	add("frozen through a join and a leave", assign.Input{Shards: shards, Members: []string{"m0", "m2", "m3", "m4"}, Current: cur, Tokens: tok, Frozen: true})
	add("pins, one to a drained member", assign.Input{Shards: shards, Members: members(4), Current: cur, Tokens: tok,
		Pins: map[string]string{"7": "m3", "8": "m3", "9": "m0", "10": "m1"}, Drained: []string{"m1"}})
	return out
}
