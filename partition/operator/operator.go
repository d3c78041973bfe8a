package operator

import (
	"context"
	"errors"
	"fmt"
	"path"

	"github.com/go-zookeeper/zk"

	rootdata "github.com/zkelect/zkelect/partition/internal/root"
	"github.com/zkelect/zkelect/recipe"
)

// This file is the Go API that changes a root's operator state (State):
// every change is a read-modify-write of
// <root>/operator, conditional on the version read, retried when another
// operator wrote in between. Members follow the znode and act on it.

// maxOperatorRetries bounds the writes an Operator tries when other
// writers keep changing the state between its read and its write.
const maxOperatorRetries = 64

// Operator changes the operator state of one root: drains, freezes, pins,
// moves and weights, in the spirit of Apache Helix's EVACUATE and
// maintenance mode and Kafka's preferred-leader election. Every method is
// idempotent and reports whether it changed anything. Its methods are safe
// for concurrent use; they block on ZooKeeper, checking ctx between
// requests.
type Operator struct {
	sess *recipe.Session
	root string
	path string
	acl  []zk.ACL
}

// New returns the Operator of root on sess. acl is the ACL of the
// znodes it creates (<root>/operator, and the root's own if missing): nil
// selects zk.WorldACL(zk.PermAll); give the members' Config.ACL (e.g.
// recipe.GroupACL()) so that only the group may change the operator
// state. It does no I/O. It returns ErrNilSession or an error wrapping
// ErrInvalidRoot.
func New(sess *recipe.Session, root string, acl []zk.ACL) (*Operator, error) {
	if sess == nil {
		return nil, ErrNilSession
	}
	if err := rootdata.ValidateRoot(root); err != nil {
		return nil, err
	}
	if acl == nil {
		acl = zk.WorldACL(zk.PermAll)
	}
	return &Operator{sess: sess, root: root, path: path.Join(root, rootdata.OperatorNode), acl: acl}, nil
}

// State returns the operator state as stored now (the zero state when the
// znode does not exist).
func (o *Operator) State(ctx context.Context) (State, error) {
	var s State
	err := o.retry(ctx, func() (err error) {
		s, _, err = rootdata.ReadOperatorState(ctx, o.sess, o.path)
		return err
	})
	return s, err
}

// update applies change to the stored state and writes it back if change
// reports a change, conditional on the version read; when another writer
// got in between, it reads and applies change again. change may refuse
// with an error (returned as is, nothing written).
func (o *Operator) update(ctx context.Context, change func(*State) (bool, error)) (bool, error) {
	var changed bool
	err := o.retry(ctx, func() (err error) {
		changed, err = o.updateOnce(ctx, change)
		return err
	})
	return changed, err
}

// retry runs f until it succeeds, fails for a reason other than ZooKeeper
// being out of reach (connection loss, or the session expired: a new one
// follows, and the request may be tried again on it), the session is
// closed or ended for good, or ctx ends, backing off from 50ms to 2s; a
// pause ends as soon as the session connects again.
func (o *Operator) retry(ctx context.Context, f func() error) error {
	b := rootdata.NewBackoff()
	for {
		next := o.sess.NextConnect()
		err := f()
		if err == nil || !rootdata.Unreachable(err) || ctx.Err() != nil {
			return err
		}
		select {
		case <-o.sess.Done():
			return err
		case <-o.sess.Ended():
			return err
		default:
		}
		b.WaitOr(ctx, next)
	}
}

// updateOnce is one update, retried while others write in between.
func (o *Operator) updateOnce(ctx context.Context, change func(*State) (bool, error)) (bool, error) {
	for range maxOperatorRetries {
		cur, version, err := rootdata.ReadOperatorState(ctx, o.sess, o.path)
		if err != nil {
			return false, err
		}
		next := cur.Clone()
		changed, err := change(&next)
		if err != nil || !changed {
			return false, err
		}
		data, err := next.Encode()
		if err != nil {
			return false, err
		}
		err = o.write(ctx, data, version)
		if errors.Is(err, zk.ErrBadVersion) || errors.Is(err, zk.ErrNodeExists) || errors.Is(err, zk.ErrNoNode) {
			continue // another writer got in between
		}
		if err != nil {
			return false, fmt.Errorf("partition: write %s: %w", o.path, rootdata.ACLDenied(err))
		}
		return true, nil
	}
	return false, fmt.Errorf("partition: write %s: changed by others %d times in a row", o.path, maxOperatorRetries)
}

// write stores data over version, or creates the znode (and the root's)
// when version is -1.
func (o *Operator) write(ctx context.Context, data []byte, version int32) error {
	if version >= 0 {
		_, err := o.sess.Set(ctx, o.path, data, version)
		return err
	}
	if _, err := rootdata.EnsurePaths(ctx, o.sess, o.root, o.acl, rootdata.NewRootLayout, 0); err != nil {
		return err
	}
	_, err := o.sess.Create(ctx, o.path, data, 0, o.acl)
	return err
}

// refused returns an error wrapping ErrRefused.
func refused(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrRefused, fmt.Sprintf(format, args...))
}
