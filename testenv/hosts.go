package testenv

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
)

// Hosts is the private /etc/hosts of a test run by WithPrivateHosts: Set
// and Remove rewrite it in place (the same file, bind-mounted over
// /etc/hosts in the test's own mount namespace), so the machine's file is
// never touched. Go's resolver reads /etc/hosts again at most every 5
// seconds (net's hosts cache), so a change is seen within about 5s. Methods
// are safe for concurrent use.
type Hosts struct {
	path string

	mu    sync.Mutex
	names map[string][]string // name to addresses
}

// hostsBase is the private file's fixed part.
const hostsBase = "127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n"

// Set maps name to addrs (IP literals), replacing what it mapped to.
func (h *Hosts) Set(name string, addrs ...string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.names[name] = slices.Clone(addrs)
	return h.writeLocked()
}

// Remove unmaps name: it then does not resolve.
func (h *Hosts) Remove(name string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.names, name)
	return h.writeLocked()
}

func (h *Hosts) writeLocked() error {
	var b strings.Builder
	b.WriteString(hostsBase)
	for _, n := range slices.Sorted(maps.Keys(h.names)) {
		for _, a := range h.names[n] {
			fmt.Fprintf(&b, "%s %s\n", a, n)
		}
	}
	// In place: a rename would leave the bind mount on the old file.
	if err := os.WriteFile(h.path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("testenv: write private hosts file: %w", err)
	}
	return nil
}
