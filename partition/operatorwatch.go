package partition

import (
	"context"
	"errors"

	"github.com/go-zookeeper/zk"
)

// This file watches the operator state's znode (<root>/operator) and sends
// every version of it to the loop; a missing znode is the zero state.

// storedOperator is the operator state with the version of the znode it
// was read from (-1: no znode).
type storedOperator struct {
	OperatorState
	version int32
}

// watchOperator reports the operator state each time it changes.
func (w *watcher) watchOperator(ctx context.Context) {
	retry := newBackoff()
	for ctx.Err() == nil {
		if err := w.operatorOnce(ctx); err != nil && ctx.Err() == nil { // not our own leaving
			w.log.Warn().Err(err).Msg("watch operator state")
			retry.wait(ctx)
			continue
		}
		retry.reset()
	}
}

// operatorOnce reports the operator state and waits until it may have
// changed or ctx ends. A missing znode is watched for its creation.
func (w *watcher) operatorOnce(ctx context.Context) error {
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
	state, err := decodeOperatorState(data)
	if err != nil {
		w.log.Warn().Err(err).Str("znode", w.operator).Msg("ignoring unreadable operator state")
	}
	if w.send(ctx, update{operator: &storedOperator{OperatorState: state, version: st.Version}}) {
		waitWatch(ctx, ch)
	}
	return nil
}
