package termtext

import (
	"errors"
	"testing"
)

// TestEscapeShowsWhatWouldActOnATerminal: control and format characters,
// line separators and invalid bytes come out as visible escapes; text of
// any script, spaces and punctuation come out unchanged.
func TestEscapeShowsWhatWouldActOnATerminal(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"10.0.0.1:8080", "10.0.0.1:8080"},
		{"zone=eu-west 1", "zone=eu-west 1"},
		{"Zürich 東京", "Zürich 東京"},
		{"no\u00a0break", "no\u00a0break"},
		{"\x1b[2J\x1b]0;pwned\a", `\x1b[2J\x1b]0;pwned\a`},
		{"ok\n0  evil  fake", `ok\n0  evil  fake`},
		{"a\tb\rc\x7f", `a\tb\rc\x7f`},
		{"\u009b2J", `\u009b2J`},
		{"abc\u202etxt.exe", `abc\u202etxt.exe`},
		{"line\u2028sep\u2029para", `line\u2028sep\u2029para`},
		{"bad\xffutf8", `bad\xffutf8`},
		{`back\slash "q"`, `back\slash "q"`},
	} {
		if got := Escape(c.in); got != c.want {
			t.Errorf("Escape(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestCheckAgreesWithEscape: Check passes exactly the text Escape leaves
// unchanged, and its error names the first offending rune and its offset.
func TestCheckAgreesWithEscape(t *testing.T) {
	for _, c := range []struct {
		in      string
		offset  int
		invalid bool
	}{
		{"plain", -1, false},
		{"Zürich", -1, false},
		{"ab\x1bc", 2, false},
		{"é\u202e", 2, false},
		{"x\u2028", 1, false},
		{"ok\xff", 2, true},
	} {
		err := Check(c.in)
		if (err == nil) != (Escape(c.in) == c.in) {
			t.Errorf("Check(%q) = %v but Escape gives %q: the two rules disagree", c.in, err, Escape(c.in))
		}
		if c.offset < 0 {
			if err != nil {
				t.Errorf("Check(%q) = %v, want nil", c.in, err)
			}
			continue
		}
		var e *Error
		if !errors.As(err, &e) || e.Offset != c.offset || e.Invalid != c.invalid {
			t.Errorf("Check(%q) = %#v, want an *Error at byte %d (invalid %v)", c.in, err, c.offset, c.invalid)
		}
	}
}

// TestActsLeavesReplacementCharacterToCheck: U+FFFD written as valid
// UTF-8 is a symbol that prints (Acts says no, Escape keeps it), while an
// invalid byte, which decodes to the same rune, is Check's and Escape's to
// find: Acts alone is not the whole rule.
func TestActsLeavesReplacementCharacterToCheck(t *testing.T) {
	if Acts('\uFFFD') {
		t.Error("Acts(U+FFFD) = true, want false: a valid U+FFFD prints")
	}
	if got := Escape("a\uFFFDb"); got != "a\uFFFDb" {
		t.Errorf("Escape(valid U+FFFD) = %q, want it unchanged", got)
	}
	if got := Escape("a\xffb"); got != `a\xffb` {
		t.Errorf(`Escape("a\xffb") = %q, want the byte escaped`, got)
	}
}
