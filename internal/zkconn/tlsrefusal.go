package zkconn

import (
	"maps"
	"slices"
	"strings"
	"sync"
)

// tlsRefusals tracks the servers whose last TLS attempt failed for a reason
// of certificates (TLSError.Untrusted: the server's certificate is not
// trusted or not for the name, or the server refused ours with an alert).
// A retry does not cure that, so once every entry of the server list has
// failed so since its last accepted connection, Dial fails at once with
// their errors (Conn.awaitFirst): one attempt per server, not a connect
// timeout of retries reported as an unreachable ensemble (issue 25).
type tlsRefusals struct {
	servers func() []string // the entries of a round now (serverList.servers)

	mu      sync.Mutex
	refused map[string]*TLSError
	all     chan struct{} // closed once every entry is refused before any was accepted
	done    bool
	ever    bool // a connection carried data: refusals are then only failed attempts
}

func newTLSRefusals(servers func() []string) *tlsRefusals {
	return &tlsRefusals{servers: servers, refused: map[string]*TLSError{}, all: make(chan struct{})}
}

// refuse records entry's refusal.
func (r *tlsRefusals) refuse(entry string, err *TLSError) {
	servers := r.servers()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refused[entry] = err
	if r.done || r.ever {
		return
	}
	for _, s := range servers {
		if r.refused[s] == nil {
			return
		}
	}
	r.done = true
	close(r.all)
}

// accepted forgets entry's refusal: a connection to it carried data.
func (r *tlsRefusals) accepted(entry string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.refused, entry)
	r.ever = true
}

// final returns the refusals once every entry has refused before any
// connection was accepted (nil until then): the dialer then makes no more
// connections, so each server gets one attempt while Dial gives up.
func (r *tlsRefusals) final() error {
	r.mu.Lock()
	done := r.done
	r.mu.Unlock()
	if !done {
		return nil
	}
	return r.cause()
}

// cause returns the refusals in entry order, on one line; nil when none.
func (r *tlsRefusals) cause() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return oneLine(r.refused)
}

// oneLine returns the errors of m in key order as refusalErrors, or nil
// when m is empty.
func oneLine[E error](m map[string]E) error {
	if len(m) == 0 {
		return nil
	}
	errs := make(refusalErrors, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		errs = append(errs, m[k])
	}
	return errs
}

// refusalErrors are several servers' errors (*TLSError, *ResolveError),
// said on one line (a command prints one line per failure); errors.As
// finds each.
type refusalErrors []error

func (e refusalErrors) Error() string {
	parts := make([]string, len(e))
	for i, err := range e {
		parts[i] = err.Error()
	}
	return strings.Join(parts, "; ")
}

// Unwrap returns the servers' errors.
func (e refusalErrors) Unwrap() []error { return e }
