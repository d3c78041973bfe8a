package bench

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

func (e *env) runHerd(ctx context.Context, cfg Config, rep *Report) error {
	counts, err := e.herd(ctx, cfg.HerdCandidates, cfg.HerdTrials)
	if err != nil {
		return err
	}
	total, worst := 0, 0
	for _, c := range counts {
		total += c
		worst = max(worst, c)
	}
	rep.Results = append(rep.Results, Result{
		Scenario: "herd/notifications per failover",
		Value:    float64(total) / float64(len(counts)), Unit: "watch notifications",
		Floor: "1 (only the successor watches the leader)",
		Note: fmt.Sprintf("%d candidates on their own sessions, %d failovers, max %d; counted from the servers' watch tables (wchp)",
			cfg.HerdCandidates, len(counts), worst),
	})
	return nil
}

// herd runs n candidates, each on its own session, and for each of trials
// failovers (the leader resigns) counts the watch notifications the
// deletion of the leader's znode delivers to other sessions: the watches
// the servers hold on that znode and on the election's children.
func (e *env) herd(ctx context.Context, n, trials int) ([]int, error) {
	el, err := e.newElection(ctx, "/bench/herd", n, false)
	if err != nil {
		return nil, err
	}
	defer el.close()
	counts := make([]int, 0, trials)
	for range trials {
		if err := e.awaitParticipants(ctx, el.all[0].sess, el.path, n); err != nil {
			return nil, err
		}
		cur, err := el.current(ctx)
		if err != nil {
			return nil, err
		}
		watchers, err := e.watchers(ctx, []string{cur.l.Znode(), el.path}, cur.c.sess.ID())
		if err != nil {
			return nil, err
		}
		start := time.Now()
		if err := cur.c.resign(ctx, cur.l); err != nil {
			return nil, err
		}
		if _, err := el.successor(ctx, cur.c, start, "after resign"); err != nil {
			return nil, err
		}
		counts = append(counts, watchers)
	}
	return counts, nil
}

// watchers counts, over every server, the watches sessions other than
// except hold on any of paths (ZooKeeper's "wchp": each path, then one
// indented session id per watch).
func (e *env) watchers(ctx context.Context, paths []string, except int64) (int, error) {
	n := 0
	for i := range e.cluster.Size() {
		out, err := e.cluster.FourLetterWord(ctx, i, "wchp")
		if err != nil {
			return 0, fmt.Errorf("bench: wchp on server %d: %w", i, err)
		}
		n += countWatchers(out, paths, except)
	}
	return n, nil
}

func countWatchers(wchp string, paths []string, except int64) int {
	n, counting := 0, false
	for _, line := range strings.Split(wchp, "\n") {
		if line == "" {
			continue
		}
		if !strings.HasPrefix(line, "\t") && !strings.HasPrefix(line, " ") {
			counting = false
			for _, p := range paths {
				counting = counting || line == p
			}
			continue
		}
		if !counting {
			continue
		}
		id, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimSpace(line), "0x"), 16, 64)
		if err == nil && int64(id) != except {
			n++
		}
	}
	return n
}
