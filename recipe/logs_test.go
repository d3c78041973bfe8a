package recipe_test

import (
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/zkelect/zkelect/recipe"
)

// TestSessionReadsLogNoPerReplyNoise: the replies to the session's own
// requests carry xids go-zookeeper does not know, which it logs one line
// each for; the session drops those lines, even at debug level.
func TestSessionReadsLogNoPerReplyNoise(t *testing.T) {
	var out syncBuffer
	s := session(t, zkc.ConnectString(), recipe.WithLogger(zerolog.New(&out).Level(zerolog.DebugLevel)))
	for range 20 {
		if _, _, err := s.Children(t.Context(), "/"); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "Xid < 0") {
		t.Fatalf("go-zookeeper's per-reply debug line logged for the session's own replies:\n%s", out.String())
	}
	if !strings.Contains(out.String(), `"session_id"`) {
		t.Fatalf("no session line with session_id logged:\n%s", out.String())
	}
}
