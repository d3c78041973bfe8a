package zkconn

import (
	"context"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/internal/jute"
)

// Create2Request is a create2 operation for Multi and SendMulti: its
// response carries the created znode's Stat.
type Create2Request = jute.Create2Request

// MultiCall is a multi request in flight: SendMulti writes it, Result
// waits for its reply, so that callers can pipeline reads behind it (the
// server answers a session's requests in order, so a read written after
// it sees its effects).
type MultiCall struct {
	s    *Conn
	call *pendingCall
}

// SendMulti writes ops as one multi transaction (the operation types of
// Multi) on the ready connection and returns without waiting for the
// reply. Errors: ErrBadRequest for an operation type Multi does not take,
// a *PathError for a path ZooKeeper refuses (both before anything is
// sent), an error wrapping zk.ErrConnectionClosed when no connection took
// it in time (the request may still have reached a server), ctx's error
// when ctx ended first. ctx bounds only the write.
func (s *Conn) SendMulti(ctx context.Context, ops ...any) (*MultiCall, error) {
	call, frame, err := s.multiFrame(ops)
	if err != nil {
		return nil, err
	}
	if err := s.write(ctx, call, frame, false); err != nil {
		return nil, fmt.Errorf("multi: %w", err)
	}
	return &MultiCall{s: s, call: call}, nil
}

// Result waits for the reply, at most callBound of the session timeout or
// until ctx ends, and returns what Multi returns. An error wrapping
// zk.ErrConnectionClosed (or ctx's) with no responses means the outcome is
// unknown.
func (c *MultiCall) Result(ctx context.Context) ([]zk.MultiResponse, error) {
	body, err := c.s.await(ctx, c.call)
	if err != nil {
		return nil, fmt.Errorf("multi: %w", err)
	}
	return decodeMulti(body)
}
