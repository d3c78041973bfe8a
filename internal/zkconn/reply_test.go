package zkconn

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"syscall"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/internal/jute"
)

// reply builds a reply: header (xid, zxid 99, code), then body.
func reply(code int32, body []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(0xf0000001))
	b = binary.BigEndian.AppendUint64(b, 99)
	b = binary.BigEndian.AppendUint32(b, uint32(code))
	return append(b, body...)
}

func appendString(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

// TestCreate2ReplyDecoding decodes a reply built field by field, and
// rejects truncated ones as an unknown outcome.
func TestCreate2ReplyDecoding(t *testing.T) {
	path := "/e/_c_x-latch-0000000007"
	b := appendString(nil, path)
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
	full := reply(0, b)
	p, st, err := decodeCreate2(full)
	if err != nil || p != path {
		t.Fatalf("path %q, err %v", p, err)
	}
	if st.Czxid != 11 || st.Mtime != 14 || st.Aversion != 3 || st.EphemeralOwner != 0x1234 || st.DataLength != 5 || st.Pzxid != 15 {
		t.Fatalf("stat %+v", st)
	}
	for _, n := range []int{0, 10, 18, len(full) - 1} {
		if _, _, err := decodeCreate2(full[:n]); !errors.Is(err, zk.ErrConnectionClosed) {
			t.Fatalf("%d bytes: %v, want an unknown outcome", n, err)
		}
	}
	if _, _, err := decodeCreate2(reply(-110, nil)); !errors.Is(err, zk.ErrNodeExists) {
		t.Fatalf("error reply: %v, want ErrNodeExists", err)
	}
}

// TestGetDataReplyDecoding decodes getData replies with and without data,
// maps error codes, and rejects truncated ones as an unknown outcome.
func TestGetDataReplyDecoding(t *testing.T) {
	stat := make([]byte, jute.StatLen)
	binary.BigEndian.PutUint64(stat, 21)     // czxid
	binary.BigEndian.PutUint64(stat[44:], 7) // ephemeralOwner
	withData := reply(0, append(binary.BigEndian.AppendUint32(nil, 3), append([]byte("abc"), stat...)...))
	noData := reply(0, append(binary.BigEndian.AppendUint32(nil, ^uint32(0)), stat...)) // -1: null
	for name, b := range map[string][]byte{"data": withData, "null data": noData} {
		_, st, err := decodeData(b)
		if err != nil || st.Czxid != 21 || st.EphemeralOwner != 7 {
			t.Fatalf("%s: stat %+v, err %v", name, st, err)
		}
	}
	if _, _, err := decodeData(reply(-101, nil)); !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("error reply: %v, want ErrNoNode", err)
	}
	for _, n := range []int{0, 10, 16, 18, len(withData) - 1} {
		if _, _, err := decodeData(withData[:n]); !errors.Is(err, zk.ErrConnectionClosed) {
			t.Fatalf("%d bytes: %v, want an unknown outcome", n, err)
		}
	}
}

// TestChildrenReplyDecoding decodes a getChildren2 body and refuses
// truncated, padded and absurd ones as an unknown outcome.
func TestChildrenReplyDecoding(t *testing.T) {
	stat := make([]byte, jute.StatLen)
	binary.BigEndian.PutUint32(stat[56:], 2) // numChildren
	body := binary.BigEndian.AppendUint32(nil, 2)
	body = appendString(appendString(body, "a"), "bc")
	body = append(body, stat...)
	names, st, err := decodeChildren(reply(0, body))
	if err != nil || !slices.Equal(names, []string{"a", "bc"}) || st.NumChildren != 2 {
		t.Fatalf("decode: %v, %+v, %v", names, st, err)
	}
	huge := append(binary.BigEndian.AppendUint32(nil, 1<<30), stat...)
	for name, b := range map[string][]byte{
		"truncated": body[:len(body)-1], "padded": append(slices.Clone(body), 0), "huge count": huge, "empty": nil,
	} {
		if _, _, err := decodeChildren(reply(0, b)); !errors.Is(err, zk.ErrConnectionClosed) {
			t.Errorf("%s: %v, want an unknown outcome", name, err)
		}
	}
}

