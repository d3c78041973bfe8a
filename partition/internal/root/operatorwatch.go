package root

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/internal/retry"
	"github.com/zkelect/zkelect/recipe"
)

// This file watches the operator state's znode (<root>/operator) and sends
// every version of it to the loop; a missing znode is the zero state.

// StoredOperator is the operator state with the version of the znode it
// was read from (-1: no znode).
type StoredOperator struct {
	OperatorState
	Version int32
}

// watchOperator reports the operator state each time it changes.
func (w *Watcher) watchOperator(ctx context.Context) {
	retry.ForeverWaking(ctx, NewBackoff(), w.sess.NextConnect, func() error { return w.operatorOnce(ctx) },
		func(err error) { w.failed(err).Msg("watch operator state") })
}

// operatorOnce reports the operator state and waits until it may have
// changed or ctx ends. A missing znode is watched for its creation.
func (w *Watcher) operatorOnce(ctx context.Context) error {
	ctx, forget := context.WithCancel(ctx)
	defer forget() // the watch, if it has not fired
	data, st, ch, err := w.sess.GetW(ctx, w.operator)
	if errors.Is(err, zk.ErrNoNode) {
		var ok bool
		if ok, _, ch, err = w.sess.ExistsW(ctx, w.operator); err != nil {
			return err
		}
		if ok { // created meanwhile: read it with a data watch
			return nil
		}
		st, data = &zk.Stat{Version: -1}, nil
	} else if err != nil {
		return err
	}
	state, err := DecodeOperatorState(data)
	if err != nil {
		w.log.Warn().Err(err).Str("znode", w.operator).Msg("ignoring unreadable operator state")
	}
	if w.send(ctx, Update{Operator: &StoredOperator{OperatorState: state, Version: st.Version}}) {
		WaitWatch(ctx, ch)
	}
	return nil
}

// ReadOperatorState returns the operator state stored at p (the root's
// OperatorNode) and the version of its znode (-1: none, the zero state).
// Errors: ctx's, or ZooKeeper's wrapped with p (ACLDenied).
func ReadOperatorState(ctx context.Context, sess *recipe.Session, p string) (OperatorState, int32, error) {
	if err := ctx.Err(); err != nil {
		return OperatorState{}, 0, err
	}
	data, st, err := sess.Get(ctx, p)
	if errors.Is(err, zk.ErrNoNode) {
		return OperatorState{}, -1, nil
	}
	if err != nil {
		return OperatorState{}, 0, fmt.Errorf("partition: read %s: %w", p, ACLDenied(err))
	}
	s, err := DecodeOperatorState(data)
	if err != nil {
		return OperatorState{}, 0, fmt.Errorf("partition: %s: %w", p, err)
	}
	return s, st.Version, nil
}
