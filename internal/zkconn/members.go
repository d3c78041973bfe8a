package zkconn

import (
	"net"
	"slices"
	"strings"
)

// member is a server of the ensemble's dynamic configuration.
type member struct {
	id   string // "server.<id>"
	addr string // its client address "host:port"; "" when not dialable (a wildcard)
}

// parseMembers returns the members in a dynamic configuration that name a
// client port, in its order: lines
// server.<id>=<host>:<quorum port>:<election port>[:<role>][;[<client host>:]<client port>]
// (ZooKeeper's administrator's guide, "Dynamic Reconfiguration"). A client
// host that is missing or a wildcard (0.0.0.0, ::) is the server's host,
// as Curator's EnsembleTracker reads it; when that is a wildcard too the
// member has no address (a wildcard is this machine's own address: never
// dialled). It returns nil when no line names a client port.
func parseMembers(config []byte) []member {
	var out []member
	for line := range strings.Lines(string(config)) {
		key, value, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok || !strings.HasPrefix(key, "server.") {
			continue
		}
		quorum, client, ok := strings.Cut(value, ";")
		if !ok || client == "" {
			continue
		}
		chost, cport, err := net.SplitHostPort(client)
		if err != nil { // a port alone
			chost, cport = "", client
		}
		if chost == "" || isWildcard(chost) {
			chost = quorumHost(quorum)
		}
		m := member{id: key}
		if chost != "" && cport != "" && !isWildcard(chost) {
			m.addr = net.JoinHostPort(chost, cport)
		}
		out = append(out, m)
	}
	return out
}

// isWildcard reports whether host is an unspecified address (0.0.0.0, ::).
func isWildcard(host string) bool {
	ip := net.ParseIP(host)
	return ip != nil && ip.IsUnspecified()
}

// quorumHost returns the host of host:port:port[:role], IPv6 in brackets.
func quorumHost(quorum string) string {
	if strings.HasPrefix(quorum, "[") {
		if i := strings.Index(quorum, "]"); i > 0 {
			return quorum[1:i]
		}
		return ""
	}
	host, _, _ := strings.Cut(quorum, ":")
	return host
}

// addrsOf returns the dialable addresses of ms, without repeats.
func addrsOf(ms []member) []string {
	out := []string{}
	for _, m := range ms {
		if m.addr != "" && !slices.Contains(out, m.addr) {
			out = append(out, m.addr)
		}
	}
	return out
}

// setMembers adds ms (the ensemble's configuration, addresses mapped to
// the seed's names where they are its servers) to the rounds (hosts.go),
// starting a new round at once so a removed server is not dialled again;
// false when they are the members already. A server whose id left the
// configuration, or whose address changed, is removed: its old address is
// left out of the rounds, the seed's too.
func (l *serverList) setMembers(ms []member) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	addrs := addrsOf(ms)
	ids := make(map[string]string, len(ms))
	for _, m := range ms {
		ids[m.id] = m.addr
	}
	if l.members != nil && sameMembers(ids, l.ids) {
		return false
	}
	for id, old := range l.ids {
		if now, ok := ids[id]; old != "" && (!ok || now != old) && !slices.Contains(l.removed, old) {
			l.removed = append(l.removed, old)
		}
	}
	l.removed = slices.DeleteFunc(l.removed, func(a string) bool { return slices.Contains(addrs, a) })
	for _, a := range addrs {
		if !slices.Contains(l.seed, a) && l.trials[a] == nil {
			l.trials[a] = &trial{}
		}
	}
	for a := range l.trials {
		if !slices.Contains(addrs, a) {
			delete(l.trials, a)
		}
	}
	l.members, l.ids = addrs, ids
	l.pos, l.heard = len(l.round), true // a new round at once, not a failed one
	return true
}

// sameMembers reports whether two configurations map the same ids to the
// same addresses.
func sameMembers(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for id, addr := range a {
		if got, ok := b[id]; !ok || got != addr {
			return false
		}
	}
	return true
}
