package cli

import "github.com/zkelect/zkelect/internal/termtext"

// This file keeps what others wrote into ZooKeeper from acting on the
// operator's terminal: a member's address or labels, a drain reason, a
// participant's id are anyone's with the group's credentials (or anyone's
// on an open root), and an escape sequence in them would clear the screen,
// set the title or forge a line of a table. Every value from ZooKeeper
// that a human-readable output prints goes through termSafe; -o json is
// escaped by its encoder.

// termSafe returns s with what would act on a terminal written as visible
// escapes (termtext.Escape: control and format characters, line
// separators, bytes that are not UTF-8); printable text is unchanged.
func termSafe(s string) string { return termtext.Escape(s) }

// termSafeAll returns termSafe of each of ss.
func termSafeAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = termSafe(s)
	}
	return out
}
