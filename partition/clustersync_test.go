package partition_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/zkelect/zkelect/partition"
)

// TestClusterSyncIsOutOfSyncUntilTheRootIsReadAgainAfterAReconnect: a
// ClusterSync given to WatchClusterSynced is out of sync before the first
// picture, in sync after it, out of sync while the observer's session is
// connected again through a link that answers only pings (the watch's
// re-add and the root's listing go unanswered), in sync again once the
// link heals and the root is read again, and out of sync once the call
// returned.
func TestClusterSyncIsOutOfSyncUntilTheRootIsReadAgainAfterAReconnect(t *testing.T) {
	root, writer := newRoot(t), connect(t, 5*time.Second)
	proxy := zkc.NewProxyT(t)
	obs := connectTo(t, proxy.Addrs(), 4*time.Second)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	if err := partition.EnsureRoot(ctx, writer, root); err != nil {
		t.Fatal(err)
	}
	sync := &partition.ClusterSync{}
	if sync.InSync() {
		t.Fatal("a ClusterSync not given to any watch is in sync")
	}
	pictures := make(chan struct{}, 1)
	done := make(chan error, 1)
	go func() {
		done <- partition.WatchClusterSynced(ctx, obs, root, func(partition.Cluster) {
			select {
			case pictures <- struct{}{}:
			default:
			}
		}, sync)
	}()
	stopped := false
	defer func() {
		if !stopped {
			cancel()
			<-done
		}
	}()
	select {
	case <-pictures:
	case <-time.After(30 * time.Second):
		t.Fatal("timed out after 30s waiting for the first picture")
	}
	waitFor(t, 10*time.Second, "in sync after the first picture", func() (bool, string) { return sync.InSync(), "out of sync" })

	if err := proxy.ForwardOnlyPings(0); err != nil {
		t.Fatal(err)
	}
	reconnected := obs.NextConnect()
	proxy.Cut()
	select {
	case <-reconnected:
	case <-time.After(30 * time.Second):
		t.Fatal("timed out after 30s waiting for the observer's session to reconnect (pings only)")
	}
	waitFor(t, 20*time.Second, "out of sync while the session is connected (pings only)", func() (bool, string) {
		before := obs.Connected()
		in := sync.InSync()
		after := obs.Connected()
		return before && after && !in, fmt.Sprintf("connected %v/%v, in sync %v", before, after, in)
	})

	proxy.Heal() // the unanswered requests stay so: the request deadline ends that connection
	waitFor(t, 60*time.Second, "in sync again once the root is read again", func() (bool, string) { return sync.InSync(), "out of sync" })
	cancel()
	stopped = true
	if err := <-done; err != nil {
		t.Errorf("WatchClusterSynced: %v", err)
	}
	if sync.InSync() {
		t.Error("in sync after WatchClusterSynced returned")
	}
}
