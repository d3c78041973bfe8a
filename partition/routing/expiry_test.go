package routing_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/testenv"
	"github.com/zkelect/zkelect/zxidfence"
)

// TestRouterFollowsAMembersSessionExpiry: member a's session expires (as
// a crashed member's does); every shard it led is led again, by b or by
// a's new session, with a new token, and the router shows each new
// leadership as its election holds it.
func TestRouterFollowsAMembersSessionExpiry(t *testing.T) {
	root, shards, a, obs, c := routedPair(t)
	before := map[string]zxidfence.Token{}
	eventually(t, 30*time.Second, "a leading some shards, every shard routed", func() (bool, string) {
		clear(before)
		for _, s := range shards {
			r, err := c.Leader(s)
			if err != nil {
				return false, s + ": " + err.Error()
			}
			if r.Member == "a" {
				before[s] = r.Token
			}
		}
		return len(before) > 0, fmt.Sprint(before)
	})
	if err := testenv.ExpireConn(t.Context(), zkc.Addrs(), a.sess.Conn()); err != nil {
		t.Fatalf("expire a's session: %v", err)
	}
	eventually(t, 30*time.Second, "each of a's shards routed to a new leadership, as its election holds it", func() (bool, string) {
		owners, err := partition.Owners(t.Context(), obs, root)
		if err != nil {
			return false, err.Error()
		}
		for s, tok := range before {
			r, err := c.Leader(s)
			if err != nil || r.Token == tok || r.Member != owners[s].Member || r.Token != owners[s].Token {
				return false, fmt.Sprintf("shard %s: route %+v (%v), election %+v, token before %v", s, r, err, owners[s], tok)
			}
		}
		return true, ""
	})
}
