package zkelectd

import (
	"strings"

	"github.com/zkelect/zkelect/zxidfence"
)

// ExecTemplate is the --exec command of the shards daemon, run with
// /bin/sh -c after substituting {shard} (shell-quoted) and {token} (decimal).
type ExecTemplate string

// argv returns the command line for one shard's leadership.
func (t ExecTemplate) argv(shard string, token zxidfence.Token) []string {
	r := strings.NewReplacer("{shard}", ShellQuote(shard), "{token}", token.Decimal())
	return []string{"/bin/sh", "-c", r.Replace(string(t))}
}

// ShellQuote quotes s for a POSIX shell: s itself when it holds only
// letters, digits and -_.:, else in single quotes. Shard ids are znode
// names and may hold any character but '/', so they are always quoted.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
