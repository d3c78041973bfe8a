package cli

import (
	"strings"

	"github.com/zkelect/zkelect/zxidfence"
)

// execTemplate is the --exec command of the shards daemon, run with
// /bin/sh -c after substituting {shard} (shell-quoted) and {token} (decimal).
type execTemplate string

// argv returns the command line for one shard's leadership.
func (t execTemplate) argv(shard string, token zxidfence.Token) []string {
	r := strings.NewReplacer("{shard}", shellQuote(shard), "{token}", token.Decimal())
	return []string{"/bin/sh", "-c", r.Replace(string(t))}
}

// shellQuote quotes s for a POSIX shell. Shard ids are znode names and may
// hold any character but '/', so they are always quoted.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
