package zkelectd

import (
	"os/exec"
	"testing"

	"github.com/zkelect/zkelect/zxidfence"
)

// TestExecTemplateHandsTheShellTheShardVerbatim runs a template's argv
// through /bin/sh for shard ids holding the shell's special characters:
// the command sees each id as one argument, unchanged, and the token in
// decimal.
func TestExecTemplateHandsTheShellTheShardVerbatim(t *testing.T) {
	tok := zxidfence.Token(1<<32 | 7)
	for _, shard := range []string{"0", "eu-1", "a b", "it's", `$(touch x)`, "`id`", "*", "a;b|c&d", `"q"\`, "-n"} {
		argv := ExecTemplate(`printf '%s|%s' {shard} {token}`).argv(shard, tok)
		out, err := exec.Command(argv[0], argv[1:]...).Output()
		if err != nil {
			t.Fatalf("shard %q: %v (argv %q)", shard, err, argv)
		}
		if want := shard + "|" + tok.Decimal(); string(out) != want {
			t.Errorf("shard %q: the command printed %q, want %q (argv %q)", shard, out, want, argv)
		}
	}
}
