package bench

import (
	"context"
	"fmt"
)

// packetsReceived sums ZooKeeper's zk_packets_received over every server:
// the requests (pings included) all sessions have sent them.
func (e *env) packetsReceived(ctx context.Context) (int64, error) {
	var n int64
	for i := range e.cluster.Size() {
		v, err := e.cluster.Mntr(ctx, i, "zk_packets_received")
		if err != nil {
			return 0, fmt.Errorf("bench: packets received by server %d: %w", i, err)
		}
		n += v
	}
	return n, nil
}

// memberWatches returns the data and exists watches the servers hold for
// the fleet's members' sessions ("wchc"), and how many members hold them.
func (e *env) memberWatches(ctx context.Context, f *fleet) (watches, members int, err error) {
	ids := f.sessionIDs()
	for i := range e.cluster.Size() {
		per, err := e.cluster.Wchc(ctx, i)
		if err != nil {
			return 0, 0, fmt.Errorf("bench: watches of server %d: %w", i, err)
		}
		for id, paths := range per {
			if ids[id] {
				watches += len(paths)
			}
		}
	}
	return watches, len(ids), nil
}

// sessionIDs returns the session ids of the fleet's members.
func (f *fleet) sessionIDs() map[int64]bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	ids := map[int64]bool{}
	for _, fm := range f.members {
		ids[fm.sess.ID()] = true
	}
	return ids
}

// wireCost returns the rows of the requests a cold start of n shards sent
// (packets the servers received from start to convergence, per shard) and
// of the watches each member holds once it converged.
func (e *env) wireCost(ctx context.Context, f *fleet, n int, packets int64) ([]Result, error) {
	w, members, err := e.memberWatches(ctx, f)
	if err != nil {
		return nil, err
	}
	return []Result{
		{Scenario: fmt.Sprintf("shards/requests per election at %d", n), Value: float64(packets) / float64(n), Unit: "requests",
			Note: fmt.Sprintf("%d requests the servers received during the cold start (pings and member records included), over %d shards", packets, n)},
		{Scenario: fmt.Sprintf("shards/watches per member at %d", n), Value: float64(w) / float64(max(members, 1)), Unit: "watches",
			Note: fmt.Sprintf("data and exists watches the servers hold for the %d members' sessions after the cold start (wchc)", members)},
	}, nil
}
