package zkconn

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/internal/jute"
	"github.com/zkelect/zkelect/testenv"
)

// Contract tests: what the layer assumes of go-zookeeper v1.0.4, checked
// against the library itself over net.Pipe, with a scripted server on the
// other end. Each failure names the assumption an upgrade broke; see the
// package documentation for why the layer needs it.

// recorder is the client's end of the pipe, recording every Write and the
// size of every Read buffer go-zookeeper passes.
type recorder struct {
	net.Conn
	mu     sync.Mutex
	writes [][]byte
	reads  []int
}

func (r *recorder) Write(b []byte) (int, error) {
	r.mu.Lock()
	r.writes = append(r.writes, append([]byte(nil), b...))
	r.mu.Unlock()
	return r.Conn.Write(b)
}

func (r *recorder) Read(b []byte) (int, error) {
	r.mu.Lock()
	r.reads = append(r.reads, len(b))
	r.mu.Unlock()
	return r.Conn.Read(b)
}

func (r *recorder) snapshot() (writes [][]byte, reads []int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]byte(nil), r.writes...), append([]int(nil), r.reads...)
}

// script is the server's end: it reads the client's frames and writes
// replies, recording the frame lengths it sent.
type script struct {
	t    *testing.T
	conn net.Conn
	sent []int // body lengths of the frames written, in order
}

func (s *script) read() []byte {
	s.t.Helper()
	var n [4]byte
	if _, err := io.ReadFull(s.conn, n[:]); err != nil {
		s.t.Errorf("server: read length: %v", err)
		return nil
	}
	b := make([]byte, binary.BigEndian.Uint32(n[:]))
	if _, err := io.ReadFull(s.conn, b); err != nil {
		s.t.Errorf("server: read body: %v", err)
	}
	return b
}

func (s *script) write(body []byte) {
	s.t.Helper()
	s.sent = append(s.sent, len(body))
	if _, err := s.conn.Write(binary.BigEndian.AppendUint32(nil, uint32(len(body)))); err != nil {
		s.t.Errorf("server: write: %v", err)
	}
	if _, err := s.conn.Write(body); err != nil {
		s.t.Errorf("server: write: %v", err)
	}
}

// handshake answers the connect request with session 0x42, 3s timeout.
func (s *script) handshake() []byte {
	req := s.read()
	b := binary.BigEndian.AppendUint32(nil, 0) // protocol version
	b = binary.BigEndian.AppendUint32(b, 3000) // timeout ms
	b = binary.BigEndian.AppendUint64(b, 0x42) // session id
	b = binary.BigEndian.AppendUint32(b, 16)   // password length
	s.write(append(b, make([]byte, 16)...))
	return req
}

// replyHeader encodes a reply header.
func replyHeader(xid int32, zxid int64, code int32) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(xid))
	b = binary.BigEndian.AppendUint64(b, uint64(zxid))
	return binary.BigEndian.AppendUint32(b, uint32(code))
}

// statReply answers an exists request with an empty Stat.
func statReply(xid int32) []byte {
	return append(replyHeader(xid, 7, 0), make([]byte, jute.StatLen)...)
}

// lines collects go-zookeeper's log lines with their arguments.
type lines struct {
	mu  sync.Mutex
	got []loggedLine
}

type loggedLine struct {
	format string
	args   []any
}

func (l *lines) Printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, loggedLine{format, args})
}

// pipeClient connects go-zookeeper to a scripted server over net.Pipe.
func pipeClient(t *testing.T, cb zk.EventCallback, log zk.Logger) (*zk.Conn, *recorder, *script) {
	t.Helper()
	client, server := net.Pipe()
	rec := &recorder{Conn: client}
	dialed := false
	dial := func(string, string, time.Duration) (net.Conn, error) {
		if dialed {
			return nil, errors.New("one connection only")
		}
		dialed = true
		return rec, nil
	}
	if log == nil {
		log = &lines{}
	}
	conn, _, err := zk.Connect([]string{"127.0.0.1:2181"}, 3*time.Second, zk.WithDialer(dial), zk.WithLogInfo(false),
		zk.WithEventCallback(cb), zk.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = server.Close()
		conn.Close()
	})
	return conn, rec, &script{t: t, conn: server}
}

