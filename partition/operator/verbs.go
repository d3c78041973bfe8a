package operator

import (
	"context"
	"errors"
	"fmt"
	"path"
	"time"

	"github.com/go-zookeeper/zk"

	rootdata "github.com/zkelect/zkelect/partition/internal/root"
)

// This file holds Operator's verbs. Each checks what it needs of the
// cluster (live members, their records, the shard's election) before the
// write and refuses, wrapping ErrRefused, what cannot hold.

// Drain makes member take no shard while it keeps running: every member's
// assignment gives its shards to the others, and it hands them away
// through the normal graceful handoff (throttled by
// MaxConcurrentHandoffs). WaitDrained returns once it leads nothing. It
// refuses a member that is not live, and draining the last live member
// that is not drained.
func (o *Operator) Drain(ctx context.Context, member, reason string) (bool, error) {
	live, _, err := o.members(ctx)
	if err != nil {
		return false, err
	}
	if _, ok := live[member]; !ok {
		return false, refused("member %q is not live under %s", member, o.root)
	}
	return o.update(ctx, func(s *State) (bool, error) {
		if s.IsDrained(member) {
			return false, nil
		}
		left := 0
		for id := range live {
			if id != member && !s.IsDrained(id) {
				left++
			}
		}
		if left == 0 {
			return false, refused("draining %q would leave no live member to lead the shards", member)
		}
		if s.Drained == nil {
			s.Drained = map[string]Note{}
		}
		s.Drained[member] = Note{Since: time.Now().UTC(), Reason: reason}
		return true, nil
	})
}

// Undrain gives a drained member its share again; the members holding the
// most give it shards, nobody else moves.
func (o *Operator) Undrain(ctx context.Context, member string) (bool, error) {
	return o.update(ctx, func(s *State) (bool, error) {
		if !s.IsDrained(member) {
			return false, nil
		}
		delete(s.Drained, member)
		return true, nil
	})
}

// Freeze starts the maintenance mode: no balancing move starts (a member
// joining takes nothing, a weight change moves nothing), while the shards
// of a member that left are still taken over at once. A positive d lifts
// the freeze by itself after d (members compare with their own clocks);
// zero freezes until Unfreeze. It refuses a negative d.
func (o *Operator) Freeze(ctx context.Context, reason string, d time.Duration) (bool, error) {
	if d < 0 {
		return false, refused("freeze for a negative duration %s", d)
	}
	now := time.Now().UTC()
	f := &Freeze{Note: Note{Since: now, Reason: reason}}
	if d > 0 {
		f.Until = now.Add(d)
	}
	return o.update(ctx, func(s *State) (bool, error) {
		active := s.Freeze.Active(now)
		if active && d == 0 && s.Freeze.Until.IsZero() && s.Freeze.Reason == reason {
			return false, nil // frozen until unfrozen already, for the same reason
		}
		if active {
			f.Since = s.Freeze.Since // a renewed freeze keeps when it began
		}
		s.Freeze = f
		return true, nil
	})
}

// Unfreeze ends the maintenance mode; the balance resumes.
func (o *Operator) Unfreeze(ctx context.Context) (bool, error) {
	return o.update(ctx, func(s *State) (bool, error) {
		if s.Freeze == nil {
			return false, nil
		}
		s.Freeze = nil
		return true, nil
	})
}

// Pin keeps shard on member while member is live and not drained; it
// counts in member's share. It clears a move of shard (the latest word
// wins: a move left in place would hold the shard on its target for good).
// It refuses a shard that has no election under the root, and a member
// that is not live, is drained, or runs another shard list than the
// shard's leader.
func (o *Operator) Pin(ctx context.Context, shard, member string) (bool, error) {
	if err := o.checkTaker(ctx, shard, member); err != nil {
		return false, err
	}
	return o.update(ctx, func(s *State) (bool, error) {
		_, moving := s.Moves[shard]
		if s.Pins[shard] == member && !moving {
			return false, nil
		}
		delete(s.Moves, shard)
		if s.Pins == nil {
			s.Pins = map[string]string{}
		}
		s.Pins[shard] = member
		return true, nil
	})
}

// Unpin frees shard to rebalance, and clears a move of it: its leader
// keeps it while within its share.
func (o *Operator) Unpin(ctx context.Context, shard string) (bool, error) {
	return o.update(ctx, func(s *State) (bool, error) {
		_, pinned := s.Pins[shard]
		_, moving := s.Moves[shard]
		if !pinned && !moving {
			return false, nil
		}
		delete(s.Pins, shard)
		delete(s.Moves, shard)
		return true, nil
	})
}

// Unmove cancels a move of shard: the shard stays with whoever leads it
// now while within its share (the balance decides, as if the move had
// never been asked for). It reports false when shard has no move.
func (o *Operator) Unmove(ctx context.Context, shard string) (bool, error) {
	return o.update(ctx, func(s *State) (bool, error) {
		if _, ok := s.Moves[shard]; !ok {
			return false, nil
		}
		delete(s.Moves, shard)
		return true, nil
	})
}

