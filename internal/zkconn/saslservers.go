package zkconn

import (
	"time"
)

// SASL per server. A server that refuses the session's credentials speaks
// for itself only: during a rolling change of the servers' JAAS
// configuration or passwords, or when one server was restarted without
// it (KAFKA-13461), the others still accept them. So a refusal closes
// that connection and go-zookeeper tries the next server; the session is
// over for good (ErrAuthFailed: no connection is made again, Dial fails,
// Ended is closed) only once every configured server has refused within
// a session timeout.
//
// The exchange has a bound of its own, like the handshake's: at least the
// handshake bound, doubled after an exchange that timed out and set to
// one and a half times the last one that finished, never over two thirds
// of the session timeout. DIGEST-MD5 takes two round trips after the
// connect response, which a bound learnt from the connect response alone
// (one round trip) never allows on a slow link.

// saslServers is the session's record of SASL refusals and of how long
// the exchange takes (under wireTracker.mu).
type saslServers struct {
	refused map[string]time.Time // server (as dialled) to its latest refusal
	slow    time.Duration        // the learnt bound; 0: the handshake bound
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

// saslTook records an exchange that finished after d, at addr: the
// credentials are good there, and the bound keeps half as much again in
// hand.
func (w *wireTracker) saslTook(addr string, d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.saslLog.slow = d * 3 / 2
	delete(w.saslLog.refused, addr)
}

// saslRefusedBy records that addr refused the credentials and reports
// whether every configured server has refused them within a session
// timeout.
func (w *wireTracker) saslRefusedBy(addr string) (everywhere bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	if w.saslLog.refused == nil {
		w.saslLog.refused = map[string]time.Time{}
	}
	w.saslLog.refused[addr] = now
	n := 0
	for _, at := range w.saslLog.refused {
		if now.Sub(at) <= w.timeout() {
			n++
		}
	}
	return n >= w.servers
}

// Ended returns a channel closed when the session can never be had
// again: Close was called, every configured server refused its SASL
// credentials, or a server answered that it requires a SASL login
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
