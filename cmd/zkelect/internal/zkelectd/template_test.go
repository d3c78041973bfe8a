package zkelectd

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/zkelect/zkelect/zxidfence"
)

// runTemplate runs tmpl's argv for shard through /bin/sh in dir, with the
// environment runChild gives a child, and returns what it printed.
func runTemplate(t *testing.T, dir, tmpl, shard string, tok zxidfence.Token) string {
	t.Helper()
	argv := ExecTemplate(tmpl).argv(shard, tok)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), EnvShard+"="+shard)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("template %s, shard %q: %v (argv %q)", tmpl, shard, err, argv)
	}
	return string(out)
}

// TestExecTemplateHandsTheShellTheShardVerbatim runs a template's argv
// through /bin/sh for shard ids holding the shell's special characters,
// with {shard} bare, in double quotes, in single quotes and in a command
// substitution: the command sees each id as one argument, unchanged, and
// the token in decimal.
func TestExecTemplateHandsTheShellTheShardVerbatim(t *testing.T) {
	tok := zxidfence.Token(1<<32 | 7)
	templates := []string{
		`printf '%s|%s' {shard} {token}`,
		`printf '%s|%s' "{shard}" {token}`,
		`printf '%s|%s' '{shard}' {token}`,
		`printf '%s|%s' "x{shard}" {token} | cut -c2-`,
		`printf '%s|%s' "$(printf '%s' {shard})" {token}`,
		`printf '%s|%s' "$(printf '%s' "{shard}")" {token}`,
		`printf "%s|%s" \"{shard} {token} | cut -c2-`,
	}
	for _, tmpl := range templates {
		for _, shard := range []string{"0", "eu-1", "a b", "it's", `$(touch x)`, "`id`", "*", "a;b|c&d", `"q"\`, "-n", "a  b"} {
			got := runTemplate(t, t.TempDir(), tmpl, shard, tok)
			if want := shard + "|" + tok.Decimal(); got != want && got != want+"\n" {
				t.Errorf("template %s, shard %q: the command printed %q, want %q", tmpl, shard, got, want)
			}
		}
	}
}

// TestExecTemplateShardNeverRuns gives shard ids that are shell programs
// to templates that quote {shard} every way: none runs (the file they
// would create stays absent).
func TestExecTemplateShardNeverRuns(t *testing.T) {
	for _, tmpl := range []string{`echo {shard}`, `echo "{shard}"`, `echo '{shard}'`, `echo "--id={shard}"`, "echo `echo {shard}`"} {
		for _, shard := range []string{`$(touch pwned)`, "`touch pwned`", `'$(touch pwned)'`, `"$(touch pwned)"`, `';touch pwned;'`, `";touch pwned;"`} {
			dir := t.TempDir()
			runTemplate(t, dir, tmpl, shard, 1)
			if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
				t.Errorf("template %s ran shard id %q as a command", tmpl, shard)
			}
		}
	}
}
