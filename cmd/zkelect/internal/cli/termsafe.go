package cli

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file keeps what others wrote into ZooKeeper from acting on the
// operator's terminal: a member's address or labels, a drain reason, a
// participant's id are anyone's with the group's credentials (or anyone's
// on an open root), and an escape sequence in them would clear the screen,
// set the title or forge a line of a table. Every value from ZooKeeper
// that a human-readable output prints goes through termSafe; -o json is
// escaped by its encoder.

// termSafe returns s unchanged when every rune in it is printable
// (strconv.IsPrint: letters, marks, numbers, punctuation, symbols and the
// ASCII space); otherwise a copy in which every other rune is written as
// its Go escape, visibly: control characters (ESC as \x1b, BEL \a,
// newline \n, tab \t, DEL, C1 controls), format characters such as the
// bidirectional overrides (\u202e), and bytes that are not UTF-8 (\xff).
func termSafe(s string) string {
	if isTermSafe(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(s[i])|0x100, 16)[1:])
		case strconv.IsPrint(r):
			b.WriteString(s[i : i+n])
		default:
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		}
		i += n
	}
	return b.String()
}

// isTermSafe reports whether s is UTF-8 of printable runes only.
func isTermSafe(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || !strconv.IsPrint(r) {
			return false
		}
	}
	return true
}

// termSafeAll returns termSafe of each of ss.
func termSafeAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = termSafe(s)
	}
	return out
}
