package cli

import "testing"

// TestTermSafeEscapesWhatATerminalWouldAct: control and format characters
// and invalid bytes come out as visible escapes; printable text (any
// script) is unchanged.
func TestTermSafeEscapesWhatATerminalWouldAct(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"10.0.0.1:8080", "10.0.0.1:8080"},
		{"zone=eu-west 1", "zone=eu-west 1"},
		{"Zürich 東京", "Zürich 東京"},
		{"\x1b[2J\x1b]0;pwned\a", `\x1b[2J\x1b]0;pwned\a`},
		{"ok\n0  evil  fake", `ok\n0  evil  fake`},
		{"a\tb\rc\x7f", `a\tb\rc\x7f`},
		{"\u009b2J", `\u009b2J`},
		{"abc\u202etxt.exe", `abc\u202etxt.exe`},
		{"bad\xffutf8", `bad\xffutf8`},
		{`back\slash "q"`, `back\slash "q"`},
	} {
		if got := termSafe(c.in); got != c.want {
			t.Errorf("termSafe(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
