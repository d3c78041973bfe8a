package zkconn

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/rs/zerolog"
)

// ResolveError is a server name of the list that did not resolve when it
// was about to be dialled: that attempt fails, the name is tried again at
// the next round. errors.Is(err, ErrNoSession) does not hold for it: Dial
// fails only when no server granted a session within its connect timeout.
type ResolveError struct {
	Server string // "host:port" as given
	Err    error  // the resolver's error, often a *net.DNSError
}

func (e *ResolveError) Error() string {
	return fmt.Sprintf("ZooKeeper server %s does not resolve: %v", e.Server, e.Err)
}

// Unwrap returns the resolver's error.
func (e *ResolveError) Unwrap() error { return e.Err }

// resolver dials the entries of a serverList: each attempt resolves the
// name it is about to dial (every address; lookup.go), shuffles the
// addresses and tries them in turn with the raw dialer, then runs TLS over
// the connection when configured, verifying the certificate against the
// name dialled (tlsdial.go). It logs a name that does not resolve
// (warning), a slow resolver (once per name, with its time) and each
// change of a name's addresses (info, once per change).
type resolver struct {
	raw     zk.Dialer
	tls     *tls.Config  // nil: plain TCP
	refused *tlsRefusals // the servers that refused TLS (tlsrefusal.go)
	log     zerolog.Logger
	lookup  func(ctx context.Context, host string) ([]string, error)
	hosts   string      // the hosts file read at every lookup ("/etc/hosts")
	held    func() bool // whether a session was established (lookup.go)

	ctx     context.Context // ends the lookups in flight at close
	stop    context.CancelFunc
	running sync.WaitGroup // lookups in flight
	// avoid reports an address ("ip:port") found to serve another
	// ensemble lately (ensemble.go): dialled only after the others.
	avoid func(addr string) bool

	mu         sync.Mutex
	addresses  map[string][]string      // each entry's addresses at its last resolution, sorted
	unresolved map[string]*ResolveError // entries whose last resolution failed
	inflight   map[string]*lookupCall   // entries being looked up
	wait       time.Duration            // how long a dial waits for a lookup without an answer in hand
	slow       map[string]bool          // entries whose slow lookups were logged
	// closed is set by close before it waits for the lookups: a dial that
	// go-zookeeper still runs after abandon (conn.go) starts none then, so
	// no running.Add follows the Wait.
	closed bool
}

// newResolver returns a resolver whose lookups end with ctx (or close);
// held reports whether a session was established.
func newResolver(ctx context.Context, held func() bool, raw zk.Dialer, tlsCfg *tls.Config, refused *tlsRefusals, log zerolog.Logger) *resolver {
	r := &resolver{raw: raw, tls: tlsCfg, refused: refused, log: log, lookup: net.DefaultResolver.LookupHost, held: held,
		hosts: "/etc/hosts", addresses: map[string][]string{}, unresolved: map[string]*ResolveError{},
		inflight: map[string]*lookupCall{}, wait: minLookupWait, slow: map[string]bool{}}
	r.ctx, r.stop = context.WithCancel(ctx)
	return r
}

// errResolverClosed fails a dial that starts after the resolver closed.
var errResolverClosed = errors.New("connection closed: no server name is looked up")

// close ends the lookups in flight and waits for them; idempotent. No
// lookup starts once it began (startLookup).
func (r *resolver) close() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.stop()
	r.running.Wait()
}

// dial is a zk.Dialer for entries "host:port".
func (r *resolver) dial(network, entry string, timeout time.Duration) (net.Conn, error) {
	if err := r.refused.final(); err != nil {
		return nil, err // every server refused TLS: Dial is giving up
	}
	host, port, err := net.SplitHostPort(entry)
	if err != nil {
		return nil, fmt.Errorf("dial ZooKeeper server %q: %w", entry, err)
	}
	addrs, err := r.resolve(entry, host, timeout)
	if err != nil {
		return nil, err
	}
	if r.avoid != nil {
		slices.SortStableFunc(addrs, func(a, b string) int { // false (dialled first) before true
			return compareBool(r.avoid(net.JoinHostPort(a, port)), r.avoid(net.JoinHostPort(b, port)))
		})
	}
	var errs []error
	for _, a := range addrs {
		c, err := r.raw(network, net.JoinHostPort(a, port), timeout)
		if err == nil {
			return r.secure(c, entry, timeout)
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("dial ZooKeeper server %s: %w", entry, errors.Join(errs...))
}

// dialAddr dials addr ("ip:port"), an address entry resolved to, as dial
// does (TLS verified against entry's name): the identity probe reaches the
// very server that answered (ensemble.go).
func (r *resolver) dialAddr(network, entry, addr string, timeout time.Duration) (net.Conn, error) {
	c, err := r.raw(network, addr, timeout)
	if err != nil {
		return nil, err
	}
	return r.secure(c, entry, timeout)
}

// compareBool orders false before true.
func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// noteAddresses logs, once, that entry's addresses changed.
func (r *resolver) noteAddresses(entry string, addrs []string) {
	sorted := slices.Sorted(slices.Values(addrs))
	r.mu.Lock()
	old, seen := r.addresses[entry]
	r.addresses[entry] = sorted
	delete(r.unresolved, entry)
	r.mu.Unlock()
	if seen && !slices.Equal(old, sorted) {
		r.log.Info().Str("server", entry).Str("from", strings.Join(old, ",")).Str("to", strings.Join(sorted, ",")).
			Msg("zookeeper server address changed")
	}
}

// entryOf returns the entry whose last resolution gave addr ("ip:port"),
// or addr itself: a member of /zookeeper/config that is a server of the
// seed keeps the seed's name (reconfig.go).
func (r *resolver) entryOf(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range slices.Sorted(maps.Keys(r.addresses)) {
		eh, ep, err := net.SplitHostPort(e)
		if err == nil && ep == port && eh != host && slices.Contains(r.addresses[e], host) {
			return e
		}
	}
	return addr
}

// secure runs TLS over c when configured: the certificate is verified
// against the name of entry unless the configuration names a ServerName.
func (r *resolver) secure(c net.Conn, entry string, timeout time.Duration) (net.Conn, error) {
	if r.tls == nil {
		return c, nil
	}
	tc, err := tlsHandshake(c, r.tls, entry, max(timeout, minTLSHandshake))
	if err != nil {
		if te := (*TLSError)(nil); errors.As(err, &te) && te.Untrusted() {
			r.refused.refuse(entry, te)
		}
		return nil, err
	}
	return &tlsConn{Conn: tc, entry: entry, refused: r.refused}, nil
}

// unresolvedError returns the entries whose last resolution failed, on
// one line (refusalErrors' form), or nil: what Dial adds to its error when
// no session came.
func (r *resolver) unresolvedError() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return oneLine(r.unresolved)
}
