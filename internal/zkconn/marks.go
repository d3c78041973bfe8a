package zkconn

import (
	"cmp"
	"slices"
	"sync"

	"github.com/go-zookeeper/zk"
)

// An ensemble's marks: persistent znodes this process saw on it, each with
// the zxid and the time of its creation (Stat.Czxid, Stat.Ctime). A
// server that holds one of them with the same czxid and ctime holds the
// data of the ensemble this process saw: a czxid names one transaction of
// one ensemble's history, and its ctime is the quorum leader's clock when
// it was applied, so another ensemble shows the same pair only if it was
// restored from this one's data. The marks are what identity.go compares
// a server with; they are taken from the replies the session reads anyway
// (an election's Children, Exists and Get, Create2), never by a request
// of their own. Ephemeral znodes are no marks: they go with their session.
// A mark the session deletes, or reads as missing, is forgotten: the
// ensemble no longer holds it.
//
// Which are kept: the maxStable with the smallest czxid (the oldest
// znodes seen: a root, its members directory, the parents, which live as
// long as the deployment) and the maxLatest seen last. The latest alone
// would be, in a partition manager, shard election znodes, the ones most
// likely deleted at runtime (a shard removed and pruned); were all of
// them gone when the session expires, the real ensemble would be refused
// as foreign until the wipe path (ensemble.go) forgot the marks.

// maxStable and maxLatest bound the marks kept (maxMarks in all): the
// oldest znodes seen and the latest paths seen.
const (
	maxStable = 4
	maxLatest = 4
	maxMarks  = maxStable + maxLatest
)

// mark is one persistent znode seen.
type mark struct {
	path         string
	czxid, ctime int64
}

// ensembleMarks is a Conn's marks: stable by czxid, smallest first;
// latest, the latest seen last. A path may be in both.
type ensembleMarks struct {
	mu     sync.Mutex
	stable []mark
	latest []mark
}

// saw records path's Stat read from the ensemble, when it is a mark: a
// persistent znode created by a transaction (the root and /zookeeper,
// with czxid 0, are on every ensemble).
func (m *ensembleMarks) saw(path string, st *zk.Stat) {
	if st == nil || st.EphemeralOwner != 0 || st.Czxid <= 0 {
		return
	}
	k := mark{path: path, czxid: st.Czxid, ctime: st.Ctime}
	m.mu.Lock()
	defer m.mu.Unlock()
	if n := len(m.latest); n > 0 && m.latest[n-1] == k {
		return // the common case: the same election read again
	}
	m.forget(path)
	if len(m.latest) >= maxLatest {
		m.latest = slices.Delete(m.latest, 0, 1)
	}
	m.latest = append(m.latest, k)
	i, _ := slices.BinarySearchFunc(m.stable, k, func(a, b mark) int { return cmp.Compare(a.czxid, b.czxid) })
	if i < maxStable {
		m.stable = slices.Insert(m.stable, i, k)
		m.stable = m.stable[:min(len(m.stable), maxStable)]
	}
}

// forget drops path's marks; m.mu is held.
func (m *ensembleMarks) forget(path string) {
	is := func(o mark) bool { return o.path == path }
	m.latest = slices.DeleteFunc(m.latest, is)
	m.stable = slices.DeleteFunc(m.stable, is)
}

// list returns the marks, each once: the latest first, then the stable
// ones (the oldest first) not among them.
func (m *ensembleMarks) list() []mark {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := slices.Clone(m.latest)
	slices.Reverse(out)
	for _, k := range m.stable {
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// gone forgets the mark of path: the ensemble says it no longer holds it
// (this process deleted it, or read that it does not exist).
func (m *ensembleMarks) gone(path string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.forget(path)
}

// held reports whether any mark is known.
func (m *ensembleMarks) held() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.latest) > 0 || len(m.stable) > 0
}

// reset forgets every mark: the ensemble was wiped and redeployed, its
// data is gone (ensemble.go).
func (m *ensembleMarks) reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.latest, m.stable = nil, nil
}

// noteStat records a Stat the session read at path (marks.go).
func (s *Conn) noteStat(path string, st *zk.Stat) { s.wire.marks.saw(path, st) }
