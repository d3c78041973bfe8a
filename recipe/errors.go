package recipe

import (
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/internal/zkconn"
)

// Reasons a leadership ends. Leadership.Err returns one of them (possibly
// wrapped); test with errors.Is.
var (
	// ErrResigned: the leader gave leadership up with Leadership.Resign, or
	// Run resigned after its function returned, or its candidate left the
	// election on an error that retrying would not cure (wrapped with it,
	// such as ErrACLDenied), which Campaign then returns.
	ErrResigned = errors.New("recipe: leadership resigned")
	// ErrClosed: the candidate (or its session) was closed.
	ErrClosed = errors.New("recipe: candidate closed")
	// ErrSessionExpired: the ZooKeeper session expired (or the ensemble
	// forgot it), so the candidate's ephemeral znode is gone.
	ErrSessionExpired = errors.New("recipe: session expired")
	// ErrSuspended: the connection to ZooKeeper was lost, or the local lease
	// deadline passed without an answer from the server. The session may
	// still be alive; if it is, and the znode still leads, the candidate
	// leads again with the same token (a new Leadership). A leadership
	// suspended while its session was alive keeps this reason even if the
	// session expires later; one that ended after the session could
	// already have expired (a process paused past the session timeout)
	// reports ErrSessionExpired once that is known (Leadership.Reason).
	ErrSuspended = errors.New("recipe: connection to ZooKeeper suspended")
	// ErrZnodeDeleted: the leader's znode was deleted by someone else.
	ErrZnodeDeleted = errors.New("recipe: leader znode deleted by someone else")
)

// Errors about input, set-up and the ensemble.
var (
	// ErrNoLeader: the election has no participant (Leader, Observe).
	ErrNoLeader = errors.New("recipe: no leader")
	// ErrInvalidPath: a path that ZooKeeper would reject or an election
	// path that the recipe refuses (relative, trailing slash, empty
	// segment, "." or "..", the root, the reserved /zookeeper tree); the
	// error is a *PathError. It is the connection layer's sentinel: one
	// path check for the module.
	ErrInvalidPath = zkconn.ErrInvalidPath
	// ErrNilSession: a nil *Session was passed.
	ErrNilSession = errors.New("recipe: nil session")
	// ErrUnreachable: no ZooKeeper server granted a session within the
	// connect timeout.
	ErrUnreachable = errors.New("recipe: ZooKeeper unreachable")
	// ErrNotZooKeeper: a server answered the connect request with bytes
	// that are not ZooKeeper's protocol (another service on that port).
	// Connect fails with it (and ErrUnreachable) once every server has
	// answered that way.
	ErrNotZooKeeper = zkconn.ErrNotZooKeeper
	// ErrTLS: a TLS handshake with a server failed (see TLSError).
	ErrTLS = zkconn.ErrTLS
	// ErrAuthFailed: a server refused the session's SASL credentials, or
	// could not prove that it knows them, or the ensemble requires a SASL
	// login the session did not make (SESSIONCLOSEDREQUIRESASLAUTH, -124;
	// see AuthError). The session is over: it does not reconnect with
	// credentials the ensemble refuses, or without those it requires.
	ErrAuthFailed = zkconn.ErrAuthFailed
	// ErrSessionTimeout: a session timeout that is not positive, or (with
	// WithExactSessionTimeout) one the server would not grant.
	ErrSessionTimeout = errors.New("recipe: session timeout not honoured")
	// ErrInvalidOption: an option with a value out of its documented range.
	ErrInvalidOption = errors.New("recipe: invalid option")
	// ErrACLDenied: ZooKeeper refused an operation for lack of permission
	// (NOAUTH) or rejected the ACL given (INVALIDACL).
	ErrACLDenied = errors.New("recipe: denied by ZooKeeper ACL")
	// ErrUnsafeACL: an existing znode a secured member relies on lets
	// others delete or change it (see UnsafeACLError, CheckACL).
	ErrUnsafeACL = errors.New("recipe: znode open to others")
	// ErrSessionClosed: the Session was closed.
	ErrSessionClosed = errors.New("recipe: session closed")
	// ErrCleanupIncomplete: Close or Resign could not confirm the deletion
	// of the candidate's znode before its deadline. The deletion goes on
	// being retried until it succeeds or the session ends.
	ErrCleanupIncomplete = errors.New("recipe: znode deletion not confirmed")
)

