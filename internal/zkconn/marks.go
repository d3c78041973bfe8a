package zkconn

import (
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

// maxMarks bounds the marks kept: the latest paths seen.
const maxMarks = 8

// mark is one persistent znode seen.
type mark struct {
	path         string
	czxid, ctime int64
}

// ensembleMarks is a Conn's marks, the latest seen last.
type ensembleMarks struct {
	mu    sync.Mutex
	marks []mark
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
	if n := len(m.marks); n > 0 && m.marks[n-1] == k {
		return // the common case: the same election read again
	}
	m.marks = slices.DeleteFunc(m.marks, func(o mark) bool { return o.path == path })
	if len(m.marks) >= maxMarks {
		m.marks = slices.Delete(m.marks, 0, 1)
	}
	m.marks = append(m.marks, k)
}

// list returns the marks, the latest first.
func (m *ensembleMarks) list() []mark {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := slices.Clone(m.marks)
	slices.Reverse(out)
	return out
}

// gone forgets the mark of path: the ensemble says it no longer holds it
// (this process deleted it, or read that it does not exist).
func (m *ensembleMarks) gone(path string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.marks = slices.DeleteFunc(m.marks, func(o mark) bool { return o.path == path })
}

// held reports whether any mark is known.
func (m *ensembleMarks) held() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.marks) > 0
}

// reset forgets every mark: the ensemble was wiped and redeployed, its
// data is gone (ensemble.go).
func (m *ensembleMarks) reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.marks = nil
}

// noteStat records a Stat the session read at path (marks.go).
func (s *Conn) noteStat(path string, st *zk.Stat) { s.wire.marks.saw(path, st) }