// TestErrorTableClassifiesEveryCode: the codes the issue names are
// classified as ZooKeeper documents them, for the layer's errors and for
// go-zookeeper's own "unknown error: <code>".
func TestErrorTableClassifiesEveryCode(t *testing.T) {
	for _, c := range []struct {
		code jute.Code
		want jute.Class
	}{
		{jute.CodeConnectionLoss, jute.ClassRetry},
		{jute.CodeThrottled, jute.ClassRetry},
		{jute.CodeSessionMoved, jute.ClassRetry},
		{jute.CodeNotReadOnly, jute.ClassRetry},
		{jute.CodeReconfigInProgress, jute.ClassRetry},
		{jute.CodeSessionExpired, jute.ClassSessionOver},
		{jute.CodeAuthFailed, jute.ClassSessionOver},
		{jute.CodeBadArguments, jute.ClassCaller},
		{jute.CodeNoNode, jute.ClassCaller},
		{jute.CodeNodeExists, jute.ClassCaller},
		{jute.CodeNotEmpty, jute.ClassCaller},
		{jute.CodeBadVersion, jute.ClassCaller},
		{jute.CodeNoAuth, jute.ClassCaller},
		{jute.CodeQuotaExceeded, jute.ClassCaller},
	} {
		err := codeError("op", c.code)
		if got := Classify(err); got != c.want {
			t.Errorf("%s: the layer's error %v is %s, want %s", c.code, err, got, c.want)
		}
		zkErr := fmt.Errorf("unknown error: %d", int32(c.code))
		if _, known := codeErrors[c.code]; !known {
			if got := Classify(zkErr); got != c.want {
				t.Errorf("%s: go-zookeeper's %q is %s, want %s", c.code, zkErr, got, c.want)
			}
		}
	}
	if Retryable(zk.ErrNoNode) || !Retryable(zk.ErrConnectionClosed) || Retryable(ErrClosed) {
		t.Error("sentinels misclassified")
	}
	if err := codeError("get", jute.CodeThrottled); !errors.Is(err, zk.ErrAPIError) || err.Error() != "get: zookeeper error THROTTLEDOP (-127)" {
		t.Errorf("throttled: %v", err)
	}
}

// TestTransportErrorsAreConnectionLoss: go-zookeeper hands a request the
// raw error of a socket write or read that failed (seen: "write tcp …: i/o
// timeout" on a TLS connection of a loaded machine ended a campaign as the
// caller's error). Those are connection loss; a context's own error is not.
func TestTransportErrorsAreConnectionLoss(t *testing.T) {
	timeout := &net.OpError{Op: "write", Net: "tcp", Err: os.ErrDeadlineExceeded}
	reset := &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	for _, c := range []struct {
		name string
		err  error
		want jute.Class
	}{
		{"write timeout", timeout, jute.ClassRetry},
		{"wrapped write timeout", fmt.Errorf("list candidates: %w", timeout), jute.ClassRetry},
		{"reset", reset, jute.ClassRetry},
		{"EOF", io.EOF, jute.ClassRetry},
		{"short read", io.ErrUnexpectedEOF, jute.ClassRetry},
		{"closed socket", net.ErrClosed, jute.ClassRetry},
		{"broken pipe", syscall.EPIPE, jute.ClassRetry},
		{"ctx deadline", context.DeadlineExceeded, jute.ClassCaller},
		{"ctx cancelled", fmt.Errorf("get: %w", context.Canceled), jute.ClassCaller},
		{"closed session", ErrClosed, jute.ClassSessionOver},
	} {
		if got := Classify(c.err); got != c.want {
			t.Errorf("%s (%v): %s, want %s", c.name, c.err, got, c.want)
		}
	}
}
