package cli

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestDemo runs `zkelect demo` (what `make demo` runs) and checks its story:
// a balanced table, a failover, and a stale write really refused by the
// fenced store.
func TestDemo(t *testing.T) {
	start := time.Now()
	p := startProc(t, "demo", []string{"demo"})
	if code := p.wait(3 * time.Minute); code != 0 {
		t.Fatalf("demo exited %d:\n%s\n%s", code, p.out.String(), p.err.String())
	}
	took := time.Since(start)
	out := p.out.String()
	t.Logf("demo took %s:\n%s", took, out)
	for _, want := range []string{
		"balanced: every shard has a leader",
		"REJECTED by the store: b's late write to shard",
		"(409 Conflict)",
		"even split between a and b",
		"rejoined with new tokens; balanced again:",
		"stale writes rejected",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
	// Balanced means nobody above ceil(64/3) = 22, so 22+22+20 is balanced too.
	for _, re := range []string{`leaders: a=2[0-2] b=2[0-2] c=2[0-2]\n`, `c's session expired and its 2[0-2] shards failed over`} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("demo output does not match %s", re)
		}
	}
	if !regexp.MustCompile(`and its 3[0-3] workers: b leads 3[0-3] shards`).MatchString(out) {
		t.Errorf("demo output does not count one worker per shard b leads")
	}
	if n := strings.Count(out, "\n"); n > 60 {
		t.Errorf("demo printed %d lines; want a few dozen", n)
	}
	// Under a minute on an idle machine (about 20 s here); the bound leaves
	// room for the rest of the test suite running beside it.
	if took > 2*time.Minute {
		t.Errorf("demo took %s; want well under two minutes", took)
	}
}
