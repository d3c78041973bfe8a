package zxidfence

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sync"

	"github.com/go-zookeeper/zk"
)

// Leader identifies a writer to the ZooKeeper guard: its election znode,
// the version of that znode it saw when it became leader, and its fence.
type Leader struct {
	// Znode is the full path of the writer's election znode.
	Znode string
	// Version is the election znode's data version (zk.Stat.Version); -1
	// checks only that the znode exists.
	Version int32
	// Fence is the writer's fence: its token is the czxid of Znode.
	Fence Fence
}

// Elected is what an election's leadership tells about itself;
// recipe.Leadership satisfies it.
type Elected interface {
	Znode() string
	Version() int32
	Token() Token
}

// LeaderOf returns the Leader for a leadership in generation gen.
func LeaderOf(e Elected, gen uint64) Leader {
	return Leader{Znode: e.Znode(), Version: e.Version(), Fence: Fence{Generation: gen, Token: e.Token()}}
}

// ZooKeeper writes target znodes for leaders, fenced twice inside ZooKeeper
// itself: every write is one multi that checks the writer's election znode
// still exists at the version it had (so a deposed leader's write fails even
// before anyone else writes), and that sets the target only at the version
// the guard read (so the fence recorded in the target, see AppendZnodeData,
// is compared and replaced atomically). A lower fence than the target's is
// refused. Safe for concurrent use.
//
// While it is the only writer of a target, a write costs one multi: the
// guard remembers the fence and version its last write left in each target
// (one small entry per target path) and reads the target again only when
// the multi finds it changed. Deleting a target znode discards its fence
// (as dropping the row would for the SQL guard): do not delete targets that
// leaders write.
//
// Over a ZooKeeperSession (a *recipe.Session) every request ends with its
// ctx. Over go-zookeeper's *zk.Conn (NewZooKeeper), whose requests take no
// context, each method checks ctx before every request it sends, and a
// request in flight is bounded by the connection's own timeouts.
type ZooKeeper struct {
	conn ZooKeeperSession
	cfg  config

	mu    sync.Mutex
	known map[string]targetState // targets this guard wrote last, by path
}

// errConflict is a multi that lost a race on the target: read and retry.
var errConflict = errors.New("zxidfence: target changed concurrently")

// NewZooKeeper returns a ZooKeeper guard over go-zookeeper's conn (a
// *zk.Conn), whose requests take no context (see ZooKeeper). It accepts
// WithACL (for targets it creates), WithMetrics and WithLogger; a nil conn
// is an error. NewZooKeeperSession is the same over a ctx-aware session.
func NewZooKeeper(conn ZooKeeperConn, opts ...Option) (*ZooKeeper, error) {
	if conn == nil || isNilPointer(conn) {
		return nil, errors.New("zxidfence: NewZooKeeper needs a non-nil *zk.Conn")
	}
	return NewZooKeeperSession(withoutContext{conn}, opts...)
}

// NewZooKeeperSession returns a ZooKeeper guard over s (a
// *recipe.Session), every request bounded by the ctx of the method that
// sends it. It accepts WithACL (for targets it creates), WithMetrics and
// WithLogger; a nil s is an error.
func NewZooKeeperSession(s ZooKeeperSession, opts ...Option) (*ZooKeeper, error) {
	if s == nil || isNilPointer(s) {
		return nil, errors.New("zxidfence: NewZooKeeperSession needs a non-nil session")
	}
	return &ZooKeeper{conn: s, cfg: newConfig(opts), known: make(map[string]targetState)}, nil
}

// Write stores data in target for leader l: it creates target (its parent
// must exist) or replaces its data, if l's election znode still exists at
// l.Version and l.Fence is not lower than the fence recorded in target. It
// retries when another writer changes target between its read and its
// multi, until it wins, is refused, or ctx ends.
//
// Errors: ErrNotLeader (the election znode is gone or changed; when target
// already holds a higher fence the error also wraps a *StaleTokenError),
// *StaleTokenError (ErrStaleToken), *GenerationError, ErrNoToken,
// ErrInvalidKey (a bad path), ErrNotFenced (target holds foreign data),
// ctx's error, or ZooKeeper's (wrapped).
func (z *ZooKeeper) Write(ctx context.Context, target string, l Leader, data []byte) error {
	err := z.write(ctx, target, l, data)
	z.cfg.metrics.observe(KindZooKeeper, target, l.Fence, err)
	if rejectReason(err) != "" {
		logRejection(z.cfg.logger, KindZooKeeper, err)
	}
	return err
}

