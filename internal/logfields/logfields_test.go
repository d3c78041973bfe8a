package logfields

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

// TestWithAddsOnlyMissingFields: a field the caller's logger carries is
// kept once with the caller's value; the others are added in order.
func TestWithAddsOnlyMissingFields(t *testing.T) {
	var buf bytes.Buffer
	log := zerolog.New(&buf).With().Str("member", "daemon-a").Logger()
	got := With(log, "member", "a", "root", "/apps/x", "odd")
	got.Info().Msg("hi")
	line := buf.String()
	if strings.Count(line, `"member"`) != 1 || !strings.Contains(line, `"member":"daemon-a"`) || !strings.Contains(line, `"root":"/apps/x"`) || strings.Contains(line, "odd") {
		t.Errorf("logged %s; want member once (the caller's), root added, the odd name ignored", line)
	}
}
