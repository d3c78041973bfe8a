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
// given to another namespace's ZooKeeper, a port taken over) that server
// has never heard of the session either, and a new session made there
// would re-create the election's znodes on the wrong ensemble and lead
// beside the real leader. The connect response carries no zxid, so one
// answer cannot tell the two apart; the configured servers together can.
// The layer therefore believes, since the session was last resumed:
//
//   - "expired", to a connect request that presents the session with its
//     last zxid, once a majority of the configured servers has answered
//     so (the ensemble's quorum expired the session, and every server of
//     it learns that from the quorum leader; another ensemble at one
//     reused address of three is never a majority);
//   - "expired", to the probe that presents the session without its zxid
//     after every server refused it for two session timeouts (wire.go),
//     only once every configured server has answered so: the ensemble was
//     wiped and redeployed (CURATOR-724), its data is gone. The session's
//     last zxid is then forgotten, so the next session starts from zxid 0
//     on the rebuilt ensemble and its later reconnects are not refused
//     for the old ensemble's zxids; its fencing tokens are a new
//     generation (see zxidfence's AcceptGeneration);
//
// and refuses any other such answer: the connection is closed before
// go-zookeeper reads it, as if the server had refused the handshake, the
// address is logged (once per streak), and go-zookeeper tries the next
// server, which resumes the session if it lives.
//
// What it cannot know: when a majority of the configured addresses (every
// one, for a wipe) is taken over by one other ensemble at once, its
// answers look like the real ensemble's, and a new session is made there.
// Nor does it check a new session's data: once an expiry is believed, the
// next session is asked of the next server, and a server of another
// ensemble at a minority address that is ahead in zxids grants it. The
// data cannot settle that alone (a znode missing, or re-created with a
// higher czxid, is what a live ensemble shows after a delete too; only a
// czxid lower than one seen proves another ensemble).

// verdict is one server's answer to the session's connect request.
type verdict uint8

const (
	verdictExpired verdict = iota + 1 // the session with its zxid: expired
	verdictForgot                     // the session without its zxid (the probe): expired
)

// expiryAnswered records that addr answered a connect request presenting
// the session with "expired" (probe: without its zxid) and reports whether
// the layer believes it; if not, err says why, for the connection's read
// to fail with. On a wipe believed it forgets the session's last zxid.
func (w *wireTracker) expiryAnswered(addr string, probe bool) (err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	v := verdictExpired
	if probe {
		v = verdictForgot
	}
	first := w.verdicts[addr] == 0
	w.verdicts[addr] = v
	expired, forgot := 0, 0
	for _, v := range w.verdicts {
		expired++
		if v == verdictForgot {
			forgot++
		}
	}
	switch {
	case probe && forgot >= w.servers:
		w.log.Warn().Int64("session_id", w.sessionID.Load()).Int64("last_zxid", w.lastZxid.Load()).Int("servers", w.servers).
			Msg("every server has forgotten the session: the ensemble was wiped and redeployed; the next session starts from zxid 0")
		w.lastZxid.Store(0)
		w.generation++
		w.endStreakLocked()
		w.answer(answerSession)
		return nil
	case !probe && expired >= w.servers/2+1:
		w.endStreakLocked()
		w.answer(answerSession)
		return nil
	}
	need := fmt.Sprintf("a majority of the %d servers", w.servers)
	if probe {
		need = fmt.Sprintf("all %d servers", w.servers)
	}
	err = fmt.Errorf("%w: server %s says the session expired, but %d of %s do not agree yet (another ensemble at a reused address?)",
		ErrNoSession, addr, w.servers-min(expired, w.servers), need)
	if first {
		w.log.Warn().Str("server", addr).Int64("session_id", w.sessionID.Load()).Err(err).
			Msg("expiry not believed from this server alone; trying the others")
	}
	return err
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
