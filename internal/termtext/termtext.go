// Package termtext is the one rule for text that others wrote and a human
// reads: a member's address and labels, a drain reason, a participant's
// id. Such text is anyone's with a root's credentials, and some runes in it
// act on a terminal or a log viewer instead of being shown: control
// characters (ESC starts the sequences that clear a screen or set a
// window's title, a newline forges a line of a table), format characters
// (the bidirectional overrides reorder what is shown: "abc\u202etxt.exe"),
// the line and paragraph separators, and bytes that are not UTF-8.
//
// Check refuses such text at the boundary where it is written (a member
// validating its own record); Escape shows it visibly where it is printed.
// Both follow the same rule, so what passes Check is what Escape leaves
// unchanged.
package termtext

import (
	"fmt"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// Acts reports whether r is a rune that acts on a terminal rather than
// being shown: a control (Unicode category Cc), a format character (Cf), or
// a line or paragraph separator (Zl, Zp). A byte that is not UTF-8 is not
// a rune: Check and Escape find those themselves (utf8.RuneError, U+FFFD,
// is a symbol, and Acts reports false for it).
func Acts(r rune) bool {
	return unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)
}

// Error is Check's error: the first rune that would act, or the first byte
// that is not UTF-8, and its byte offset.
type Error struct {
	Offset  int  // byte offset in the checked text
	Rune    rune // the rune; utf8.RuneError for an invalid byte
	Invalid bool // the byte at Offset is not UTF-8
}

// Error names the rune as U+XXXX, or the invalid byte.
func (e *Error) Error() string {
	if e.Invalid {
		return fmt.Sprintf("is not valid UTF-8 at byte %d", e.Offset)
	}
	return fmt.Sprintf("holds the control or format character %U at byte %d", e.Rune, e.Offset)
}

// Check returns nil when s is UTF-8 with no rune that acts (see Acts),
// and an *Error naming the first one otherwise.
func Check(s string) error {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			return &Error{Offset: i, Rune: r, Invalid: true}
		}
		if Acts(r) {
			return &Error{Offset: i, Rune: r}
		}
		i += n
	}
	return nil
}

// Escape returns s unchanged when Check passes it; otherwise a copy in
// which every rune that acts is written as its Go escape, visibly (ESC as
// \x1b, BEL \a, newline \n, tab \t, DEL \x7f, C1 controls \u009b, the
// override \u202e), and every byte that is not UTF-8 as \xNN. The rest,
// backslashes and quotes among it, is copied as is.
func Escape(s string) string {
	if Check(s) == nil {
		return s
	}
	b := make([]byte, 0, len(s)+16)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b = append(b, `\x`...)
			b = append(b, strconv.FormatUint(uint64(s[i])|0x100, 16)[1:]...)
		case Acts(r):
			q := strconv.QuoteRuneToASCII(r)
			b = append(b, q[1:len(q)-1]...)
		default:
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return string(b)
}
