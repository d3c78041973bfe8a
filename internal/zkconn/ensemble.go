package zkconn

import (
	"fmt"
	"time"
)

// Ensemble identity: which answers may end the session.
//
// A server answers a connect request that presents a session it does not
// know with "expired" (a session id of 0). That ends the session, and
// go-zookeeper then asks the next server for a new one. But a server that
// does not know the session is not always the ensemble that expired it:
// when an address is reused by a server of another ensemble (a pod IP
// given to another namespace's ZooKeeper, a stale DNS answer, a load
// balancer sending one connection elsewhere) that server has never heard
// of the session either, and a new session made there would re-create the
// election's znodes on the wrong ensemble and lead beside the real
// leader. The connect response carries no zxid, so the answer alone
// cannot tell the two apart, and neither can counting answers: one name
// or one load balancer may stand for many servers, and a client may reach
// only one server of its ensemble. The layer asks the server's data
// instead (identity.go), whatever the entries, names and addresses the
// user gave:
//
//   - "expired", to a connect request that presents the session with its
//     last zxid, is believed once the very server that answered (the
//     address the connection reached) holds what this process saw on its
//     ensemble: a probe opens a session there (presenting the same last
//     zxid), reads the Stat of this process's marks, persistent znodes it
//     read with their czxid and ctime (marks.go), and closes that
//     session. A mark held with its czxid and ctime: the server serves
//     this ensemble, the session expired there, and go-zookeeper asks for
//     the next session at once. One server suffices, so a client that
//     reaches a single server of its ensemble (the others down or cut
//     off) ends a dead session by itself. None held: the server is of
//     another ensemble; its answer is refused, the server logged once,
//     its answers are refused without a probe for a session timeout, and
//     for a minute its address is dialled only when the other addresses
//     of its name cannot be.
//     No answer to the probe: refused this time, asked again at the next.
//     A process that saw no mark (no persistent znode read yet) believes
//     the answer, as ZooKeeper's own clients do: it holds nothing another
//     ensemble could take;
//   - a new session, granted where this process has marks, is used only
//     once its server holds one (checked on its connection, after the
//     SASL login and before go-zookeeper sees the session): a server of
//     another ensemble that grants one (it was dialled next, after an
//     expiry believed elsewhere) has it closed at once, and is refused
//     like an "expired" from it;
//   - "expired", to the probe that presents the session without its zxid
//     after every server refused it for two session timeouts (wire.go),
//     once every configured server (every one of the entries, counted by
//     the addresses that answered) has answered so: the ensemble was
//     wiped and redeployed (CURATOR-724), its data is gone, and its
//     servers are behind what this process saw, which is why they
//     refused. The session's last zxid and the marks are then forgotten,
//     so the next session starts from zxid 0 on the rebuilt ensemble and
//     its later reconnects are not refused for the old ensemble's zxids;
//     its fencing tokens are a new generation (see zxidfence's
//     AcceptGeneration);
//
// and refuses any other such answer: the connection is closed before
// go-zookeeper reads it, as if the server had refused the handshake, and
// go-zookeeper tries the next server, which resumes the session if it
// lives.
//
// What it cannot know: a server whose ensemble deleted every mark this
// process holds (the oldest znodes it saw, a root and its parents, and
// the latest; marks.go) looks like another ensemble, so its "expired" is refused
// and the session ends only through the servers that resume or after a
// wipe. An ensemble restored from a copy of this one's data holds the
// marks, and is this ensemble for the layer. Behind one address that
// spreads connections (a load balancer, a Service), the probe may reach
// another server than the one that answered; the new session is checked
// at its own server all the same.

// verdict is one server's answer to the session's connect request.
type verdict uint8

const (
	verdictForgot verdict = iota + 1 // the session without its zxid (the probe): expired
)

