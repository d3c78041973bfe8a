package testenv_test

import (
	"slices"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/testenv"
)

// TestEphemeralsListsEachSessionsZnodes: Ephemerals reports, per session,
// the ephemeral znodes the server holds for it; with JuteMaxBuffer 64 KiB
// the server refuses a 100 KiB znode.
func TestEphemeralsListsEachSessionsZnodes(t *testing.T) {
	c := testenv.New(t, testenv.Options{JuteMaxBuffer: 64 << 10})
	a, b := connect(t, c.ConnectString(), 2e9), connect(t, c.ConnectString(), 2e9)
	a.mustCreate(t, "/a1", zk.FlagEphemeral)
	a.mustCreate(t, "/a2", zk.FlagEphemeral)
	b.mustCreate(t, "/b1", zk.FlagEphemeral)
	b.mustCreate(t, "/persistent", 0)
	got, err := c.Ephemerals(t.Context(), 0)
	if err != nil {
		t.Fatalf("Ephemerals: %v", err)
	}
	if ps := got[a.SessionID()]; !slices.Equal(ps, []string{"/a1", "/a2"}) {
		t.Errorf("session a owns %q, want /a1 /a2 (all: %v)", ps, got)
	}
	if ps := got[b.SessionID()]; !slices.Equal(ps, []string{"/b1"}) {
		t.Errorf("session b owns %q, want /b1 (all: %v)", ps, got)
	}
	if _, err := a.Create("/big", make([]byte, 100<<10), 0, zk.WorldACL(zk.PermAll)); err == nil {
		t.Error("a 100 KiB znode was created with jute.maxbuffer 64 KiB")
	}
	if err := (testenv.Options{JuteMaxBuffer: 100}).Validate(); err == nil {
		t.Error("Options{JuteMaxBuffer: 100}.Validate() = nil, want an error")
	}
}
