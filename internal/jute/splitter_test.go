package jute

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
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
		var r Splitter
		for i := 0; i < len(stream); i += step {
			r.Feed(stream[i:min(i+step, len(stream))], func(head []byte) {
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

func TestWithLastZxidKeepsTheSession(t *testing.T) {
	body := make([]byte, ConnectRequestLen)
	for i := range body {
		body[i] = 0xff
	}
	in := frames(body)
	for _, z := range []int64{0, 0x100000007} {
		out := WithLastZxid(in, z)
		b := out[4:]
		if !bytes.Equal(out[:4], in[:4]) || !bytes.Equal(b[0:4], body[0:4]) || !bytes.Equal(b[12:], body[12:]) {
			t.Fatal("length, protocol version, timeout, session id or password changed")
		}
		if got := ConnectLastZxid(out); got != z {
			t.Fatalf("last zxid %#x, want %#x", got, z)
		}
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
		r := Splitter{MaxCapture: 1 << 16, Capture: func(head []byte) bool { return ReplyXid(head) == 42 }}
		for i := 0; i < len(stream); i += step {
			r.Feed(stream[i:min(i+step, len(stream))], func(f []byte) { got = append(got, append([]byte(nil), f...)) })
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

func TestFrameReaderRefusesALengthOverItsLimit(t *testing.T) {
	const limit = 16 << 20
	r := Splitter{Limit: limit}
	var n int
	ok := frames(make([]byte, 40))
	if err := r.Feed(ok, func([]byte) { n++ }); err != nil || n != 1 {
		t.Fatalf("a 40-byte frame: %v, %d frames", err, n)
	}
	// The length prefix of a frame one byte too long, then "HTTP" (a
	// length of 1,213,486,160 bytes), each cut after its second byte.
	for _, prefix := range [][]byte{binary.BigEndian.AppendUint32(nil, limit+1), []byte("HTTP")} {
		r := Splitter{Limit: limit}
		if err := r.Feed(prefix[:2], func([]byte) {}); err != nil {
			t.Fatalf("half a length: %v", err)
		}
		var fe *LimitError
		if err := r.Feed(prefix[2:], func([]byte) {}); !errors.As(err, &fe) || fe.Limit != limit {
			t.Fatalf("length %x: %v, want a *LimitError", prefix, err)
		}
	}
}
