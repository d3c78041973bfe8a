package zkconn

import (
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/internal/jute"
)

// Replies to the requests the layer writes itself, checked and decoded
// with the codec (internal/jute).

// replyBody checks the header of a reply to op: a ZooKeeper error code is
// mapped by the error table (codeError), a short reply is an unknown
// outcome (zk.ErrConnectionClosed). Otherwise it returns the body after the
// header (empty for a delete).
func replyBody(op string, b []byte) ([]byte, error) {
	h, ok := jute.DecodeReplyHeader(b)
	if !ok {
		return nil, fmt.Errorf("%s: short reply (%d bytes): %w", op, len(b), zk.ErrConnectionClosed)
	}
	if h.Err != jute.CodeOK {
		return nil, codeError(op, h.Err)
	}
	return b[jute.HeaderLen:], nil
}

// malformed reports a body that did not decode, as an unknown outcome.
func malformed(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w: %w", op, err, zk.ErrConnectionClosed)
}

// decodeData decodes a getData reply (header first): data, Stat.
func decodeData(reply []byte) ([]byte, *zk.Stat, error) {
	body, err := replyBody("get data", reply)
	if err != nil {
		return nil, nil, err
	}
	data, st, err := jute.DataReply(body)
	return data, st, malformed("get data", err)
}

// decodeChildren decodes a getChildren2 reply (header first): names, Stat.
func decodeChildren(reply []byte) ([]string, *zk.Stat, error) {
	body, err := replyBody("list", reply)
	if err != nil {
		return nil, nil, err
	}
	names, st, err := jute.ChildrenReply(body)
	return names, st, malformed("list", err)
}

// decodeStat decodes an exists or setData reply (header first): Stat.
func decodeStat(op string, reply []byte) (*zk.Stat, error) {
	body, err := replyBody(op, reply)
	if err != nil {
		return nil, err
	}
	st, err := jute.StatReply(body)
	return st, malformed(op, err)
}

// decodeCreate2 decodes a create2 reply (header first): path, Stat.
func decodeCreate2(reply []byte) (string, *zk.Stat, error) {
	body, err := replyBody("create2", reply)
	if err != nil {
		return "", nil, err
	}
	p, st, err := jute.Create2Reply(body)
	return p, st, malformed("create2", err)
}

// decodePath decodes a create or sync reply (header first): a path.
func decodePath(op string, reply []byte) (string, error) {
	body, err := replyBody(op, reply)
	if err != nil {
		return "", err
	}
	p, err := jute.PathReply(body)
	return p, malformed(op, err)
}

// decodeEmpty checks a reply without a body (delete).
func decodeEmpty(op string, reply []byte) error {
	body, err := replyBody(op, reply)
	if err == nil && len(body) != 0 {
		err = malformed(op, fmt.Errorf("%w (%d bytes left)", jute.ErrMalformed, len(body)))
	}
	return err
}

// decodeMulti decodes a multi reply (header first) as go-zookeeper's Multi
// returns it: one response per operation (each failed one with its error)
// and, when the transaction failed, the first operation's error (the one
// that failed it: ZooKeeper reports those before it as OK and those after
// it as RUNTIMEINCONSISTENCY).
func decodeMulti(reply []byte) ([]zk.MultiResponse, error) {
	h, ok := jute.DecodeReplyHeader(reply)
	if !ok {
		return nil, fmt.Errorf("multi: short reply (%d bytes): %w", len(reply), zk.ErrConnectionClosed)
	}
	var herr error
	if h.Err != jute.CodeOK {
		herr = codeError("multi", h.Err)
	}
	rs, err := jute.MultiReply(reply[jute.HeaderLen:])
	if err != nil {
		if herr != nil {
			return nil, herr
		}
		return nil, malformed("multi", err)
	}
	out := make([]zk.MultiResponse, len(rs))
	for i, r := range rs {
		out[i] = zk.MultiResponse{Stat: r.Stat, String: r.Path}
		if r.Type == jute.OpError && r.Err != jute.CodeOK {
			out[i].Error = codeError("multi", r.Err)
			if herr == nil {
				herr = out[i].Error
			}
		}
	}
	return out, herr
}
