package partition

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sync"

	"github.com/go-zookeeper/zk"

	rootdata "github.com/zkelect/zkelect/partition/internal/root"
	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/zxidfence"
)

// ownersParallel bounds the elections Owners reads at once.
const ownersParallel = 64

// Owner is who leads one shard, as ZooKeeper holds it.
type Owner struct {
	// Election is the znode of the shard's election:
	// <root>/buckets/<bucket>/<shard>, or <root>/shards/<shard> in a flat
	// root an older release created (see ElectionPath).
	Election string
	// Member is the leading member's id; "" when the shard has no leader,
	// or when a persistent znode (see Stuck) is first in its election.
	Member string
	// Token is the leader's fencing token; zero when there is no leader.
	Token zxidfence.Token
	// Address is the leader's published address (Config.Address), "" when
	// it publishes none or its record is not written yet.
	Address string
	// Standbys lists the other candidates' member ids, in election order.
	Standbys []string
	// Stuck is the full path of the first persistent znode in the shard's
	// election, "" when there is none. Such a znode (an operator's, or
	// another tool's) is no candidate: no session owns it, so none ends it,
	// and every candidate behind it waits until someone deletes it. It is
	// reported here, never as Member or in Standbys.
	Stuck string
	// Stray is the path of an election of the shard outside the root's
	// layout, "" when there is none: <root>/shards/<shard> in a bucketed
	// root, where only an older release (which does not read the layout)
	// or a tool campaigns. Its candidates are not this shard's: a leader
	// there may act beside Member. Stop the older release, then delete the
	// stray election (or run prune once it is empty).
	Stray string
}

// Owners reads, for dashboards and CLIs, the leader and standbys of every
// shard under root (every election in the root's buckets, one listing
// per bucket, or under <root>/shards in a flat root), and each election of
// a bucketed root under <root>/shards as Owner.Stray. It reads from the
// session's view without taking part, many shards in flight at once. A
// persistent znode in a shard's election is reported as Owner.Stuck, not
// as a member. It returns an error wrapping ErrInvalidRoot for a bad root, and ZooKeeper
// errors wrapped with the path; a root without shards gives an empty map.
func Owners(ctx context.Context, sess *recipe.Session, root string) (map[string]Owner, error) {
	if sess == nil {
		return nil, ErrNilSession
	}
	if err := rootdata.ValidateRoot(root); err != nil {
		return nil, err
	}
	layout, ids, err := rootdata.ListRoot(ctx, sess, root)
	if err != nil {
		return nil, fmt.Errorf("partition: %w", err)
	}
	owners := make(map[string]Owner, len(ids))
	var (
		mu    sync.Mutex
		first error
		wg    sync.WaitGroup
		sem   = make(chan struct{}, ownersParallel)
	)
	for _, id := range ids {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return nil, ctx.Err()
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			o, err := ownerOf(ctx, sess, layout.ShardPath(root, id))
			o.Election = layout.ShardPath(root, id)
			mu.Lock()
			defer mu.Unlock()
			if err != nil && first == nil {
				first = err
			}
			owners[id] = o
		}()
	}
	wg.Wait()
	if first != nil {
		return nil, first
	}
	strays, err := layout.StrayElections(ctx, sess, root)
	if err != nil {
		return nil, fmt.Errorf("partition: %w", err)
	}
	if layout.Migrating() {
		err = flatOwners(ctx, sess, root, owners, strays)
	} else {
		for _, id := range strays {
			o := owners[id]
			o.Stray = rootdata.Flat.ShardPath(root, id)
			owners[id] = o
		}
	}
	if err != nil {
		return nil, err
	}
	return owners, addAddresses(ctx, sess, root, owners)
}

// addAddresses fills in each leader's address from its record, one read
// per leading member.
func addAddresses(ctx context.Context, sess *recipe.Session, root string, owners map[string]Owner) error {
	addr := map[string]string{}
	for _, o := range owners {
		if _, done := addr[o.Member]; o.Member == "" || done {
			continue
		}
		rec, err := readRecord(ctx, sess, path.Join(root, rootdata.OwnersDir, o.Member))
		if err != nil {
			return err
		}
		if addr[o.Member] = ""; rec != nil {
			addr[o.Member] = rec.Address
		}
	}
	for s, o := range owners {
		if o.Member != "" {
			o.Address = addr[o.Member]
			owners[s] = o
		}
	}
	return nil
}

// ownerOf reads one shard's election.
func ownerOf(ctx context.Context, sess *recipe.Session, p string) (Owner, error) {
	ps, err := recipe.Participants(ctx, sess, p)
	if err != nil && !errors.Is(err, recipe.ErrNoLeader) {
		return Owner{}, fmt.Errorf("partition: read %s: %w", p, err)
	}
	var o Owner
	for _, part := range ps {
		switch {
		case part.SessionID == 0: // persistent: not a candidate
			if o.Stuck == "" {
				o.Stuck = part.Znode
			}
		case part.Leader:
			o.Member, o.Token = part.ID, part.Token
		default:
			o.Standbys = append(o.Standbys, part.ID)
		}
	}
	return o, nil
}

// flatOwners fills in, for a root moving to buckets, the owner of each
// shard in flat (its flat elections, those not gone yet) whose bucketed
// election has no leader: such a shard is led, if at all, in its flat
// election (a shard is never led in both).
func flatOwners(ctx context.Context, sess *recipe.Session, root string, owners map[string]Owner, flat []string) error {
	for _, id := range flat {
		if owners[id].Member != "" {
			continue
		}
		p := rootdata.Flat.ShardPath(root, id)
		o, err := ownerOf(ctx, sess, p)
		if errors.Is(err, zk.ErrNoNode) {
			continue // gone meanwhile: the shard moved
		}
		if err != nil {
			return err
		}
		o.Election = p
		owners[id] = o
	}
	return nil
}
