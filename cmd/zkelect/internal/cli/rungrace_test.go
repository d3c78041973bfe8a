package cli

import (
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// TestRunGraceFollowsEachSession: run's default grace is computed from
// the session timeout negotiated at each leadership, not once from the
// first session's: a new session granted 3s after one of 9s stops its
// child within 1s, not 3s. A --grace given is kept.
func TestRunGraceFollowsEachSession(t *testing.T) {
	timeout := 9 * time.Second
	cmd := newRunCmd()
	r := &runner{flags: &runFlags{grace: maxDefaultGrace}, cmd: cmd, log: zerolog.Nop(),
		sessionTimeout: func() time.Duration { return timeout }}
	if g := r.grace(); g != 3*time.Second {
		t.Fatalf("grace with 9s sessions = %v, want 3s", g)
	}
	timeout = 3 * time.Second
	if g := r.grace(); g != time.Second {
		t.Fatalf("grace once the session is renegotiated to 3s = %v, want 1s", g)
	}
	if err := cmd.Flags().Set("grace", "2s"); err != nil {
		t.Fatal(err)
	}
	r.flags.grace = 2 * time.Second
	if g := r.grace(); g != 2*time.Second {
		t.Fatalf("grace given as 2s = %v, want 2s", g)
	}
}

// TestFollowConfigFlag: the commands that connect take
// --zk-follow-config, on by default.
func TestFollowConfigFlag(t *testing.T) {
	f := newRunCmd().Flags().Lookup("zk-follow-config")
	if f == nil || f.DefValue != "true" {
		t.Fatalf("run's --zk-follow-config: %+v; want a flag defaulting to true", f)
	}
}
