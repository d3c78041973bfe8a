package recipe

import (
	"context"
	"errors"
)

// dialArgs are the servers and options a Session was connected with.
type dialArgs struct {
	servers []string
	opts    []SessionOption
}

// errNoDialArgs refuses Sibling on a Session that Connect did not make.
var errNoDialArgs = errors.New("recipe: session has no servers to open a sibling on")

// Sibling opens another, independent session to the same servers with the
// same options (timeout, auth, dialer, logger, metrics) as s, as Connect
// would: it has its own session id, ephemeral znodes and lease, and expires
// on its own. It blocks like Connect (bounded by ctx and the connect
// timeout) and returns Connect's errors. The caller must Close it; closing
// s does not close it. A partition member uses siblings to bound the
// ephemeral znodes one session owns. A sibling of a session handed to a
// watchdog (HandOver) is handed to it too.
func (s *Session) Sibling(ctx context.Context) (*Session, error) {
	if len(s.dial.servers) == 0 {
		return nil, errNoDialArgs
	}
	sib, err := Connect(ctx, s.dial.servers, s.dial.opts...)
	if err != nil {
		return nil, err
	}
	if t := s.takerOf(); t != nil && sib.HandOver(t) == nil {
		t.Adopt(func() { _ = sib.HandOver(nil) }) // a watchdog closed since releases it at once
	}
	return sib, nil
}
