// Package watchdog closes the ZooKeeper sessions of a process once that
// process is provably dead, so that its ephemeral znodes (its leaderships)
// go at once instead of a session timeout later.
//
// The watched process hands its sessions over, as they are established, on
// a pipe (Handoff) to a watchdog process it started, which is its child
// (Serve). The watchdog learns of the death from the kernel (a pidfd of its
// parent, or having been reparented), never from a timeout or a closed
// pipe: a paused (SIGSTOPped) or slow process is alive and its sessions are
// left alone. Once its parent is dead no belief of that process survives,
// so ending its sessions early only shortens the time a successor waits;
// a paused-not-dead leader is still fenced by its token, as before.
package watchdog

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
)

// Credentials name one ZooKeeper session: its id, its password (as the
// server granted them in the connect response) and the servers
// ("host:port") a closer may reach it through.
type Credentials struct {
	ID       int64
	Password []byte
	Servers  []string
}

// ErrBadHandoff reports a handoff line Book.Read cannot parse.
var ErrBadHandoff = errors.New("watchdog: bad handoff line")

// Handoff writes the watched process's side of the pipe, one line per
// message; it is safe for concurrent use. Write errors (the watchdog died)
// are returned and leave the watched process unharmed.
type Handoff struct {
	mu sync.Mutex
	w  io.Writer
}

// NewHandoff writes handoff messages to w (the pipe to the watchdog).
func NewHandoff(w io.Writer) *Handoff { return &Handoff{w: w} }

// Session hands over an established session: the watchdog closes it if
// this process dies.
func (h *Handoff) Session(c Credentials) error {
	return h.line(fmt.Sprintf("session %x %s %s", uint64(c.ID), hex.EncodeToString(c.Password), strings.Join(c.Servers, ",")))
}

// Closed tells the watchdog a session is over (closed or expired): it is
// forgotten.
func (h *Handoff) Closed(id int64) error { return h.line(fmt.Sprintf("closed %x", uint64(id))) }

// Guard names a process group (by its id) that acts on this process's
// leaderships: once this process is dead the watchdog kills the group and
// closes no session before the kernel reports the group empty.
func (h *Handoff) Guard(pgid int) error { return h.line(fmt.Sprintf("guard %d", pgid)) }

// Unguard forgets a process group (it has exited).
func (h *Handoff) Unguard(pgid int) error { return h.line(fmt.Sprintf("unguard %d", pgid)) }

// Bye tells the watchdog to stop watching without closing anything (this
// process is leaving on purpose, or hands the duty to another watchdog).
func (h *Handoff) Bye() error { return h.line("bye") }

func (h *Handoff) line(s string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, err := io.WriteString(h.w, s+"\n"); err != nil {
		return fmt.Errorf("watchdog: hand over: %w", err)
	}
	return nil
}

// Book is what a watchdog knows of its parent's sessions. Safe for
// concurrent use.
type Book struct {
	mu       sync.Mutex
	sessions map[int64]Credentials
	groups   map[int]bool
	bye      bool
}

// NewBook returns an empty Book.
func NewBook() *Book { return &Book{sessions: map[int64]Credentials{}, groups: map[int]bool{}} }

// Read applies handoff lines from r until its end or a bye. It returns nil
// at either, or an error wrapping ErrBadHandoff (the line is named) or the
// read error.
func (b *Book) Read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		done, err := b.apply(sc.Text())
		if err != nil || done {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("watchdog: read handoff: %w", err)
	}
	return nil
}

func (b *Book) apply(line string) (bye bool, err error) {
	f := strings.Fields(line)
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case len(f) == 1 && f[0] == "bye":
		b.bye = true
		return true, nil
	case len(f) == 2 && f[0] == "closed":
		id, err := strconv.ParseUint(f[1], 16, 64)
		if err != nil {
			return false, fmt.Errorf("%w %q: %v", ErrBadHandoff, line, err)
		}
		delete(b.sessions, int64(id))
		return false, nil
	case len(f) == 2 && (f[0] == "guard" || f[0] == "unguard"):
		pgid, err := strconv.Atoi(f[1])
		if err != nil || pgid <= 1 {
			return false, fmt.Errorf("%w %q: want a process group id above 1", ErrBadHandoff, line)
		}
		if f[0] == "guard" {
			b.groups[pgid] = true
		} else {
			delete(b.groups, pgid)
		}
		return false, nil
	case len(f) == 4 && f[0] == "session":
		id, err := strconv.ParseUint(f[1], 16, 64)
		if err != nil {
			return false, fmt.Errorf("%w %q: %v", ErrBadHandoff, line, err)
		}
		pw, err := hex.DecodeString(f[2])
		if err != nil {
			return false, fmt.Errorf("%w %q: %v", ErrBadHandoff, line, err)
		}
		b.sessions[int64(id)] = Credentials{ID: int64(id), Password: pw, Servers: strings.Split(f[3], ",")}
		return false, nil
	}
	return false, fmt.Errorf("%w %q", ErrBadHandoff, line)
}

// Sessions returns the sessions handed over and not closed since.
func (b *Book) Sessions() []Credentials {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]Credentials, 0, len(b.sessions))
	for _, c := range b.sessions {
		out = append(out, c)
	}
	return out
}

// Groups returns the process groups guarded and not unguarded since.
func (b *Book) Groups() []int {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]int, 0, len(b.groups))
	for g := range b.groups {
		out = append(out, g)
	}
	return out
}

// Bye reports whether the parent said bye.
func (b *Book) Bye() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.bye
}
