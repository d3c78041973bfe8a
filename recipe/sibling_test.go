package recipe_test

import (
	"testing"
	"time"

	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/testenv"
)

// TestSiblingIsAnIndependentSession: a sibling has its own session id and
// the same negotiated timeout; expiring it leaves the original's session,
// and closing the original leaves the sibling (its replacement session
// after the expiry) serving.
func TestSiblingIsAnIndependentSession(t *testing.T) {
	s := session(t, zkc.ConnectString(), recipe.WithSessionTimeout(1500*time.Millisecond))
	sib, err := s.Sibling(t.Context())
	if err != nil {
		t.Fatalf("Sibling: %v", err)
	}
	t.Cleanup(func() { _ = sib.Close() })
	if sib.ID() == 0 || sib.ID() == s.ID() {
		t.Fatalf("sibling session 0x%x, original 0x%x: want another session", sib.ID(), s.ID())
	}
	if sib.Timeout() != s.Timeout() {
		t.Errorf("sibling's timeout %v, original's %v", sib.Timeout(), s.Timeout())
	}
	id := s.ID()
	if err := testenv.ExpireConn(t.Context(), zkc.Addrs(), sib.Conn()); err != nil {
		t.Fatalf("expire the sibling: %v", err)
	}
	if _, err := s.Conn().Sync("/"); err != nil || s.ID() != id {
		t.Errorf("original after the sibling's expiry: session 0x%x (was 0x%x), sync: %v", s.ID(), id, err)
	}
	_ = s.Close()
	lead(t, candidate(t, sib, electionPath(t))) // the sibling's replacement session serves
}