// expiryAnswered judges a connect response of c that says the session it
// presented expired, and reports whether the layer believes it; if not,
// err says why, for the connection's read to fail with. It may probe the
// server that answered (blocking, bounded). On a wipe believed it forgets
// the session's last zxid and the marks.
func (w *wireTracker) expiryAnswered(c *wireConn) error {
	server := c.server()
	if c.probe {
		return w.forgotAnswered(server)
	}
	marks := w.marks.list()
	if len(marks) == 0 {
		w.believe()
		return nil
	}
	if err := w.foreignRecently(server); err != nil {
		return err
	}
	id, m, err := w.probeServer(c.addr, server, marks)
	switch id {
	case identityOurs:
		w.log.Info().Str("server", server).Int64("session_id", w.sessionID.Load()).Str("mark", m.path).
			Msg("zookeeper server of this ensemble says the session expired; asking for a new session")
		w.believe()
		return nil
	case identityForeign:
		return w.refuseForeign(server, marks, "says the session expired")
	}
	w.log.Debug().Str("server", server).Err(err).Msg("could not read the data of the server that says the session expired; trying the others")
	return fmt.Errorf("%w: server %s says the session expired, but its data could not be read to tell its ensemble: %w",
		ErrNoSession, server, err)
}

// believe ends the streak after an expiry believed: go-zookeeper asks for
// a new session at once (hosts.go).
func (w *wireTracker) believe() {
	w.mu.Lock()
	w.endStreakLocked()
	w.mu.Unlock()
	w.answer(answerSession)
}

// forgotAnswered counts server's "expired" to the probe that presented the
// session without its zxid, and believes the wipe once every configured
// server has answered so.
func (w *wireTracker) forgotAnswered(server string) error {
	w.mu.Lock()
	w.verdicts[server] = verdictForgot
	forgot := len(w.verdicts)
	if forgot >= w.servers {
		w.log.Warn().Int64("session_id", w.sessionID.Load()).Int64("last_zxid", w.lastZxid.Load()).Int("servers", forgot).
			Msg("every server has forgotten the session: the ensemble was wiped and redeployed; the next session starts from zxid 0")
		w.lastZxid.Store(0)
		w.marks.reset()
		w.generation++
		w.endStreakLocked()
		w.mu.Unlock()
		w.answer(answerSession)
		return nil
	}
	w.mu.Unlock()
	return fmt.Errorf("%w: server %s has forgotten the session; %d of the %d servers have said so: waiting for all",
		ErrNoSession, server, forgot, w.servers)
}

// refuseForeign records that server holds none of the marks (it did
// what), logs it once per server, and returns the error its connection
// fails with.
func (w *wireTracker) refuseForeign(server string, marks []mark, what string) error {
	w.mu.Lock()
	first := !w.foreignLogged[server]
	w.foreignLogged[server] = true
	w.foreignAt[server] = time.Now()
	w.mu.Unlock()
	err := fmt.Errorf("%w: server %s %s, but holds none of the %d znodes this process saw on its ensemble (%s with czxid %#x, ...): another ensemble",
		ErrNoSession, server, what, len(marks), marks[0].path, marks[0].czxid)
	if first {
		w.log.Warn().Str("server", server).Int64("session_id", w.sessionID.Load()).Err(err).
			Msg("zookeeper server of another ensemble refused; trying the others")
	}
	return err
}

// foreignAvoided is how long a server found to serve another ensemble is
// dialled only after the other addresses of its name (resolve.go).
const foreignAvoided = time.Minute

// avoided reports whether server was found to serve another ensemble
// within foreignAvoided.
func (w *wireTracker) avoided(server string) bool {
	w.mu.Lock()
	at, ok := w.foreignAt[server]
	w.mu.Unlock()
	return ok && time.Since(at) <= foreignAvoided
}

// foreignRecently returns the error a server found foreign within a
// session timeout fails with, without asking it again; nil otherwise.
func (w *wireTracker) foreignRecently(server string) error {
	w.mu.Lock()
	at, ok := w.foreignAt[server]
	w.mu.Unlock()
	if !ok || time.Since(at) > w.timeout() {
		return nil
	}
	return fmt.Errorf("%w: server %s serves another ensemble (its data was read %v ago)",
		ErrNoSession, server, time.Since(at).Round(time.Millisecond))
}

// endStreakLocked forgets the answers of a streak of handshakes that did
// not resume the session (w.mu held): the session resumed, or its end was
// believed.
func (w *wireTracker) endStreakLocked() {
	clear(w.verdicts)
	w.refusedSince, w.refusals, w.probeNext = time.Time{}, 0, false
}

// Generation counts the wiped ensembles this Conn has recovered from
// (0 before any): a session made after one serves a rebuilt ensemble,
// whose zxids, and so fencing tokens, started over.
func (s *Conn) Generation() int {
	s.wire.mu.Lock()
	defer s.wire.mu.Unlock()
	return s.wire.generation
}
