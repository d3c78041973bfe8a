package recipe_test

import (
	"testing"

	"github.com/zkelect/zkelect/recipe"
)

// TestSuccessorsListsThoseBehindTheLeader: Successors of a leader names the
// candidates queued behind it, in election order, and never itself; one
// that leaves is no longer named, and none is once the leader's znode is
// gone (the first of the others leads then).
func TestSuccessorsListsThoseBehindTheLeader(t *testing.T) {
	s := obsSession(t, zkc.ConnectString())
	raw := obsRaw(t, zkc.ConnectString())
	path := obsPath(t, raw)
	ctx := t.Context()

	cand, err := recipe.NewCandidate(s, path, recipe.WithParticipantID("leader"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cand.Close() })
	lead, err := cand.Campaign(ctx)
	if err != nil {
		t.Fatalf("Campaign: %v", err)
	}
	if ps, err := recipe.Successors(ctx, s, path, lead.Znode()); err != nil || len(ps) != 0 {
		t.Fatalf("Successors alone = %+v, %v; want none", ps, err)
	}
	second := obsJoin(t, raw, path, "_c_0f8fad5b-d9cb-469f-a165-70867728950e-latch-", "second")
	obsJoin(t, raw, path, "n_", "third")
	ps, err := recipe.Successors(ctx, s, path, lead.Znode())
	if err != nil {
		t.Fatalf("Successors: %v", err)
	}
	var ids []string
	for _, p := range ps {
		ids = append(ids, p.ID)
		if p.Leader || p.Znode == lead.Znode() {
			t.Errorf("Successors named %+v: the leader itself, or marked leader", p)
		}
	}
	if len(ids) != 2 || ids[0] != "second" || ids[1] != "third" {
		t.Fatalf("Successors = %v, want [second third] in election order", ids)
	}
	if err := raw.Delete(second, -1); err != nil {
		t.Fatal(err)
	}
	if ps, err = recipe.Successors(ctx, s, path, lead.Znode()); err != nil || len(ps) != 1 || ps[0].ID != "third" {
		t.Fatalf("Successors after second left = %+v, %v; want [third]", ps, err)
	}
	// The leader's znode deleted behind its back: third sorts first now,
	// it leads rather than waits.
	if err := raw.Delete(lead.Znode(), -1); err != nil {
		t.Fatal(err)
	}
	if ps, err = recipe.Successors(ctx, s, path, lead.Znode()); err != nil || len(ps) != 0 {
		t.Fatalf("Successors of a leader whose znode is gone = %+v, %v; want none", ps, err)
	}
}
