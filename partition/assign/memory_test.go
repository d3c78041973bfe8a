package assign_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/zkelect/zkelect/partition/assign"
)

// liveHeap returns the live heap after a collection.
func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// TestAssignerForgetsTheColdStartsFreeList: an Assigner whose every shard
// was free once (a cold start: the list set before any holder) and is
// held now takes no more memory than one told the same holders first: the
// free shards' map, emptied, does not keep its capacity (a walk of it
// each step would cost the whole list).
func TestAssignerForgetsTheColdStartsFreeList(t *testing.T) {
	const n, members = 200_000, 4
	shards := make([]string, n)
	for i := range shards {
		shards[i] = fmt.Sprintf("shard-%08d", i)
	}
	p := assign.Params{Members: []string{"m0", "m1", "m2", "m3"}}
	holdAll := func(a *assign.Assigner) {
		for i, s := range shards {
			a.Hold(s, p.Members[i%members], uint64(i+1))
		}
	}
	h0 := liveHeap()
	cold := assign.NewAssigner()
	cold.SetShards(shards)
	cold.Targets(p) // every shard free
	holdAll(cold)
	cold.Targets(p) // every shard held
	h1 := liveHeap()
	warm := assign.NewAssigner()
	holdAll(warm)
	warm.SetShards(shards)
	warm.Targets(p)
	h2 := liveHeap()
	coldSize, warmSize := h1-h0, h2-h1
	t.Logf("cold-started Assigner %d bytes, told its holders first %d bytes", coldSize, warmSize)
	// An emptied free map of 200,000 shards that kept its capacity holds
	// about 10 MB; the two Assigners otherwise differ by about 3 MB (the
	// slots' map and the holders' heaps grown in another order).
	if coldSize > warmSize+(6<<20) {
		t.Errorf("an Assigner that went through a cold start holds %d bytes, %d more than one in the same state without: the emptied free map kept its capacity",
			coldSize, coldSize-warmSize)
	}
	runtime.KeepAlive(cold)
	runtime.KeepAlive(warm)
}
