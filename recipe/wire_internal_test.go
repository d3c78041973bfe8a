package recipe

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/go-zookeeper/zk"
)

// frames encodes bodies as 4-byte length-prefixed frames.
func frames(bodies ...[]byte) []byte {
	var out []byte
	for _, b := range bodies {
		out = binary.BigEndian.AppendUint32(out, uint32(len(b)))
		out = append(out, b...)
	}
	return out
}

// FuzzFrameReaderSplitsAnyChunking feeds the same frames cut at arbitrary
// points and checks that every frame's head comes out whole and in order.
func FuzzFrameReaderSplitsAnyChunking(f *testing.F) {
	f.Add([]byte{1, 2, 3}, uint8(1), uint8(7))
	f.Add(bytes.Repeat([]byte{9}, 40), uint8(3), uint8(16))
	f.Fuzz(func(t *testing.T, seed []byte, n uint8, chunk uint8) {
		var bodies [][]byte
		for i := 0; i <= int(n%6); i++ {
			size := (len(seed) + i*7) % 33
			b := make([]byte, size)
			for j := range b {
				b[j] = byte(i*31 + j)
			}
			bodies = append(bodies, b)
		}
		stream := frames(bodies...)
		step := 1 + int(chunk)%17
		var got [][]byte
		var r frameReader
		for i := 0; i < len(stream); i += step {
			r.feed(stream[i:min(i+step, len(stream))], func(head []byte) {
				got = append(got, append([]byte(nil), head...))
			})
		}
		if len(got) != len(bodies) {
			t.Fatalf("%d frames out, %d in", len(got), len(bodies))
		}
		for i, b := range bodies {
			want := b[:min(len(b), 16)]
			if !bytes.Equal(got[i], want) {
				t.Fatalf("frame %d head %x, want %x", i, got[i], want)
			}
		}
	})
}

func TestWithoutZxidKeepsTheSession(t *testing.T) {
	body := make([]byte, connectRequestLen)
	for i := range body {
		body[i] = 0xff
	}
	in := frames(body)
	out := withoutZxid(in)
	b := out[4:]
	if !bytes.Equal(out[:4], in[:4]) || !bytes.Equal(b[0:4], body[0:4]) || !bytes.Equal(b[12:], body[12:]) {
		t.Fatal("length, protocol version, timeout, session id or password changed")
	}
	if !bytes.Equal(b[4:12], make([]byte, 8)) {
		t.Fatalf("last zxid not cleared: %x", b[4:12])
	}
	if in[8] != 0xff {
		t.Fatal("the original frame was modified")
	}
}

// TestFrameReaderCapturesWholeBodies checks that a frame the capture asks
// for comes out whole, however the stream is cut, and others as heads.
func TestFrameReaderCapturesWholeBodies(t *testing.T) {
	long := bytes.Repeat([]byte{7}, 100)
	binary.BigEndian.PutUint32(long, 42) // xid 42: captured
	other := bytes.Repeat([]byte{8}, 50)
	stream := frames(other, long, other[:10])
	for step := 1; step <= len(stream); step++ {
		var got [][]byte
		r := frameReader{capture: func(head []byte) bool { return headXid(head) == 42 }}
		for i := 0; i < len(stream); i += step {
			r.feed(stream[i:min(i+step, len(stream))], func(f []byte) { got = append(got, append([]byte(nil), f...)) })
		}
		want := [][]byte{other[:16], long, other[:10]}
		if len(got) != len(want) {
			t.Fatalf("step %d: %d frames, want %d", step, len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("step %d: frame %d is %x, want %x", step, i, got[i], want[i])
			}
		}
	}
}

