package recipe_test

import (
	"encoding/binary"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkelect/zkelect/recipe"
)

// connectRecorder dials like net.DialTimeout and keeps, for every
// connection, the first bytes written on it: the connect request exactly
// as the session sent it.
type connectRecorder struct {
	mu       sync.Mutex
	conns    []net.Conn
	requests [][]byte
}

func (r *connectRecorder) dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	c, err := net.DialTimeout(network, addr, timeout)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.conns = append(r.conns, c)
	r.requests = append(r.requests, nil)
	return &firstWrite{Conn: c, r: r, i: len(r.requests) - 1}, nil
}

// lastZxids returns the last zxid seen presented by each connect request.
func (r *connectRecorder) lastZxids() []int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []int64
	for _, b := range r.requests {
		if len(b) >= 16 {
			out = append(out, int64(binary.BigEndian.Uint64(b[8:])))
		}
	}
	return out
}

// cut closes the latest connection, as a network fault would.
func (r *connectRecorder) cut() {
	r.mu.Lock()
	defer r.mu.Unlock()
	_ = r.conns[len(r.conns)-1].Close()
}

type firstWrite struct {
	net.Conn
	r    *connectRecorder
	i    int
	once sync.Once
}

func (f *firstWrite) Write(b []byte) (int, error) {
	f.once.Do(func() {
		f.r.mu.Lock()
		f.r.requests[f.i] = append([]byte(nil), b...)
		f.r.mu.Unlock()
	})
	return f.Conn.Write(b)
}

// TestReconnectPresentsTheHighestZxidSeen: a session that reads only
// through its own calls (as Observe, Leader and every candidate do)
// reconnects presenting the zxid of the newest view it has read, so that
// no server behind that view accepts it (ZooKeeper refuses a client that
// has seen a later zxid than its own): a client never reads an older view
// than one it saw. go-zookeeper alone presents the zxid of its own last
// reply, 0 here.
func TestReconnectPresentsTheHighestZxidSeen(t *testing.T) {
	rec := &connectRecorder{}
	s := session(t, zkc.ConnectString(), recipe.WithDialer(rec.dial))
	raw := rawConn(t, zkc.ConnectString())
	path := electionPath(t)
	ensurePath(t, raw, path)
	var newest int64
	for i := range 5 {
		p, err := raw.Create(path+"/n-", []byte{byte(i)}, zk.FlagSequence, zk.WorldACL(zk.PermAll))
		if err != nil {
			t.Fatal(err)
		}
		_, st, err := raw.Exists(p)
		if err != nil {
			t.Fatal(err)
		}
		newest = st.Czxid
	}
	names, _, err := s.Children(t.Context(), path)
	if err != nil || len(names) != 5 {
		t.Fatalf("session's read: %v, %v", names, err)
	}
	rec.cut()
	eventually(t, "a reconnect of the session", func() bool { return len(rec.lastZxids()) >= 2 && s.Connected() })
	zxids := rec.lastZxids()
	if got := zxids[len(zxids)-1]; got < newest {
		t.Fatalf("the reconnect presented last zxid %#x, older than %#x, which the session had read (connect requests: %#x)",
			got, newest, zxids)
	}
}
