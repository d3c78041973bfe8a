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
// Once /zookeeper/config has been read with client addresses in it
// (reconfig.go), its members replace the seed in the rounds: servers added
// by a reconfiguration are dialled, removed ones are not. When a whole
// round of members fails without a session, the next round adds the seed
// back (but for servers a reconfiguration removed), so an ensemble
// reachable only through the names the user gave (its configuration naming
// addresses the client cannot reach) is still found.
//
// The pause is for a round of servers that did not answer (a dead or
// unreachable ensemble is not dialled in a loop). A round in which a
// server answered is not one: after a server granted a new session, or
// answered that the session expired (and the layer believed it,
// ensemble.go), the anchor is dialled again without a pause, so a session
// that expired is replaced in a round trip (the Java client's
// StaticHostProvider pauses the same way, only after a whole round of
// failed addresses). A server that resumed the session spares the pause
// too, but not more than maxResumedRedials times in a row: one that
// resumes the session and drops the connection again at once (a SetWatches
// frame over its jute.maxbuffer, a server failing under load) is dialled
// at most maxResumedRedials+1 times a pause.
type serverList struct {
	log zerolog.Logger

	mu        sync.Mutex
	seed      []string // as given, "host:port" (go-zookeeper's FormatServers)
	members   []string // from /zookeeper/config; nil while unknown
	removed   []string // former members, left out of the seed's rounds too
	round     []string // the entries of the round in progress
	pos       int      // the next entry of round
	last      string   // the entry last returned by Next
	anchor    string   // the entry last connected to (or a round's last): dialled again after a pause
	fresh     bool     // the anchor was chosen for the round in progress: no pause before it
	succeeded bool     // a session was made during the round in progress
	withSeed  bool     // the round in progress includes the seed beside members
	answer    answer   // how a server answered since the anchor was last dialled
	resumed   int      // dials of the anchor in a row without a pause for a resumed session's sake
	pauses    int      // the pauses asked of go-zookeeper (retryStart), for the log and tests
}

// maxResumedRedials is how many times in a row a resumed session spares
// the pause: a session moved back and forth between its client and
// another connection presenting it (a session closed on demand, as
// testenv.ExpireSession does) reconnects without a pause, a server that
// drops every connection it resumes is still paced.
const maxResumedRedials = 3

func newServerList(log zerolog.Logger) *serverList { return &serverList{log: log} }

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
	return len(l.entriesLocked(l.withSeed))
}

// Next returns the entry to dial next. Each round holds every entry once,
// shuffled, the anchor (the entry last connected to, or else the first
// round's last) last: after a connection drops the other servers are tried
// first, and retryStart is true when the anchor comes round again, so
// go-zookeeper waits a second once per round of failed attempts, before
// the server it left, as with its own provider (which pauses when it comes
// back round to the server it last connected to); not when a server
// answered since the anchor was last dialled (see answered).
func (l *serverList) Next() (server string, retryStart bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pos >= len(l.round) {
		l.newRoundLocked()
	}
	server = l.round[l.pos]
	l.pos++
	l.last = server
	if server != l.anchor {
		return server, false
	}
	retry := false
	switch {
	case l.fresh || l.answer == answerSession:
		l.resumed = 0
	case l.answer == answerResumed && l.resumed < maxResumedRedials:
		l.resumed++
	default:
		retry, l.resumed = true, 0
	}
	l.fresh, l.answer = false, answerNone
	if retry {
		l.pauses++
		l.log.Debug().Str("server", server).Int("pauses", l.pauses).
			Msg("no zookeeper server answered a whole round: pausing a second before the next")
	}
	return server, retry
}

// answer is how a server answered a connect request, for the pause.
type answer uint8

const (
	answerNone    answer = iota
	answerResumed        // it resumed the session
	answerSession        // it granted a new session, or said the session expired (believed, ensemble.go)
)

// answered records that a server answered the connect request (a): the
// next dial of the anchor goes without go-zookeeper's pause, the network
// and the servers being fine (after a resumed session, not twice in a
// row; see serverList). Called by the wire tracker (wire.go), never under
// l.mu.
func (l *serverList) answered(a answer) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.answer = max(l.answer, a)
}

// pausesAsked returns how many times Next asked go-zookeeper to pause.
func (l *serverList) pausesAsked() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.pauses
}

// newRoundLocked starts a round: the members (the seed too every other
// round while rounds fail), shuffled, the anchor last.
func (l *serverList) newRoundLocked() {
	l.withSeed = !l.succeeded && l.members != nil && !l.withSeed && l.round != nil
	l.round = l.entriesLocked(l.withSeed)
	rand.Shuffle(len(l.round), func(i, j int) { l.round[i], l.round[j] = l.round[j], l.round[i] })
	if i := slices.Index(l.round, l.anchor); i >= 0 {
		l.round = append(slices.Delete(l.round, i, i+1), l.anchor)
	} else { // none yet, or no longer an entry: this round's last, dialled without a pause
		l.anchor, l.fresh = l.round[len(l.round)-1], true
	}
	l.pos, l.succeeded = 0, false
}

// Connected records that the entry last returned by Next made a session:
// it becomes the anchor.
func (l *serverList) Connected() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.succeeded = true
	l.anchor = l.last
}

// entriesLocked returns the entries of a new round: the members of the
// ensemble's configuration when known (and the seed too with seed),
// otherwise the seed.
func (l *serverList) entriesLocked(seed bool) []string {
	if l.members == nil {
		return slices.Clone(l.seed)
	}
	out := slices.Clone(l.members)
	if seed {
		for _, s := range l.seed {
			if !slices.Contains(out, s) && !slices.Contains(l.removed, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// servers returns the entries a round holds now (the members, or the seed).
func (l *serverList) servers() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.entriesLocked(false)
}

// setMembers makes members (the ensemble's configuration, "host:port"
// each) the entries of the next rounds, starting a new round at once so a
// removed server is not dialled again; false when they are the members
// already.
func (l *serverList) setMembers(members []string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if slices.Equal(slices.Sorted(slices.Values(members)), slices.Sorted(slices.Values(l.members))) && l.members != nil {
		return false
	}
	for _, m := range l.members {
		if !slices.Contains(members, m) && !slices.Contains(l.removed, m) {
			l.removed = append(l.removed, m)
		}
	}
	l.removed = slices.DeleteFunc(l.removed, func(m string) bool { return slices.Contains(members, m) })
	l.members = slices.Clone(members)
	l.pos, l.withSeed, l.succeeded = len(l.round), false, true // a new round at once, not a failed one
	return true
}
