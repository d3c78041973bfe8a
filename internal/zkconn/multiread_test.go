package zkconn

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/go-zookeeper/zk"
)

// TestGetManyAnswersEachPathOnItsOwn: a contract test of multiRead
// against the real server (ZooKeeper 3.8): one request reads three
// znodes' data and Stat, in order, and a missing one fails its own result
// with ErrNoNode while the others are answered; ChildrenMany likewise
// lists children.
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
		ls, err := c.ChildrenMany(ctx, []string{dir, dir + "/missing", dir + "/a"})
		if err != nil {
			return fmt.Errorf("ChildrenMany: %w", err)
		}
		slices.Sort(ls[0].Names)
		if len(ls) != 3 || ls[0].Err != nil || !slices.Equal(ls[0].Names, []string{"a", "b", "c"}) ||
			!errors.Is(ls[1].Err, zk.ErrNoNode) || ls[2].Err != nil || len(ls[2].Names) != 0 {
			return fmt.Errorf("ChildrenMany of %s, a missing path and a leaf: %+v", dir, ls)
		}
		return nil
	})
}
