package bench

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/recipe"
)

// A simulated member that restarts is away for a moment: the assignment
// deals its shards meanwhile (a reservation of a member that is not live
// is dealt, partition/assign's rule 3), so the real member campaigns for
// its part of them, leads them, and hands them back once the member is
// live again. A real member that comes back campaigns for its reserved
// shards; the driver does the same for the shards the real member took:
// a real candidate (recipe, participant id the simulated member's) in
// each of those elections, so that the real member's handoff finds its
// successor. Those are the only candidates the driver creates.

// simCandidates are the simulated members' candidates, on one session of
// their own. One goroutine calls backfill; close ends them.
type simCandidates struct {
	sess   *recipe.Session
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	cands  map[string]*recipe.Candidate // shard to its simulated candidate
}

// backfill reads the real member's record and, for every shard of a
// simulated member in want (member index to true) that the real member
// leads, starts that member's candidate in its election, once.
func (f *simFleet) backfill(ctx context.Context, e *env, want map[int]bool) error {
	if f.cands == nil {
		sess, err := e.session(ctx, nil)
		if err != nil {
			return err
		}
		cctx, cancel := context.WithCancel(context.Background())
		f.cands = &simCandidates{sess: sess, ctx: cctx, cancel: cancel, cands: map[string]*recipe.Candidate{}}
	}
	leading, err := f.realLeading()
	if err != nil {
		return err
	}
	for s := range leading {
		var j int
		if _, err := fmt.Sscanf(s, f.format, &j); err != nil || !want[j%f.members] || f.cands.cands[s] != nil {
			continue
		}
		p, err := partition.ElectionPath(ctx, f.cands.sess, f.root, s)
		if err != nil {
			return err
		}
		c, err := recipe.NewCandidate(f.cands.sess, p, recipe.WithParticipantID(simMemberID(j%f.members)))
		if err != nil {
			return fmt.Errorf("bench: candidate of %s in %s: %w", simMemberID(j%f.members), s, err)
		}
		f.cands.cands[s] = c
		f.cands.wg.Go(func() { _, _ = c.Campaign(f.cands.ctx) })
	}
	return nil
}

// realLeading reads the shards the real member's record says it leads.
func (f *simFleet) realLeading() (map[string]uint64, error) {
	data, _, err := f.conns[0].Get(f.recordPath(0))
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("bench: read the real member's record: %w", err)
	}
	if bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("bench: the real member's record: %w", err)
		}
		if data, err = io.ReadAll(zr); err != nil {
			return nil, fmt.Errorf("bench: the real member's record: %w", err)
		}
	}
	var r struct {
		Leading map[string]uint64 `json:"leading"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("bench: the real member's record: %w", err)
	}
	return r.Leading, nil
}

// close ends the candidates and their session.
func (c *simCandidates) close() {
	c.cancel()
	for _, cand := range c.cands {
		_ = cand.Close()
	}
	c.wg.Wait()
	_ = c.sess.Close()
}
