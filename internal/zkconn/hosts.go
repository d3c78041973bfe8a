package zkconn

import (
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/rs/zerolog"
)

// serverList is the layer's go-zookeeper HostProvider (zk.WithHostProvider).
// It keeps the servers as the user gave them ("host:port", the seed) and
// hands go-zookeeper one entry per connection attempt; the name is resolved
// only when that entry is dialled (resolve.go), so a server whose address
// moved behind its name (a pod restarted behind a headless Service) is
// reached at its new address, and a name that does not resolve yet costs
// one failed attempt, not the Dial. go-zookeeper's own DNSHostProvider
// resolves every name once, in Init, and fails Connect when one does not
// resolve (ZOOKEEPER-2184 and ZOOKEEPER-1576, fixed in the Java client's
// StaticHostProvider the same way).
//
// The seed is in every round. Once /zookeeper/config has been read with
// client addresses in it (reconfig.go), the members named there that are
// not servers of the seed are added to the rounds, on trial: each is
// dialled under a short bound (dialroute.go) until it has answered once,
// and one that timed out maxTrialTimeouts times without ever answering (an
// address the client cannot route to: a pod address behind a load
// balancer, NodePort or NAT) is dropped from the rounds. A round in which
// no server answered gives the dropped members another trial (the fault
// may have been the client's network, not the route). A server of the
// seed that a reconfiguration removed from the ensemble is left out of the
// rounds (it is no longer of the ensemble), unless no other server is left.
//
// The pause is for a round of servers that did not answer (a dead or
// unreachable ensemble is not dialled in a loop); it is the layer's own
// (dialroute.go), a twentieth of the session timeout, and never
// go-zookeeper's fixed second: Next never asks go-zookeeper for it. A
// round in which a server answered is not one: after a server granted a
// new session, or answered that the session expired (and the layer
// believed it, ensemble.go), the anchor is dialled again without a pause,
// so a session that expired is replaced in a round trip (the Java client's
// StaticHostProvider pauses the same way, only after a whole round of
// failed addresses). A server that resumed the session spares the pause
// too, but not more than maxResumedRedials times in a row: one that
// resumes the session and drops the connection again at once (a SetWatches
// frame over its jute.maxbuffer, a server failing under load) is dialled
// at most maxResumedRedials+1 times a pause.
type serverList struct {
	log  zerolog.Logger
	quit <-chan struct{} // closed at Close: Next asks go-zookeeper for its pause, which Close ends

	mu       sync.Mutex
	seed     []string          // as given, "host:port" (go-zookeeper's FormatServers)
	members  []string          // from /zookeeper/config, dialable client addresses; nil while unknown
	ids      map[string]string // the configuration's server ids to their client address ("" when not dialable)
	removed  []string          // addresses of servers a reconfiguration removed, left out of the rounds
	trials   map[string]*trial // members that are not servers of the seed, and how their dials fared
	round    []string          // the entries of the round in progress
	pos      int               // the next entry of round
	last     string            // the entry last returned by Next
	anchor   string            // the entry last connected to (or a round's last): dialled again after a pause
	fresh    bool              // the anchor was chosen for the round in progress: no pause before it
	heard    bool              // a server answered during the round in progress
	answer   answer            // how a server answered since the anchor was last dialled
	resumed  int               // dials of the anchor in a row without a pause for a resumed session's sake
	pauseDue bool              // the next dial waits the pause first (dialroute.go)
	pauses   int               // the pauses taken, for the log and tests
}

// trial is how the dials of a member that is not a server of the seed
// fared.
type trial struct {
	timeouts int  // dials or handshakes that timed out in a row, before any answer
	proven   bool // it answered once: reachable
}

// maxTrialTimeouts is how many timed-out dials drop a member on trial.
const maxTrialTimeouts = 2

// maxResumedRedials is how many times in a row a resumed session spares
// the pause: a session moved back and forth between its client and
// another connection presenting it (a session closed on demand, as
// testenv.ExpireSession does) reconnects without a pause, a server that
// drops every connection it resumes is still paced.
const maxResumedRedials = 3

// newServerList returns a host provider whose Next asks go-zookeeper for
// its pause once quit is closed.
func newServerList(log zerolog.Logger, quit <-chan struct{}) *serverList {
	return &serverList{log: log, quit: quit, ids: map[string]string{}, trials: map[string]*trial{}}
}

// Init keeps servers, "host:port" each, as the seed; it resolves nothing
// and never fails (CheckServers has checked the list).
func (l *serverList) Init(servers []string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seed = slices.Clone(servers)
	return nil
}

// Len returns the number of entries a round holds now.
func (l *serverList) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.entriesLocked())
}

