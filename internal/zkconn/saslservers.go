package zkconn

import (
	"time"
)

// SASL per server. A server that refuses the session's credentials speaks
// for itself only: during a rolling change of the servers' JAAS
// configuration or passwords, or when one server was restarted without
// it (KAFKA-13461), the others still accept them. So a refusal closes
// that connection and go-zookeeper tries the next server. Refusals are
// not counted per entry: one name, or one load balancer, may stand for
// several servers, only some of which refuse. They are counted in a row,
// whichever server refused (the address reached is logged): a login
// accepted anywhere ends the streak. The session is over for good
// (ErrAuthFailed: no connection is made again, Dial fails, Ended is
// closed) only once the ensemble as a whole refuses: maxSASLStreak
// refusals in a row, and at least two rounds of the entries. Behind one
// address that spreads connections over three servers, one refusing
// server refuses six logins in a row only by chance (1 in 729 with a
// random choice, never with a round-robin). Credentials no server has
// accepted yet (at Dial) are proven good nowhere: one refusal in a row
// per entry refuses them for good, so a typo fails Dial at once.
//
// The exchange has a bound of its own, like the handshake's: at least the
// handshake bound, doubled after an exchange that timed out and set to
// one and a half times the last one that finished, never over two thirds
// of the session timeout. DIGEST-MD5 takes two round trips after the
// connect response, which a bound learnt from the connect response alone
// (one round trip) never allows on a slow link.

// maxSASLStreak is the least number of refusals in a row that end the
// session for its credentials.
const maxSASLStreak = 6

// saslServers is the session's record of SASL refusals and of how long
// the exchange takes (under wireTracker.mu).
type saslServers struct {
	streak int           // refusals since a login was last accepted
	proven bool          // a server has accepted the credentials once
	slow   time.Duration // the learnt bound; 0: the handshake bound
}

// saslBound is how long one SASL exchange may take.
func (w *wireTracker) saslBound() time.Duration {
	b := w.handshakeBound()
	w.mu.Lock()
	slow := w.saslLog.slow
	w.mu.Unlock()
	return max(b, min(slow, w.timeout()*2/3))
}

// saslTimedOut records an exchange given up after bound: the next may take
// twice as long.
func (w *wireTracker) saslTimedOut(bound time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.saslLog.slow = max(w.saslLog.slow, 2*bound)
}

// saslTook records an exchange that finished after d, at server: the
// credentials are good there, the streak of refusals ends, and the bound
// keeps half as much again in hand.
func (w *wireTracker) saslTook(server string, d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.saslLog.slow = d * 3 / 2
	w.saslLog.streak, w.saslLog.proven = 0, true
}

// saslRefusedBy records that server (as reached) refused the credentials
// and reports whether the ensemble as a whole has refused them: refusals
// in a row, with no login accepted between them, at least maxSASLStreak
// of them and twice the entries; before any server accepted them, one
// refusal per entry.
func (w *wireTracker) saslRefusedBy(server string) (everywhere bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.saslLog.streak++
	w.log.Debug().Str("server", server).Int("in_a_row", w.saslLog.streak).Msg("SASL refusal counted")
	if !w.saslLog.proven {
		return w.saslLog.streak >= w.servers
	}
	return w.saslLog.streak >= max(maxSASLStreak, 2*w.servers)
}

// Ended returns a channel closed when the session can never be had
// again: Close was called, the ensemble as a whole refused its SASL
// credentials (saslservers.go), or a server answered that it requires a SASL login
// (SESSIONCLOSEDREQUIRESASLAUTH, saslrequired.go). EndErr says which.
func (s *Conn) Ended() <-chan struct{} { return s.ended }

// EndErr returns why the session ended for good: the *AuthError of the
// last refusal, or of the answer requiring a SASL login (wrapping a
// *CodeError of code -124); errors.Is(err, ErrAuthFailed) for both;
// ErrClosed after Close, or nil while it has not.
func (s *Conn) EndErr() error {
	if err := s.wire.auth.cause(); err != nil {
		return err
	}
	if s.isClosed() {
		return ErrClosed
	}
	return nil
}
