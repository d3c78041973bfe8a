package zkconn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"syscall"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/internal/jute"
	"github.com/zkelect/zkelect/internal/znode"
)

// Errors of the layer itself. ZooKeeper's answers are go-zookeeper's
// errors where go-zookeeper has one (zk.ErrNoNode, ...), a *CodeError
// otherwise; see Classify.
var (
	// ErrClosed: the Conn was closed.
	ErrClosed = errors.New("zookeeper session closed")
	// ErrNotZooKeeper: a server answered the connect request with bytes
	// that are not ZooKeeper's protocol (see NotZooKeeperError); recipe
	// exports it as recipe.ErrNotZooKeeper.
	ErrNotZooKeeper = errors.New("recipe: not a ZooKeeper server")
	// ErrTLS: a TLS handshake with a server failed (see TLSError); recipe
	// exports it as recipe.ErrTLS.
	ErrTLS = errors.New("recipe: TLS handshake with ZooKeeper failed")
	// ErrAuthFailed: a server refused the session's SASL credentials, or
	// could not prove that it knows them (see AuthError); recipe exports
	// it as recipe.ErrAuthFailed.
	ErrAuthFailed = errors.New("recipe: ZooKeeper authentication failed")
	// ErrNoSession: no server granted a session within the connect timeout.
	ErrNoSession = errors.New("no ZooKeeper session")
	// ErrInvalidPath: a path ZooKeeper would refuse (see znode.CheckPath);
	// recipe exports it as recipe.ErrInvalidPath.
	ErrInvalidPath = znode.ErrInvalidPath
	// ErrInvalidServers: a server list Dial refuses (see CheckServers).
	ErrInvalidServers = errors.New("invalid ZooKeeper server list")
	// ErrBadRequest: a request the layer cannot encode (an operation of a
	// multi that is not one of go-zookeeper's request types).
	ErrBadRequest = errors.New("zookeeper request not encodable")
)

// CodeError is a ZooKeeper error code go-zookeeper has no error for
// (THROTTLEDOP, NOTREADONLY, RECONFIGINPROGRESS, QUOTAEXCEEDED, ...).
// errors.Is(err, zk.ErrAPIError) holds for it, as for go-zookeeper's own
// unknown codes.
type CodeError struct {
	Op   string
	Code jute.Code
}

func (e *CodeError) Error() string {
	return fmt.Sprintf("%s: zookeeper error %s (%d)", e.Op, e.Code, int32(e.Code))
}

// Unwrap makes errors.Is(err, zk.ErrAPIError) true.
func (e *CodeError) Unwrap() error { return zk.ErrAPIError }

// codeErrors maps the codes go-zookeeper has an error for, so callers test
// the layer's answers as they test its own.
var codeErrors = map[jute.Code]error{
	jute.CodeConnectionLoss:          zk.ErrConnectionClosed,
	jute.CodeBadArguments:            zk.ErrBadArguments,
	jute.CodeAPIError:                zk.ErrAPIError,
	jute.CodeNoNode:                  zk.ErrNoNode,
	jute.CodeNoAuth:                  zk.ErrNoAuth,
	jute.CodeBadVersion:              zk.ErrBadVersion,
	jute.CodeNoChildrenForEphemerals: zk.ErrNoChildrenForEphemerals,
	jute.CodeNodeExists:              zk.ErrNodeExists,
	jute.CodeNotEmpty:                zk.ErrNotEmpty,
	jute.CodeSessionExpired:          zk.ErrSessionExpired,
	jute.CodeInvalidACL:              zk.ErrInvalidACL,
	jute.CodeAuthFailed:              zk.ErrAuthFailed,
	jute.CodeClosing:                 zk.ErrClosing,
	jute.CodeNothing:                 zk.ErrNothing,
	jute.CodeSessionMoved:            zk.ErrSessionMoved,
	jute.CodeReconfigDisabled:        zk.ErrReconfigDisabled,
}

// codeError returns the error for the code of a reply to op.
func codeError(op string, code jute.Code) error {
	if err, ok := codeErrors[code]; ok {
		return err
	}
	return &CodeError{Op: op, Code: code}
}

// errorCodes maps go-zookeeper's errors back to codes, for Classify.
var errorCodes = func() map[error]jute.Code {
	m := make(map[error]jute.Code, len(codeErrors))
	for c, err := range codeErrors {
		m[err] = c
	}
	m[zk.ErrNoServer] = jute.CodeConnectionLoss
	return m
}()

// Classify says what err, from the layer or from go-zookeeper, means to
// its caller (see jute.Class): ClassRetry for connection loss, a request
// without answer and every transient code (throttled, session moved, not
// read-only, reconfiguration in progress, ...); ClassSessionOver for
// expiry, failed authentication, a closed Conn; ClassCaller for the rest,
// nil included (0). go-zookeeper's "unknown error: <code>" of its own
// calls is read back to its code.
func Classify(err error) jute.Class {
	if err == nil {
		return 0
	}
	if errors.Is(err, ErrClosed) {
		return jute.ClassSessionOver
	}
	var ce *CodeError
	if errors.As(err, &ce) {
		return ce.Code.Class()
	}
	for e, c := range errorCodes {
		if errors.Is(err, e) {
			return c.Class()
		}
	}
	if code, ok := unknownCode(err.Error()); ok {
		return code.Class()
	}
	if transportLoss(err) {
		return jute.ClassRetry
	}
	return jute.ClassCaller
}

// transportLoss reports whether err is the socket failing under a request
// rather than ZooKeeper answering it: go-zookeeper hands a request the raw
// error of the write or read that failed (an i/o timeout, a reset, EOF; a
// TLS connection stays broken after a write timeout). The request's fate is
// unknown and the connection is being replaced: connection loss. A
// context's error is the caller's (context.DeadlineExceeded is a net.Error
// too), never a transport loss.
func transportLoss(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, net.ErrClosed) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// Retryable reports whether err is worth retrying with backoff on the same
// session (Classify is ClassRetry).
func Retryable(err error) bool { return Classify(err) == jute.ClassRetry }

// unknownCode reads the code of go-zookeeper's "unknown error: <code>",
// which its own calls return for a code it has no error for.
func unknownCode(msg string) (jute.Code, bool) {
	const marker = "unknown error: "
	i := strings.LastIndex(msg, marker)
	if i < 0 {
		return 0, false
	}
	n, err := strconv.ParseInt(msg[i+len(marker):], 10, 32)
	return jute.Code(n), err == nil
}

// PathError is a path ZooKeeper would refuse, and why (znode.PathError,
// the one path check of the module).
type PathError = znode.PathError

// ServersError is a server list Dial refuses, and why.
type ServersError struct{ Reason string }

func (e *ServersError) Error() string { return "invalid ZooKeeper servers: " + e.Reason }

// Unwrap makes errors.Is(err, ErrInvalidServers) true.
func (e *ServersError) Unwrap() error { return ErrInvalidServers }

// RolledBack reports whether err is the error of a multi operation that
// did not fail itself but was rolled back because another operation of the
// same transaction failed (ZooKeeper's RUNTIMEINCONSISTENCY for those after
// the failing one; those before it carry no error): sent again without the
// failing one, it may succeed.
func RolledBack(err error) bool {
	var ce *CodeError
	return errors.As(err, &ce) && ce.Code == jute.CodeRuntimeInconsistency
}
