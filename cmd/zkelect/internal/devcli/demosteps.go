package devcli

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/zkelect/zkelect/cmd/zkelect/internal/cli"
	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/zxidfence"
)

// balancedOver reports whether every shard is led, only by members, with no
// member above its fair share ceil(shards/len(members)).
func balancedOver(members ...string) func(map[string]partition.Owner) bool {
	return func(o map[string]partition.Owner) bool {
		if len(o) != demoShards {
			return false
		}
		n := cli.LeadCounts(o)
		fair := (demoShards + len(members) - 1) / len(members)
		total := 0
		for _, m := range members {
			if n[m] == 0 || n[m] > fair {
				return false
			}
			total += n[m]
		}
		return total == demoShards
	}
}

// grid prints the leader of each shard, 16 to a line, and the counts.
func (d *demo) grid(o map[string]partition.Owner) {
	shards := cli.SortedShards(o)
	for i := 0; i < len(shards); i += 16 {
		j := min(i+16, len(shards))
		cells := make([]string, 0, 16)
		for _, s := range shards[i:j] {
			m := o[s].Member
			if m == "" {
				m = "-"
			}
			cells = append(cells, m)
		}
		fmt.Fprintf(d.out, "          shards %2s-%-2s  %s\n", shards[i], shards[j-1], strings.Join(cells, " "))
	}
	fmt.Fprintf(d.out, "          leaders: %s\n", countsLine(o))
}

// countsLine is "a=22 b=21 c=21".
func countsLine(o map[string]partition.Owner) string {
	n := cli.LeadCounts(o)
	members := make([]string, 0, len(n))
	for m := range n {
		members = append(members, m)
	}
	sort.Strings(members)
	parts := make([]string, 0, len(members))
	for _, m := range members {
		name := m
		if name == "" {
			name = "(none)"
		}
		parts = append(parts, fmt.Sprintf("%s=%d", name, n[m]))
	}
	return strings.Join(parts, " ")
}

// balance waits for the three daemons to share the shards evenly.
func (d *demo) balance(ctx context.Context) error {
	o, err := d.await(ctx, "balanced leadership over a, b and c", balancedOver(demoMembers...))
	if err != nil {
		return err
	}
	d.say("balanced: every shard has a leader, none leads more than ceil(%d/3) = %d", demoShards, (demoShards+2)/3)
	d.grid(o)
	return nil
}

// killOne SIGKILLs daemon c and waits for a and b to take its shards, an
// even split (the takeover is balanced at once; were it not, the step waits
// for the handoffs that balance it).
func (d *demo) killOne(ctx context.Context) error {
	before, err := d.owners(ctx)
	if err != nil {
		return fmt.Errorf("demo: read owners: %w", err)
	}
	lost := cli.LedBy(before, "c")
	fmt.Fprintln(d.out)
	d.say("SIGKILL daemon c (pid %d), leader of %d shards", d.daemons["c"].pid(), len(lost))
	t0 := time.Now()
	d.daemons["c"].kill()
	delete(d.daemons, "c")
	o, err := d.await(ctx, "a and b to take over c's shards", func(o map[string]partition.Owner) bool {
		n := cli.LeadCounts(o)
		return len(o) == demoShards && n["a"]+n["b"] == demoShards
	})
	if err != nil {
		return err
	}
	d.say("c's session expired and its %d shards failed over in %.1fs (session timeout %s): %s",
		len(lost), time.Since(t0).Seconds(), demoSessionTimeout, countsLine(o))
	if balancedOver("a", "b")(o) {
		d.say("even split between a and b at once: c's shards were dealt within the balance, no handoffs follow")
	} else {
		if o, err = d.await(ctx, "a and b to rebalance", balancedOver("a", "b")); err != nil {
			return err
		}
		d.say("even split between a and b after balancing handoffs")
	}
	d.grid(o)
	return nil
}

// pauseOne SIGSTOPs daemon b and its workers past the session timeout, waits
// for a to lead (and write to) all of b's shards, then resumes b and shows
// the store refusing b's late writes.
func (d *demo) pauseOne(ctx context.Context) error {
	before, err := d.owners(ctx)
	if err != nil {
		return fmt.Errorf("demo: read owners: %w", err)
	}
	old := cli.LedBy(before, "b")
	b := d.daemons["b"]
	fmt.Fprintln(d.out)
	pids, err := b.pauseTree()
	if err != nil {
		resumePIDs(pids)
		return err
	}
	// Each worker is the daemon's direct child (a reaper and the worker
	// it runs count as one).
	workers, _ := childPIDs(b.pid())
	d.say("SIGSTOP daemon b (pid %d) and its %d workers: b leads %d shards and believes it still does",
		b.pid(), len(workers), len(old))
	_, err = d.await(ctx, "a to lead b's shards and write to the store", func(o map[string]partition.Owner) bool {
		for s, t := range old {
			v, ok := d.store.value(s)
			if o[s].Member != "a" || !ok || v.Token <= t {
				return false
			}
		}
		return true
	})
	if err != nil {
		resumePIDs(pids)
		return err
	}
	shard := cli.SortedShards(old)[0]
	v, _ := d.store.value(shard)
	d.say("b's session expired; a leads all %d shards. Shard %s: b's token %s, a's token %s",
		demoShards, shard, old[shard], v.Token)
	d.drainStale()
	resumePIDs(pids)
	d.say("SIGCONT daemon b: its workers wake up and write with their old tokens")
	ev, err := d.awaitStale(ctx, old)
	if err != nil {
		return err
	}
	d.say("REJECTED by the store: b's late write to shard %s with token %s; highest accepted is %s (409 Conflict)",
		ev.Shard, ev.Presented, ev.Highest)
	o, err := d.await(ctx, "b to rejoin and rebalance with a", balancedOver("a", "b"))
	if err != nil {
		return err
	}
	d.say("b noticed its expired session, stopped its workers and rejoined with new tokens; balanced again:")
	d.grid(o)
	fmt.Fprintln(d.out)
	d.say("store: %d writes accepted, %d stale writes rejected",
		d.accepted.Load(), d.rejected.Load())
	return nil
}

// drainStale discards rejections queued so far.
func (d *demo) drainStale() {
	for {
		select {
		case <-d.stale:
		default:
			return
		}
	}
}

// awaitStale waits for the store to refuse a write from b with one of its
// old tokens.
func (d *demo) awaitStale(ctx context.Context, old map[string]zxidfence.Token) (storeEvent, error) {
	ctx, cancel := context.WithTimeout(ctx, demoStepTimeout)
	defer cancel()
	for {
		select {
		case ev := <-d.stale:
			if ev.Member == "b" && old[ev.Shard] == ev.Presented {
				return ev, nil
			}
		case <-ctx.Done():
			return storeEvent{}, fmt.Errorf("demo: no stale write from b reached the store: %w", ctx.Err())
		}
	}
}
