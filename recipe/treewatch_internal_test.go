package recipe

import (
	"fmt"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/internal/jute"
	"github.com/zkelect/zkelect/internal/zkconn"
)

// TestTreeWatchReAddRetriesOnlyWhatMaySucceed: after a new connection
// TreeWatch.Next adds its watch again; a refusal (NOAUTH, a server
// without addWatch, bad arguments) or a closed session ends Next with the
// error (electview's Follow then ends naming it), while connection loss,
// a request without answer, throttling, a moved or expired session (a
// new one follows) are retried. The errors are as zkconn.Conn.AddWatch
// returns them.
func TestTreeWatchReAddRetriesOnlyWhatMaySucceed(t *testing.T) {
	addWatch := func(err error) error { return fmt.Errorf("add watch /r: %w", err) }
	tests := []struct {
		name  string
		err   error
		retry bool
	}{
		{"NOAUTH", addWatch(zk.ErrNoAuth), false},
		{"UNIMPLEMENTED (a server before 3.6)", addWatch(&zkconn.CodeError{Op: "add watch", Code: jute.CodeUnimplemented}), false},
		{"bad arguments", addWatch(zk.ErrBadArguments), false},
		{"closed", addWatch(zkconn.ErrClosed), false},
		{"connection loss", addWatch(zk.ErrConnectionClosed), true},
		{"throttled", addWatch(&zkconn.CodeError{Op: "add watch", Code: jute.CodeThrottled}), true},
		{"session moved", addWatch(zk.ErrSessionMoved), true},
		{"session expired", addWatch(zk.ErrSessionExpired), true},
	}
	for _, tt := range tests {
		if got := rearmRetryable(tt.err); got != tt.retry {
			t.Errorf("%s: rearmRetryable = %v, want %v", tt.name, got, tt.retry)
		}
	}
}
