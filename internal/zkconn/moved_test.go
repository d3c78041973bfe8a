package zkconn

import (
	"context"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/zkelect/zkelect/testenv"
)

// TestShortSessionFollowsAServerThatMovedAtOnce: the only server's name
// moves from 127.0.0.2 to 127.0.0.3 right after Dial, and nothing listens
// at the old address; with 2s sessions the client reaches the new address
// in time and keeps its session. Before, Go's resolver answered from its
// 5s cache of the hosts file: the client dialled the old address until the
// cache expired and was told its session had expired.
func TestShortSessionFollowsAServerThatMovedAtOnce(t *testing.T) {
	testenv.WithPrivateHosts(t, func(t *testing.T, h *testenv.Hosts) {
		old := proxyAt(t, "127.0.0.2:0")
		port := portOf(t, old.Addrs()[0])
		if err := h.Set("zk-quick.test", "127.0.0.2"); err != nil {
			t.Fatal(err)
		}
		moved := proxyAt(t, "127.0.0.3:"+port)
		var log logBuffer
		c := dialT(t, []string{"zk-quick.test:" + port}, Config{Timeout: 2 * time.Second, Log: zerolog.New(&log)})
		path, stat := ephemeral(t, c, "quick")
		id := c.ID()
		if err := h.Set("zk-quick.test", "127.0.0.3"); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_ = old.Close()
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		if err := awaitSessionVia(ctx, c, moved, id); err != nil {
			t.Fatalf("session %#x through the name's new address: %v\nlog:\n%s", id, err, log.String())
		}
		t.Logf("session %#x back through 127.0.0.3 %v after the move", id, time.Since(start).Round(time.Millisecond))
		checkOwned(t, c, path, stat.Czxid, id)
	})
}
