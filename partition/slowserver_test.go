package partition_test

import (
	"testing"
	"time"

	"github.com/zkelect/zkelect/partition"
)

// TestColdStartConvergesOnASlowServer starts a member over 400 shards on a
// connection whose replies each wait 200ms (the proxy holds 64 replies at
// a time, so about 320 answers a second get through). Pipelining the
// default 256 elections at once queued requests for longer than the lease
// allows: every leadership was suspended as it started, over and over, and
// no shard stayed led. The member must adapt how many elections it starts
// at once and converge.
func TestColdStartConvergesOnASlowServer(t *testing.T) {
	proxy := zkc.NewProxyT(t)
	proxy.SetLatency(200 * time.Millisecond)
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, 600)
	mb := startMemberOn(t, connectTo(t, proxy.Addrs(), 2*time.Second), root, "a", shards, tr)
	waitBalanced(t, shards, []*member{mb}, 30*time.Second)
	tr.check(t, true)
}