func (z *ZooKeeper) write(ctx context.Context, target string, l Leader, data []byte) error {
	if err := errors.Join(validZnodePath(target), validZnodePath(l.Znode)); err != nil {
		return err
	}
	if l.Fence.Token.IsZero() {
		return fmt.Errorf("%w for %q", ErrNoToken, target)
	}
	check := &zk.CheckVersionRequest{Path: l.Znode, Version: l.Version}
	payload := AppendZnodeData(nil, l.Fence, data)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		cur, cached, err := z.state(ctx, target)
		if err != nil {
			return err
		}
		if err := admit(target, cur.fence, l.Fence); err != nil {
			if cached { // confirm against ZooKeeper and report its fence
				z.forget(target)
				continue
			}
			return err
		}
		next, err := z.multi(ctx, target, check, cur.version, payload)
		switch {
		case err == nil:
			z.remember(target, targetState{fence: l.Fence, version: next})
			return nil
		case errors.Is(err, errConflict):
			z.forget(target)
		case errors.Is(err, ErrNotLeader):
			z.forget(target)
			return z.explainNotLeader(ctx, target, l.Fence, err)
		default:
			return err
		}
	}
}

// explainNotLeader adds to a deposed writer's ErrNotLeader the
// *StaleTokenError naming both fences when target already holds a higher
// one (a newer leader has written), so that the rejection says who won.
func (z *ZooKeeper) explainNotLeader(ctx context.Context, target string, f Fence, notLeader error) error {
	cur, err := z.get(ctx, target)
	if err != nil {
		return notLeader
	}
	if stale := admit(target, cur.fence, f); stale != nil {
		return fmt.Errorf("%w; %w", notLeader, stale)
	}
	return notLeader
}

// targetState is what the guard last knew of a target: its fence and data
// version (-1: absent).
type targetState struct {
	fence   Fence
	version int32
}

// state returns target's state from the cache of this guard's last write
// (cached true) or else read from ZooKeeper. A stale cache only costs a
// failed multi: fences and versions only go up.
func (z *ZooKeeper) state(ctx context.Context, target string) (targetState, bool, error) {
	z.mu.Lock()
	st, ok := z.known[target]
	z.mu.Unlock()
	if ok {
		return st, true, nil
	}
	st, err := z.get(ctx, target)
	return st, false, err
}

func (z *ZooKeeper) remember(target string, st targetState) {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.known[target] = st
}

func (z *ZooKeeper) forget(target string) {
	z.mu.Lock()
	defer z.mu.Unlock()
	delete(z.known, target)
}

// get reads target's fence and data version.
func (z *ZooKeeper) get(ctx context.Context, target string) (targetState, error) {
	b, st, err := z.conn.Get(ctx, target)
	if errors.Is(err, zk.ErrNoNode) {
		return targetState{version: -1}, nil
	}
	if err != nil {
		return targetState{}, fmt.Errorf("zxidfence: read %s: %w", target, err)
	}
	f, _, err := ParseZnodeData(b)
	if err != nil {
		return targetState{}, fmt.Errorf("%s: %w", target, err)
	}
	return targetState{fence: f, version: st.Version}, nil
}

// multi checks the election znode and creates target (version -1) or sets
// it at version, as one transaction, and returns target's new version. The
// check failing is ErrNotLeader; losing a race on target is errConflict.
func (z *ZooKeeper) multi(ctx context.Context, target string, check *zk.CheckVersionRequest, version int32, payload []byte) (int32, error) {
	var op any = &zk.SetDataRequest{Path: target, Data: payload, Version: version}
	if version < 0 {
		op = &zk.CreateRequest{Path: target, Data: payload, Acl: z.cfg.acl}
	}
	res, err := z.conn.Multi(ctx, check, op)
	if err == nil {
		if len(res) == 2 && res[1].Stat != nil {
			return res[1].Stat.Version, nil
		}
		return 0, nil // created: version 0
	}
	if len(res) == 2 {
		if res[0].Error != nil {
			return 0, fmt.Errorf("%w: %s: %w", ErrNotLeader, check.Path, res[0].Error)
		}
		if raced(op, res[1].Error) {
			return 0, errConflict
		}
		if _, create := op.(*zk.CreateRequest); create && errors.Is(res[1].Error, zk.ErrNoNode) {
			return 0, fmt.Errorf("zxidfence: fenced write of %s: %w", target, missingParent(target, res[1].Error))
		}
	}
	return 0, fmt.Errorf("zxidfence: fenced write of %s: %w", target, err)
}