// NotZooKeeperError reports a server address that answered the connect
// request with another protocol (an HTTP or PostgreSQL port given by
// mistake): Addr, as dialled, and Cause, what gave it away (an impossible
// frame length). It matches ErrNotZooKeeper with errors.Is.
type NotZooKeeperError = zkconn.NotZooKeeperError

// AuthError is a SASL authentication with a server that failed for a
// reason a retry does not cure (Server, Mechanism, User, Err); errors.Is
// ErrAuthFailed holds for it.
type AuthError = zkconn.AuthError

// TLSError is a TLS handshake with a server that failed; errors.Is ErrTLS
// holds for it.
type TLSError = zkconn.TLSError

// PathError reports an invalid path (Path) and why (Reason); it matches
// ErrInvalidPath with errors.Is. The connection layer's type: one for a
// path ZooKeeper refuses and one the recipe refuses as an election path.
type PathError = zkconn.PathError

// OptionError reports an option value out of range, naming the option.
type OptionError struct {
	Option string
	Reason string
}

// Error names the option and why its value is refused.
func (e *OptionError) Error() string {
	return fmt.Sprintf("recipe: invalid option %s: %s", e.Option, e.Reason)
}

// Unwrap makes errors.Is(err, ErrInvalidOption) true.
func (e *OptionError) Unwrap() error { return ErrInvalidOption }

// SessionTimeoutError reports a session timeout the server did not grant.
type SessionTimeoutError struct {
	Requested  time.Duration
	Negotiated time.Duration
}

// Error names the timeout asked for and the one the server negotiated.
func (e *SessionTimeoutError) Error() string {
	return fmt.Sprintf("recipe: session timeout %v requested, server granted %v", e.Requested, e.Negotiated)
}

// Unwrap makes errors.Is(err, ErrSessionTimeout) true.
func (e *SessionTimeoutError) Unwrap() error { return ErrSessionTimeout }

// aclError maps ZooKeeper's permission errors to ErrACLDenied, keeping the
// original in the chain; other errors pass through.
func aclError(op, path string, err error) error {
	if errors.Is(err, zk.ErrNoAuth) || errors.Is(err, zk.ErrInvalidACL) {
		return fmt.Errorf("%s %s: %w: %w", op, path, ErrACLDenied, err)
	}
	return fmt.Errorf("%s %s: %w", op, path, err)
}

// denied marks ZooKeeper's permission errors with ErrACLDenied, keeping
// err's text first; other errors pass through.
func denied(err error) error {
	if errors.Is(err, zk.ErrNoAuth) || errors.Is(err, zk.ErrInvalidACL) {
		return fmt.Errorf("%w: %w", err, ErrACLDenied)
	}
	return err
}

// Retryable reports whether err, from a Session's operation or from
// go-zookeeper, is transient: the same request may succeed on the same
// session after a backoff (connection loss, a throttled request
// (ZTHROTTLEDOP, ZooKeeper 3.6+), session moved, not read-only,
// reconfiguration in progress, operation or request timeout). Expiry,
// failed authentication, a closed session and the caller's errors (no
// node, node exists, bad version, no auth, ...) are not. It follows
// ZooKeeper's KeeperException codes, one table for all of them.
func Retryable(err error) bool { return zkconn.Retryable(err) }

// isConnLoss reports whether err means the request's fate is unknown, the
// connection (not necessarily the session) is gone, or the server asked
// for a retry (see Retryable): a candidate waits or retries, never fails.
func isConnLoss(err error) bool {
	return zkconn.Retryable(err) || errors.Is(err, zk.ErrSessionExpired) || errors.Is(err, zk.ErrClosing)
}
