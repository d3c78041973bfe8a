package cli

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
		"unknown scenario":         {[]string{"bench", "--scenarios", "raw,nope"}, `unknown scenario "nope"`},
		"zero shards":              {[]string{"bench", "--shards", "0"}, "invalid --shards 0: each shard count must be 1..1000000"},
		"shard ids without a verb": {[]string{"bench", "--shard-ids", "shard"}, "invalid --shard-ids shard: want exactly one integer verb"},
		"negative step limit":      {[]string{"bench", "--step-limit", "-1s"}, "invalid --step-limit -1s: negative"},
		"negative timeout":         {[]string{"bench", "--session-timeout", "-1s"}, "invalid --session-timeout -1s: negative"},
		"zero in-flight":           {[]string{"bench", "--in-flight", "0"}, "invalid --in-flight 0: must be at least 1"},
		"zero members":             {[]string{"bench", "--members", "0"}, "invalid --members 0: must be at least 1"},
		"negative trials":          {[]string{"bench", "--crash-trials", "-1"}, "invalid --crash-trials -1"},
		"zero timeout":             {[]string{"bench", "--session-timeout", "0s"}, "invalid --session-timeout 0s"},
		"negative peer trials":     {[]string{"bench", "--peer-trials", "-2"}, "invalid --peer-trials -2: negative"},
		"zero peer kill trials":    {[]string{"bench", "--peer-kill-trials", "0"}, "invalid --peer-kill-trials 0: must be at least 1"},
		"out in a missing directory": {[]string{"bench", "--out", "/nonexistent/x.json"},
			"invalid --out /nonexistent/x.json: cannot write there"},
		"out is a directory": {[]string{"bench", "--out", t.TempDir()}, "is a directory"},
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