// raced reports whether op failed because target changed after it was read:
// created, changed or deleted by someone else. A create failing with
// ErrNoNode means the parent is missing, which retrying cannot fix.
func raced(op any, err error) bool {
	switch op.(type) {
	case *zk.CreateRequest:
		return errors.Is(err, zk.ErrNodeExists)
	default:
		return errors.Is(err, zk.ErrBadVersion) || errors.Is(err, zk.ErrNoNode)
	}
}

// Read returns target's recorded fence and the writer's data, or the zero
// Fence and nil when target does not exist.
func (z *ZooKeeper) Read(ctx context.Context, target string) (Fence, []byte, error) {
	if err := validZnodePath(target); err != nil {
		return Fence{}, nil, err
	}
	if err := ctx.Err(); err != nil {
		return Fence{}, nil, err
	}
	b, _, err := z.conn.Get(ctx, target)
	if errors.Is(err, zk.ErrNoNode) {
		return Fence{}, nil, nil
	}
	if err != nil {
		return Fence{}, nil, fmt.Errorf("zxidfence: read %s: %w", target, err)
	}
	f, data, err := ParseZnodeData(b)
	if err != nil {
		return Fence{}, nil, fmt.Errorf("%s: %w", target, err)
	}
	return f, data, nil
}

// Highest returns target's recorded fence, or the zero Fence when target
// does not exist.
func (z *ZooKeeper) Highest(ctx context.Context, target string) (Fence, error) {
	f, _, err := z.Read(ctx, target)
	return f, err
}

// AcceptGeneration moves target to generation gen (see Guard), keeping its
// data; it creates target empty if absent. It needs no leadership: it is
// the operator's command. It returns the fence target held before.
func (z *ZooKeeper) AcceptGeneration(ctx context.Context, target string, gen uint64, reason string) (Fence, error) {
	if err := validZnodePath(target); err != nil {
		return Fence{}, err
	}
	for {
		if err := ctx.Err(); err != nil {
			return Fence{}, err
		}
		prev, err := z.moveGeneration(ctx, target, gen)
		if errors.Is(err, errConflict) {
			continue
		}
		if err != nil {
			return prev, err
		}
		next := Fence{Generation: gen}
		logGeneration(z.cfg.logger, KindZooKeeper, target, prev, next, reason)
		z.cfg.metrics.generationChanged(KindZooKeeper, target, next)
		return prev, nil
	}
}

func (z *ZooKeeper) moveGeneration(ctx context.Context, target string, gen uint64) (Fence, error) {
	b, st, err := z.conn.Get(ctx, target)
	if errors.Is(err, zk.ErrNoNode) {
		_, err = z.conn.Create(ctx, target, AppendZnodeData(nil, Fence{Generation: gen}, nil), 0, z.cfg.acl)
		switch {
		case errors.Is(err, zk.ErrNodeExists):
			return Fence{}, errConflict
		case errors.Is(err, zk.ErrNoNode):
			err = missingParent(target, err)
		}
		return Fence{}, wrapZK("create "+target, err)
	}
	if err != nil {
		return Fence{}, fmt.Errorf("zxidfence: read %s: %w", target, err)
	}
	prev, data, err := ParseZnodeData(b)
	if err != nil {
		return Fence{}, fmt.Errorf("%s: %w", target, err)
	}
	next, err := nextGeneration(target, prev, gen)
	if err != nil {
		return prev, err
	}
	_, err = z.conn.Set(ctx, target, AppendZnodeData(nil, next, data), st.Version)
	if errors.Is(err, zk.ErrBadVersion) || errors.Is(err, zk.ErrNoNode) {
		return prev, errConflict
	}
	return prev, wrapZK("set "+target, err)
}

// missingParent explains a create of target that failed with ErrNoNode
// (err): it is target's parent that is missing, not target.
func missingParent(target string, err error) error {
	return fmt.Errorf("parent znode %s does not exist (create it first): %w", path.Dir(target), err)
}

func wrapZK(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("zxidfence: %s: %w", what, err)
}