// TestCreate2ReplyDecoding decodes a reply built field by field, and
// rejects truncated ones as an unknown outcome.
func TestCreate2ReplyDecoding(t *testing.T) {
	path := "/e/_c_x-latch-0000000007"
	b := binary.BigEndian.AppendUint32(nil, uint32(0xf0000001)) // xid
	b = binary.BigEndian.AppendUint64(b, 99)                    // zxid
	b = binary.BigEndian.AppendUint32(b, 0)                     // error code
	b = binary.BigEndian.AppendUint32(b, uint32(len(path)))
	b = append(b, path...)
	for _, v := range []int64{11, 12, 13, 14} { // czxid, mzxid, ctime, mtime
		b = binary.BigEndian.AppendUint64(b, uint64(v))
	}
	for _, v := range []int32{1, 2, 3} { // version, cversion, aversion
		b = binary.BigEndian.AppendUint32(b, uint32(v))
	}
	b = binary.BigEndian.AppendUint64(b, 0x1234) // ephemeralOwner
	b = binary.BigEndian.AppendUint32(b, 5)      // dataLength
	b = binary.BigEndian.AppendUint32(b, 0)      // numChildren
	b = binary.BigEndian.AppendUint64(b, 15)     // pzxid
	p, st, err := parseCreate2Reply(b)
	if err != nil || p != path {
		t.Fatalf("path %q, err %v", p, err)
	}
	if st.Czxid != 11 || st.Mtime != 14 || st.Aversion != 3 || st.EphemeralOwner != 0x1234 || st.DataLength != 5 || st.Pzxid != 15 {
		t.Fatalf("stat %+v", st)
	}
	for _, n := range []int{0, 10, 18, len(b) - 1} {
		if _, _, err := parseCreate2Reply(b[:n]); !errors.Is(err, zk.ErrConnectionClosed) {
			t.Fatalf("%d bytes: %v, want an unknown outcome", n, err)
		}
	}
	failed := append(b[:12:12], 0xff, 0xff, 0xff, 0x92) // -110: node exists
	if _, _, err := parseCreate2Reply(failed); !errors.Is(err, zk.ErrNodeExists) {
		t.Fatalf("error reply: %v, want ErrNodeExists", err)
	}
}

// TestGetDataReplyDecoding decodes getData replies with and without data,
// maps error codes, tells a reply whose body was not kept, and rejects
// truncated ones as an unknown outcome.
func TestGetDataReplyDecoding(t *testing.T) {
	header := func(code int32) []byte {
		b := binary.BigEndian.AppendUint32(nil, uint32(0xf0000002)) // xid
		b = binary.BigEndian.AppendUint64(b, 99)                    // zxid
		return binary.BigEndian.AppendUint32(b, uint32(code))
	}
	stat := make([]byte, statLen)
	binary.BigEndian.PutUint64(stat, 21)     // czxid
	binary.BigEndian.PutUint64(stat[44:], 7) // ephemeralOwner
	withData := append(binary.BigEndian.AppendUint32(header(0), 3), "abc"...)
	withData = append(withData, stat...)
	noData := append(binary.BigEndian.AppendUint32(header(0), ^uint32(0)), stat...) // -1: null
	for name, b := range map[string][]byte{"data": withData, "null data": noData} {
		st, err := dataStat(b)
		if err != nil || st.Czxid != 21 || st.EphemeralOwner != 7 {
			t.Fatalf("%s: stat %+v, err %v", name, st, err)
		}
	}
	if _, err := dataStat(header(-101)); !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("error reply: %v, want ErrNoNode", err)
	}
	if _, err := dataStat(header(0)); !errors.Is(err, errBodyNotKept) {
		t.Fatalf("header only: %v, want errBodyNotKept", err)
	}
	for _, n := range []int{0, 10, 18, len(withData) - 1} {
		if _, err := dataStat(withData[:n]); !errors.Is(err, zk.ErrConnectionClosed) {
			t.Fatalf("%d bytes: %v, want an unknown outcome", n, err)
		}
	}
}

func TestFrameReaderRefusesALengthOverItsLimit(t *testing.T) {
	r := frameReader{limit: maxReplyFrame}
	var n int
	ok := frames(make([]byte, 40))
	if err := r.feed(ok, func([]byte) { n++ }); err != nil || n != 1 {
		t.Fatalf("a 40-byte frame: %v, %d frames", err, n)
	}
	// The length prefix of a frame one byte too long, then "HTTP" (a
	// length of 1,213,486,160 bytes), each cut after its second byte.
	for _, prefix := range [][]byte{binary.BigEndian.AppendUint32(nil, maxReplyFrame+1), []byte("HTTP")} {
		r := frameReader{limit: maxReplyFrame}
		if err := r.feed(prefix[:2], func([]byte) {}); err != nil {
			t.Fatalf("half a length: %v", err)
		}
		var fe *frameLimitError
		if err := r.feed(prefix[2:], func([]byte) {}); !errors.As(err, &fe) || fe.limit != maxReplyFrame {
			t.Fatalf("length %x: %v, want a *frameLimitError", prefix, err)
		}
	}
}
