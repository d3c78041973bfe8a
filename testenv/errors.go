package testenv

import (
	"errors"
	"fmt"
)

var (
	// ErrJavaNotFound is returned by Start when no java executable is found
	// in $JAVA_HOME/bin or on PATH. The message says how to install one.
	ErrJavaNotFound = errors.New("testenv: java not found in $JAVA_HOME/bin or on PATH; " +
		"install a Java 11+ runtime (Debian/Ubuntu: apt-get install default-jre-headless, or run `make deps`)")

	// ErrZooKeeperNotFound is returned by Start when neither $ZOOKEEPER_HOME
	// nor Debian's zookeeper package is found. The message says how to get one.
	ErrZooKeeperNotFound = errors.New("testenv: Apache ZooKeeper not found; " +
		"set ZOOKEEPER_HOME to an unpacked binary release (apache-zookeeper-*-bin.tar.gz from " +
		"https://zookeeper.apache.org/releases.html), or on Debian/Ubuntu apt-get install zookeeper " +
		"(or run `make deps`)")

	// ErrKeytoolNotFound is returned by Start with Options.TLS when the
	// JDK's keytool is neither beside java nor on PATH.
	ErrKeytoolNotFound = errors.New("testenv: keytool not found beside java or on PATH; " +
		"install a Java runtime that has it (Debian/Ubuntu: apt-get install default-jre-headless)")

	// ErrClosed is returned by Cluster and Proxy methods called after Close.
	ErrClosed = errors.New("testenv: closed")

	// ErrBadIndex is returned when a server index is outside 0..n-1.
	ErrBadIndex = errors.New("testenv: server index out of range")

	// ErrNotRunning is returned when a server that is not running is paused,
	// resumed, killed or stopped.
	ErrNotRunning = errors.New("testenv: server not running")

	// ErrNoQuorumLeader is returned by QuorumLeader when no server reports
	// itself as the ensemble's leader (or more than one does).
	ErrNoQuorumLeader = errors.New("testenv: no quorum leader")

	// ErrBadOptions is returned for invalid arguments; for invalid Options
	// (from Start and Options.Validate) the error is an *OptionsError
	// naming the field.
	ErrBadOptions = errors.New("testenv: invalid options")

	// ErrProtocol is returned when a ZooKeeper peer sends a frame that cannot
	// be parsed (too short, or longer than the frame limit).
	ErrProtocol = errors.New("testenv: ZooKeeper protocol error")
)

// OptionsError reports an Options field that Start refuses. errors.Is(err,
// ErrBadOptions) holds for it.
type OptionsError struct {
	Field  string // the Options field, such as "TickTime"
	Value  any    // the refused value
	Reason string // what a valid value is, such as "want whole milliseconds, at least 10ms"
}

func (e *OptionsError) Error() string {
	if s, ok := e.Value.(string); ok {
		return fmt.Sprintf("%v: %s = %q: %s", ErrBadOptions, e.Field, s, e.Reason)
	}
	return fmt.Sprintf("%v: %s = %v: %s", ErrBadOptions, e.Field, e.Value, e.Reason)
}

// Is reports whether target is ErrBadOptions.
func (e *OptionsError) Is(target error) bool { return target == ErrBadOptions }