// roundTrip runs one exists request, which the scripted server answers.
func roundTrip(t *testing.T, conn *zk.Conn, srv *script) {
	t.Helper()
	done := exists(conn)
	req := srv.read()
	srv.write(statReply(int32(binary.BigEndian.Uint32(req))))
	wait(t, done, "exists")
}

// exists runs conn.Exists in the background; the scripted server answers.
func exists(conn *zk.Conn) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, _, err := conn.Exists("/a")
		done <- err
	}()
	return done
}

func wait(t *testing.T, done <-chan error, what string) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: no answer within 10s", what)
	}
}

// TestContractConnectRequestIs44Bytes: the layer rewrites the connect
// request in place (wiped-ensemble recovery, last-seen zxid), so it must
// find it, in one Write, with the layout it edits.
func TestContractConnectRequestIs44Bytes(t *testing.T) {
	_, rec, srv := pipeClient(t, nil, nil)
	req := srv.handshake()
	writes, _ := rec.snapshot()
	if len(writes) == 0 || len(req) != jute.ConnectRequestLen || len(writes[0]) != 4+jute.ConnectRequestLen {
		t.Fatalf("go-zookeeper's connect request is %d bytes (first Write %d bytes); the layer assumes %d (no readOnly byte) written at once",
			len(req), len(writes[0]), jute.ConnectRequestLen)
	}
	if !jute.IsConnectRequest(writes[0]) {
		t.Fatal("the layer does not recognise go-zookeeper's connect request")
	}
	if got := int32(binary.BigEndian.Uint32(req[12:])); got != 3000 {
		t.Fatalf("connect request layout changed: timeout field %d, want 3000 (ms)", got)
	}
	if pw := binary.BigEndian.Uint32(req[24:]); pw != 16 {
		t.Fatalf("connect request layout changed: password length %d at offset 24, want 16", pw)
	}
}

// TestContractOneWritePerFrame: the layer stamps requests and interleaves
// its own frames between go-zookeeper's, which holds only if every frame
// is written with one Write call.
func TestContractOneWritePerFrame(t *testing.T) {
	conn, rec, srv := pipeClient(t, nil, nil)
	srv.handshake()
	roundTrip(t, conn, srv)
	writes, _ := rec.snapshot()
	for i, w := range writes {
		if len(w) < 4 || int(binary.BigEndian.Uint32(w)) != len(w)-4 {
			t.Fatalf("Write %d of %d bytes is not exactly one frame: go-zookeeper no longer writes each frame with one Write", i, len(w))
		}
	}
}

// TestContractReadsStopAtFrameEnds: the layer hands a reply to its caller,
// and marks a watched read answered, as the reply is read off the wire,
// before go-zookeeper handles any later frame. That holds only if
// go-zookeeper reads each frame with exact-size io.ReadFull (the length,
// then the body), never ahead into the next frame.
func TestContractReadsStopAtFrameEnds(t *testing.T) {
	conn, rec, srv := pipeClient(t, nil, nil)
	srv.handshake()
	roundTrip(t, conn, srv)
	_, reads := rec.snapshot()
	var units []int // the byte runs the server sent: length, body, length, body...
	for _, n := range srv.sent {
		units = append(units, 4, n)
	}
	// net.Pipe hands a reader at most what one Write sent, so each Read
	// returns at most the rest of the run it is in; go-zookeeper must ask
	// for no more than that rest.
	pos, left := 0, units[0]
	for i, n := range reads {
		if pos >= len(units) {
			break // a read still waiting for more
		}
		if n > left {
			t.Fatalf("Read %d asked for %d bytes with %d left in the frame's %s: go-zookeeper reads ahead of frame boundaries",
				i, n, left, map[bool]string{true: "length", false: "body"}[pos%2 == 0])
		}
		left -= n
		for left == 0 && pos < len(units) {
			pos++
			if pos < len(units) {
				left = units[pos]
			}
		}
	}
}