// Next returns the entry to dial next. Each round holds every entry once,
// shuffled, the anchor (the entry last connected to, or else the first
// round's last) last: after a connection drops the other servers are tried
// first, and the pause is due when the anchor comes round again without an
// answer since it was last dialled (see answered), as go-zookeeper's own
// provider pauses when it comes back round to the server it last connected
// to. The pause is the layer's (takePause): retryStart is false but
// once the Conn is closing, when go-zookeeper's pause is the only place
// its connect loop sees Close (which ends that pause at once).
func (l *serverList) Next() (server string, retryStart bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	select {
	case <-l.quit:
		retryStart = true
	default:
	}
	if l.pos >= len(l.round) {
		l.newRoundLocked()
	}
	server = l.round[l.pos]
	l.pos++
	l.last = server
	if server != l.anchor {
		return server, retryStart
	}
	switch {
	case l.fresh || l.answer == answerSession:
		l.resumed = 0
	case l.answer == answerResumed && l.resumed < maxResumedRedials:
		l.resumed++
	default:
		l.pauseDue, l.resumed = true, 0
	}
	l.fresh, l.answer = false, answerNone
	return server, retryStart
}

// takePause reports whether a pause is due before the dial about to be
// made, and counts it.
func (l *serverList) takePause() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.pauseDue {
		return false
	}
	l.pauseDue = false
	l.pauses++
	return true
}

// answer is how a server answered a connect request, for the pause.
type answer uint8

const (
	answerNone    answer = iota
	answerResumed        // it resumed the session
	answerSession        // it granted a new session, or said the session expired (believed, ensemble.go)
)

// answered records that a server answered the connect request (a): the
// next dial of the anchor goes without a pause, the network and the
// servers being fine (after a resumed session, not twice in a row; see
// serverList). Called by the wire tracker (wire.go), never under l.mu.
func (l *serverList) answered(a answer) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.answer = max(l.answer, a)
	l.heard = true
}

// pausesAsked returns how many pauses were taken.
func (l *serverList) pausesAsked() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.pauses
}

// newRoundLocked starts a round: the entries, shuffled, the anchor last.
// After a round without an answer the dropped members get a new trial.
func (l *serverList) newRoundLocked() {
	if l.round != nil && !l.heard {
		for _, t := range l.trials {
			t.timeouts = 0
		}
	}
	l.round = l.entriesLocked()
	rand.Shuffle(len(l.round), func(i, j int) { l.round[i], l.round[j] = l.round[j], l.round[i] })
	if i := slices.Index(l.round, l.anchor); i >= 0 {
		l.round = append(slices.Delete(l.round, i, i+1), l.anchor)
	} else { // none yet, or no longer an entry: this round's last, dialled without a pause
		l.anchor, l.fresh = l.round[len(l.round)-1], true
	}
	l.pos, l.heard = 0, false
}

// Connected records that the entry last returned by Next made a session:
// it becomes the anchor.
func (l *serverList) Connected() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.heard = true
	l.anchor = l.last
}

// entriesLocked returns the entries of a new round: the seed (but for
// servers a reconfiguration removed) and the members on trial not
// dropped; never none.
func (l *serverList) entriesLocked() []string {
	out := slices.DeleteFunc(slices.Clone(l.seed), func(s string) bool { return slices.Contains(l.removed, s) })
	for _, m := range l.members {
		if t := l.trials[m]; !slices.Contains(out, m) && (t == nil || !t.dropped()) {
			out = append(out, m)
		}
	}
	switch {
	case len(out) > 0:
		return out
	case len(l.members) > 0:
		return slices.Clone(l.members)
	}
	return slices.Clone(l.seed)
}

// dropped reports whether the member proved unreachable.
func (t *trial) dropped() bool { return !t.proven && t.timeouts >= maxTrialTimeouts }

// servers returns the entries a round holds now.
func (l *serverList) servers() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.entriesLocked()
}

// onTrial reports whether entry is a member not of the seed that has not
// answered yet: it is dialled under the short bound.
func (l *serverList) onTrial(entry string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.trials[entry]
	return t != nil && !t.proven
}

// tried records how a dial of a member on trial ended: it answered, or
// it timed out (a refused connection proves nothing either way).
func (l *serverList) tried(entry string, answered bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.trials[entry]
	switch {
	case t == nil:
	case answered:
		t.proven, t.timeouts = true, 0
	default:
		t.timeouts++
		if t.dropped() {
			l.log.Warn().Str("server", entry).Int("timeouts", t.timeouts).
				Msg("zookeeper ensemble member from /zookeeper/config unreachable from this client; dropped from the rounds (the servers given are kept)")
		}
	}
}
