package recipe

import (
	"context"
	"errors"
	"fmt"

	"github.com/zkelect/zkelect/zxidfence"
)

// This file reads an election from outside: who leads, who waits, and how
// that changes, without taking part.

// Participant is one candidate of an election as ZooKeeper holds it.
type Participant struct {
	// ID is the data of the candidate's znode: the participant id given
	// with WithParticipantID, or a Curator LeaderLatch's id.
	ID string
	// Znode is the full path of the candidate's znode.
	Znode string
	// Seq is the sequence number ZooKeeper appended to the znode's name.
	Seq int32
	// Token is the znode's czxid: the fencing token this candidate holds
	// when it leads.
	Token zxidfence.Token
	// SessionID is the znode's ephemeralOwner, the session that created it
	// (0 for a persistent znode).
	SessionID int64
	// Leader is true for the first participant in election order.
	Leader bool
}

// Observation is one report of Observe.
type Observation struct {
	// Leader is the current leader; meaningful only when HasLeader.
	Leader Participant
	// HasLeader is false when the election has no participant (or its path
	// does not exist).
	HasLeader bool
	// Err is set when the election could not be read. Observe keeps trying
	// after a transient error (connection loss, session expiry, denied by
	// ACL) and reports the leader again once it can; after an error that
	// cannot heal (invalid path, nil or closed session) the channel closes.
	Err error
}

// Leader returns the current leader of the election at path: the candidate
// with the lowest sequence number (see naming.go for the order). It returns
// an error wrapping ErrNoLeader when the election has no candidate or the
// path does not exist. It blocks until ZooKeeper answers or ctx is done;
// while the session is disconnected it waits for the next connection, at
// most the session timeout. Other errors: ErrNilSession, ErrInvalidPath,
// ErrSessionClosed, ErrACLDenied (wrapped), zk.ErrConnectionClosed
// (wrapped: no connection came, or it dropped before the answer), ctx's
// error.
func Leader(ctx context.Context, s *Session, path string) (Participant, error) {
	if err := checkElection(s, path); err != nil {
		return Participant{}, err
	}
	r, err := readLeader(ctx, s, path)
	if err != nil {
		return Participant{}, sessionErr(s, err)
	}
	if !r.ok {
		return Participant{}, fmt.Errorf("election %s: %w", path, ErrNoLeader)
	}
	return r.leader, nil
}

// Participants returns every candidate of the election at path in election
// order, the leader first (with Leader set). A missing path or an election
// without candidates gives an empty slice. Children whose names carry no
// sequence suffix are not candidates and are left out. It blocks as Leader
// does and returns the same errors, except ErrNoLeader.
func Participants(ctx context.Context, s *Session, path string) ([]Participant, error) {
	if err := checkElection(s, path); err != nil {
		return nil, err
	}
	ps, err := readParticipants(ctx, s, path)
	return ps, sessionErr(s, err)
}

// sessionErr marks err with ErrSessionClosed when the session was closed,
// which is then why the read failed.
func sessionErr(s *Session, err error) error {
	if err == nil || errors.Is(err, ErrSessionClosed) {
		return err
	}
	select {
	case <-s.Done():
		return fmt.Errorf("%w: %w", ErrSessionClosed, err)
	default:
		return err
	}
}

// Observe reports the leader of the election at path each time it changes,
// including to "no leader", without taking part. The first observation
// describes the state when Observe starts.
//
// It holds one watch: a data watch on the leader's znode, or, while there is
// no leader, a child watch on path (an exists watch while path does not
// exist); followers joining or leaving cost it nothing. While the session is
// disconnected or expired it reports an observation whose Err wraps
// ErrSuspended or ErrSessionExpired (the leader is then unknown); once the
// session is usable again it reads the election afresh and reports the
// leader, so no change is missed for good (changes that undo each other
// while it is cut off are not seen). Read errors (ErrACLDenied among them)
// are reported and retried with backoff.
//
// The channel is closed when ctx is done, or after reporting an error that
// cannot heal (invalid path, nil session, ErrSessionClosed); its watch is
// then removed from the server. A slow
// reader delays the next observation but never makes Observe skip the
// latest state.
func Observe(ctx context.Context, s *Session, path string) <-chan Observation {
	ch := make(chan Observation, 1)
	if err := checkElection(s, path); err != nil {
		ch <- Observation{Err: err}
		close(ch)
		return ch
	}
	o := &observer{s: s, path: path, out: ch, kick: make(chan struct{}, 1)}
	go o.run(ctx)
	return ch
}

// checkElection validates the arguments shared by Leader, Participants and
// Observe.
func checkElection(s *Session, path string) error {
	if s == nil {
		return ErrNilSession
	}
	if err := validatePath(path); err != nil {
		return err
	}
	select {
	case <-s.Done():
		return fmt.Errorf("election %s: %w", path, ErrSessionClosed)
	default:
		return nil
	}
}