// Move hands shard to member with one graceful handoff (the old leader's
// work is cancelled and OnStoppedLeading returns before member's
// OnStartedLeading), like Kafka's preferred-leader election. The move acts
// as a pin until member leads the shard and the balance keeps it there
// without it (member gives another shard away if it is over its share);
// member then clears it and the shard is free to rebalance. WaitMoved
// returns once done. It refuses what Pin refuses, and a shard pinned to
// another member. When member already leads the shard it only clears a
// move of it to another member (the latest word wins: that move would
// take the shard away), reporting whether there was one.
func (o *Operator) Move(ctx context.Context, shard, member string) (bool, error) {
	if err := o.checkTaker(ctx, shard, member); err != nil {
		return false, err
	}
	_, recs, err := o.members(ctx)
	if err != nil {
		return false, err
	}
	if _, leads := recs[member].Leading[shard]; leads {
		return o.update(ctx, func(s *State) (bool, error) {
			if to, ok := s.Moves[shard]; !ok || to == member {
				return false, nil
			}
			delete(s.Moves, shard)
			return true, nil
		})
	}
	return o.update(ctx, func(s *State) (bool, error) {
		if p, ok := s.Pins[shard]; ok && p != member {
			return false, refused("shard %s is pinned to %s: unpin it first", shard, p)
		}
		if s.Moves[shard] == member {
			return false, nil
		}
		if s.Moves == nil {
			s.Moves = map[string]string{}
		}
		s.Moves[shard] = member
		return true, nil
	})
}

// ClearMoves removes the moves of shards that still target member, and
// keeps a move re-aimed at another member meanwhile: members call it for
// the moves they completed. It reports whether it removed any.
func (o *Operator) ClearMoves(ctx context.Context, shards []string, member string) (bool, error) {
	return o.update(ctx, func(s *State) (bool, error) {
		n := len(s.Moves)
		for _, sh := range shards {
			if s.Moves[sh] == member {
				delete(s.Moves, sh)
			}
		}
		return len(s.Moves) != n, nil
	})
}

// SetWeight sets member's weight (1..MaxWeight), overriding the weight it
// publishes: its share becomes ceil(S·w/Σw) at most, moving only the
// shards it must. It refuses a weight out of range.
func (o *Operator) SetWeight(ctx context.Context, member string, w int) (bool, error) {
	if w <= 0 || w > MaxWeight {
		return false, refused("weight %d of %q is out of range 1..%d", w, member, MaxWeight)
	}
	if err := rootdata.ValidateID(member); err != nil {
		return false, refused("%v", err)
	}
	return o.update(ctx, func(s *State) (bool, error) {
		if s.Weights[member] == w {
			return false, nil
		}
		if s.Weights == nil {
			s.Weights = map[string]int{}
		}
		s.Weights[member] = w
		return true, nil
	})
}

// ResetWeight drops the operator's weight of member: the weight it
// publishes applies again.
func (o *Operator) ResetWeight(ctx context.Context, member string) (bool, error) {
	return o.update(ctx, func(s *State) (bool, error) {
		if _, ok := s.Weights[member]; !ok {
			return false, nil
		}
		delete(s.Weights, member)
		return true, nil
	})
}

// checkTaker refuses a shard without an election under the root, and a
// member that is not live, is drained, or runs another shard list than
// the shard's published leader.
func (o *Operator) checkTaker(ctx context.Context, shard, member string) error {
	var ok bool
	err := o.retry(ctx, func() (err error) {
		l, err := rootdata.ReadLayout(ctx, o.sess, o.root)
		if errors.Is(err, zk.ErrNoNode) {
			ok = false
			return nil
		}
		if err != nil {
			return err
		}
		p, err := l.ElectionOf(ctx, o.sess, o.root, shard)
		if err != nil {
			return err
		}
		ok, _, err = o.sess.Exists(ctx, p)
		return err
	})
	if err != nil {
		return fmt.Errorf("partition: read shard %s: %w", shard, err)
	}
	if !ok {
		return refused("shard %q has no election under %s", shard, o.root)
	}
	live, recs, err := o.members(ctx)
	if err != nil {
		return err
	}
	if _, ok := live[member]; !ok {
		return refused("member %q is not live under %s", member, o.root)
	}
	st, err := o.State(ctx)
	if err != nil {
		return err
	}
	if st.IsDrained(member) {
		return refused("member %q is drained: undrain it first", member)
	}
	for id, r := range recs {
		if _, leads := r.Leading[shard]; leads && r.ShardSet != "" && recs[member].ShardSet != "" && r.ShardSet != recs[member].ShardSet {
			return refused("member %q runs another shard list (%s) than shard %s's leader %s (%s)",
				member, recs[member].ShardSet, shard, id, r.ShardSet)
		}
	}
	return nil
}

// members reads the live members and the records they wrote in their
// current session, trying again while ZooKeeper is out of reach.
func (o *Operator) members(ctx context.Context) (live map[string]int64, recs map[string]rootdata.Record, err error) {
	err = o.retry(ctx, func() (err error) {
		live, recs, err = o.membersOnce(ctx)
		return err
	})
	return live, recs, err
}

// membersOnce is one try of members.
func (o *Operator) membersOnce(ctx context.Context) (map[string]int64, map[string]rootdata.Record, error) {
	live, err := rootdata.LiveMembers(ctx, o.sess, o.root)
	if err != nil {
		return nil, nil, err
	}
	recs := make(map[string]rootdata.Record, len(live))
	for id, sess := range live {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		p := path.Join(o.root, rootdata.OwnersDir, id)
		data, _, err := o.sess.Get(ctx, p)
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("partition: read %s: %w", p, err)
		}
		if r, err := rootdata.DecodeRecord(data); err == nil && r.Session == sess {
			recs[id] = r
		}
	}
	return live, recs, nil
}
