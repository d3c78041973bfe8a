package bench

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"sync"

	"github.com/go-zookeeper/zk"
)

// The fleet simulation's driver: it plays every member of a fleet but one
// (ScenarioFleetSim). A simulated member is what the real member reads of
// it, written as a member writes it: its member znode (ephemeral, under
// <root>/members, on one of the driver's two sessions, whose id the
// record names) and its record (<root>/owners/<id>: the JSON of
// partition's records, gzipped above 16 KB, its leadership tokens
// growing). Its leaderships exist only in its record: no member reads
// another's elections to assign or to follow the records, so 10,000,000
// candidate znodes (which would not fit this machine) change nothing the
// real member computes; the real member's own share are real elections.

// simRecord is a simulated member's record: the fields of partition's
// record it sets, in their order, so encoding/json writes the bytes a
// member would (keys of leading sorted).
type simRecord struct {
	Session int64             `json:"session"`
	Leading map[string]uint64 `json:"leading"`
	Buckets bool              `json:"buckets,omitempty"`
}

// compressRecordAbove is the size above which partition gzips a record.
const compressRecordAbove = 16 << 10

// simFleet is the driver of one fleet: member 0 is the real one, 1..M-1
// simulated. Member i leads the shards whose index is i modulo M. One
// goroutine uses it.
type simFleet struct {
	root    string
	format  string // the shards' ids: format applied to their index
	shards  []string
	members int
	conns   [2]*zk.Conn // first incarnations on 0, restarted ones on 1
	on      []int       // member to the index in conns of its session
	epoch   []uint64    // member to its incarnation (1, then 2 once restarted)
	renewed []map[int]uint64
	cands   *simCandidates // nil until a restart needs them
}

// simMemberID names member i.
func simMemberID(i int) string { return fmt.Sprintf("m%05d", i) }

// newSimFleet connects the driver's two sessions and writes members
// 1..members-1 of a fleet of shards on root, bounded by ctx.
func (e *env) newSimFleet(ctx context.Context, root, format string, members, n int) (*simFleet, error) {
	f := &simFleet{root: root, format: format, shards: shardIDs(format, n), members: members, on: make([]int, members), epoch: make([]uint64, members),
		renewed: make([]map[int]uint64, members)}
	for i := range f.conns {
		c, err := e.rawConnTo(ctx, e.cluster.Addrs(), 2*e.sessionTimeout)
		if err != nil {
			f.close()
			return nil, err
		}
		f.conns[i] = c
	}
	for _, dir := range []string{"members", "owners"} {
		if err := ensurePath(f.conns[0], path.Join(root, dir)); err != nil {
			f.close()
			return nil, err
		}
	}
	if err := f.writeAll(ctx); err != nil {
		f.close()
		return nil, err
	}
	return f, nil
}

// writeAll writes every simulated member's znode and record, eight at a
// time.
func (f *simFleet) writeAll(ctx context.Context) error {
	next := make(chan int)
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := range next {
				if err := f.start(i); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	var err error
feed:
	for i := 1; i < f.members; i++ {
		select {
		case next <- i:
		case err = <-errs:
			break feed
		case <-ctx.Done():
			err = ctx.Err()
			break feed
		}
	}
	close(next)
	wg.Wait()
	close(errs)
	return errors.Join(err, <-errs)
}

// start registers member i's first incarnation and writes its record.
func (f *simFleet) start(i int) error {
	f.epoch[i] = 1
	if _, err := f.conns[0].Create(f.memberPath(i), nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		return fmt.Errorf("bench: register %s: %w", simMemberID(i), err)
	}
	data, err := f.record(i)
	if err != nil {
		return err
	}
	if _, err := f.conns[0].Create(f.recordPath(i), data, 0, zk.WorldACL(zk.PermAll)); err != nil {
		return fmt.Errorf("bench: record of %s: %w", simMemberID(i), err)
	}
	return nil
}

func (f *simFleet) memberPath(i int) string { return path.Join(f.root, "members", simMemberID(i)) }
func (f *simFleet) recordPath(i int) string { return path.Join(f.root, "owners", simMemberID(i)) }

// record encodes member i's record: each of its shards with the token of
// its incarnation, or the later one a renewal gave it.
func (f *simFleet) record(i int) ([]byte, error) {
	r := simRecord{Session: f.conns[f.on[i]].SessionID(), Leading: make(map[string]uint64, len(f.shards)/f.members+1), Buckets: true}
	for j := i; j < len(f.shards); j += f.members {
		tok := f.epoch[i]<<40 | uint64(j+1)
		if t, ok := f.renewed[i][j]; ok {
			tok = t
		}
		r.Leading[f.shards[j]] = tok
	}
	data, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("bench: encode record of %s: %w", simMemberID(i), err)
	}
	if len(data) <= compressRecordAbove {
		return data, nil
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed) // a valid level cannot fail
	_, _ = zw.Write(data)                              // writes to a bytes.Buffer cannot fail
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("bench: compress record of %s: %w", simMemberID(i), err)
	}
	return buf.Bytes(), nil
}

// renewal returns member i's record with the k-th of its leaderships
// renewed (a later token: a leadership it lost and won again), as its
// next write; apply it with write.
func (f *simFleet) renewal(i, k int) ([]byte, error) {
	j := i + (k%(len(f.shards)/f.members))*f.members
	if f.renewed[i] == nil {
		f.renewed[i] = map[int]uint64{}
	}
	f.renewed[i][j] = (f.epoch[i]+uint64(len(f.renewed[i]))+1)<<40 | uint64(j+1)
	return f.record(i)
}

// write writes member i's record data.
func (f *simFleet) write(i int, data []byte) error {
	if _, err := f.conns[f.on[i]].Set(f.recordPath(i), data, -1); err != nil {
		return fmt.Errorf("bench: write record of %s: %w", simMemberID(i), err)
	}
	return nil
}

// leave deletes member i's znode: a crash once its session expired, or
// the first half of a restart.
func (f *simFleet) leave(i int) error {
	if err := f.conns[f.on[i]].Delete(f.memberPath(i), -1); err != nil {
		return fmt.Errorf("bench: delete member znode of %s: %w", simMemberID(i), err)
	}
	return nil
}

// rejoin is member i's next incarnation after leave: its znode on the
// other session, then its record of that session with new tokens (it won
// its elections again).
func (f *simFleet) rejoin(i int) error {
	f.on[i] = 1 - f.on[i]
	f.epoch[i] += 1 << 8 // above every renewal of the incarnation before
	f.renewed[i] = nil
	if _, err := f.conns[f.on[i]].Create(f.memberPath(i), nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		return fmt.Errorf("bench: register %s again: %w", simMemberID(i), err)
	}
	data, err := f.record(i)
	if err != nil {
		return err
	}
	return f.write(i, data)
}

// close ends the driver's sessions: every simulated member leaves.
func (f *simFleet) close() {
	if f.cands != nil {
		f.cands.close()
	}
	for _, c := range f.conns {
		if c != nil {
			c.Close()
		}
	}
}
