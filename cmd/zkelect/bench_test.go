package main

import (
	"strings"
	"testing"
	"time"
)

// TestBenchBadInput checks that zkelect bench refuses bad sizes and
// scenario names at once, before starting any server.
func TestBenchBadInput(t *testing.T) {
	cases := map[string]struct {
		args []string
		want string
	}{
		"unknown scenario": {[]string{"bench", "--scenarios", "raw,nope"}, `unknown scenario "nope"`},
		"zero shards":      {[]string{"bench", "--shards", "0"}, "shard count 0, want 1..100000"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := startProc(t, name, tc.args)
			if code := p.wait(10 * time.Second); code != 1 {
				t.Errorf("exit status %d, want 1; stderr: %s", code, p.err.String())
			}
			if !strings.Contains(p.err.String(), tc.want) {
				t.Errorf("stderr %q does not contain %q", p.err.String(), tc.want)
			}
		})
	}
}
