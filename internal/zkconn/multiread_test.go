package zkconn

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/go-zookeeper/zk"
)

// TestGetManyAnswersEachPathOnItsOwn: a contract test of multiRead
// against the real server (ZooKeeper 3.8): one request reads three
// znodes' data and Stat, in order, and a missing one fails its own result
// with ErrNoNode while the others are answered.
func TestGetManyAnswersEachPathOnItsOwn(t *testing.T) {
	runWatchScenario(t, 0, func(ctx context.Context, c *Conn, _ *eventSink, dir string) error {
		paths := []string{dir + "/a", dir + "/missing", dir + "/b", dir + "/c"}
		want := map[string][]byte{dir + "/a": []byte("member-a"), dir + "/b": nil, dir + "/c": []byte("c")}
		czxids := map[string]int64{}
		for _, p := range []string{dir + "/a", dir + "/b", dir + "/c"} {
			_, st, err := c.Create2(ctx, p, want[p], zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
			if err != nil {
				return err
			}
			czxids[p] = st.Czxid
		}
		rs, err := c.GetMany(ctx, paths)
		if err != nil {
			return fmt.Errorf("GetMany: %w", err)
		}
		if len(rs) != len(paths) {
			return fmt.Errorf("%d results for %d paths", len(rs), len(paths))
		}
		for i, p := range paths {
			r := rs[i]
			if p == dir+"/missing" {
				if !errors.Is(r.Err, zk.ErrNoNode) {
					return fmt.Errorf("%s: %+v, want ErrNoNode", p, r)
				}
				continue
			}
			if r.Err != nil || r.Stat == nil || !bytes.Equal(r.Data, want[p]) || r.Stat.Czxid != czxids[p] || r.Stat.EphemeralOwner != c.ID() {
				return fmt.Errorf("%s: %+v (stat %+v), want data %q czxid %d owner %d", p, r, r.Stat, want[p], czxids[p], c.ID())
			}
		}
		return nil
	})
}
