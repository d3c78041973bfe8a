package partition

import "github.com/zkelect/zkelect/recipe"

// CampaignUnassigned runs the election of shard on m's session the way a
// running member does, outside any Run, while m's assignment names
// assignedTo for the shard: when its candidate wins, it must pass the shard
// on before any callback runs. done is closed once the runner has returned
// (after passing the shard on, or after stop).
func CampaignUnassigned(m *Manager, shard, assignedTo string) (done <-chan struct{}, stop func()) {
	target := map[string]string{shard: assignedTo}
	m.target.Store(&target)
	l := newLoop(m)
	l.start(shard)
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		l.workers.Wait()
	}()
	return ch, l.cancel
}

// SessionOf returns the i-th session m's elections run on (0 is the one
// given to NewManager), or nil while m has fewer.
func SessionOf(m *Manager, i int) *recipe.Session {
	m.pool.mu.Lock()
	defer m.pool.mu.Unlock()
	if i >= len(m.pool.open) {
		return nil
	}
	return m.pool.open[i].sess
}

// UseCuratorNaming makes m name its shards' candidate znodes as releases
// before recipe.ShortNaming did (Curator LeaderLatch's naming), for
// rolling-upgrade tests. Call it before Run.
func UseCuratorNaming(m *Manager) { m.naming = recipe.CuratorNaming() }

// TargetOf returns the member m's latest assignment gives shard ("" before
// Run computed one).
func TargetOf(m *Manager, shard string) string { return m.targetOf(shard) }