// TestContractEventCallbackRunsOnTheReceiveLoop: the layer routes watch
// events and session changes under its lock in the event callback and
// relies on it running synchronously on go-zookeeper's receive loop, in
// frame order with the replies.
func TestContractEventCallbackRunsOnTheReceiveLoop(t *testing.T) {
	onLoop := make(chan bool, 16)
	cb := func(ev zk.Event) {
		if ev.Type != zk.EventNodeDataChanged {
			return
		}
		buf := make([]byte, 1<<16)
		onLoop <- strings.Contains(string(buf[:runtime.Stack(buf, false)]), "(*Conn).recvLoop")
	}
	_, _, srv := pipeClient(t, cb, nil)
	srv.handshake()
	ev := replyHeader(jute.XidWatchEvent, -1, 0)
	ev = binary.BigEndian.AppendUint32(ev, uint32(zk.EventNodeDataChanged))
	ev = binary.BigEndian.AppendUint32(ev, uint32(zk.StateSyncConnected))
	ev = binary.BigEndian.AppendUint32(ev, 2)
	srv.write(append(ev, "/a"...))
	select {
	case ok := <-onLoop:
		if !ok {
			t.Fatal("go-zookeeper ran the event callback off its receive loop: the layer's event order breaks")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the event callback never ran for a watch event")
	}
}

// TestContractNegativeXidRepliesIgnored: the layer's own requests carry
// negative xids so that go-zookeeper ignores their replies (neither a ping
// nor a notification), logging one line the layer filters by its format.
func TestContractNegativeXidRepliesIgnored(t *testing.T) {
	var log lines
	var disconnected sync.Once
	lost := make(chan struct{})
	cb := func(ev zk.Event) {
		if ev.Type == zk.EventSession && ev.State == zk.StateDisconnected {
			disconnected.Do(func() { close(lost) })
		}
	}
	conn, _, srv := pipeClient(t, cb, &log)
	srv.handshake()
	layerXid := int32(xidCallBase - 1)
	srv.write(statReply(layerXid)) // a reply to one of the layer's requests
	done := exists(conn)
	req := srv.read()
	srv.write(statReply(int32(binary.BigEndian.Uint32(req))))
	wait(t, done, "exists behind a reply with a negative xid")
	select {
	case <-lost:
		t.Fatal("go-zookeeper dropped the connection over a reply with a negative xid")
	default:
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	for _, l := range log.got {
		if len(l.args) == 1 && l.args[0] == any(layerXid) {
			if l.format != xidLogFormat {
				t.Fatalf("go-zookeeper logs a negative xid as %q; the layer filters %q", l.format, xidLogFormat)
			}
			return
		}
	}
	t.Fatalf("go-zookeeper no longer logs a reply with a negative xid (lines %v): check the layer's log filter still applies", log.got)
}

// TestContractServerAcceptsConnectRequestWithAndWithoutReadOnly: the
// layer rewrites go-zookeeper's 44-byte connect request in place, and
// ZooKeeper's Java client sends 45 bytes (the readOnly flag); a real
// server must grant a session for both.
func TestContractServerAcceptsConnectRequestWithAndWithoutReadOnly(t *testing.T) {
	c := testenv.New(t, testenv.Options{})
	for _, readOnly := range []bool{false, true} {
		conn, err := net.DialTimeout("tcp", c.Addrs()[0], 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		body := binary.BigEndian.AppendUint32(nil, 0) // protocol version
		body = binary.BigEndian.AppendUint64(body, 0) // last zxid seen
		body = binary.BigEndian.AppendUint32(body, 2000)
		body = binary.BigEndian.AppendUint64(body, 0) // session id: a new one
		body = binary.BigEndian.AppendUint32(body, 16)
		body = append(body, make([]byte, 16)...)
		if readOnly {
			body = append(body, 0)
		}
		frame := append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
		if !jute.IsConnectRequest(frame) {
			t.Fatalf("readOnly=%v: the layer does not recognise a %d-byte connect request", readOnly, len(body))
		}
		srv := &script{t: t, conn: conn}
		if _, err := conn.Write(frame); err != nil {
			t.Fatal(err)
		}
		resp, ok := jute.DecodeConnectResponse(srv.read())
		_ = conn.Close()
		if !ok || resp.SessionID == 0 {
			t.Fatalf("a %d-byte connect request (readOnly byte %v) got no session: %+v", len(body), readOnly, resp)
		}
	}
}
