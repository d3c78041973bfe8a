package zkconn

import (
	"net"
	"slices"
	"strings"

	"github.com/go-zookeeper/zk"
)

// configPath is the znode where ZooKeeper 3.5+ publishes its membership
// (the dynamic configuration), readable by every client.
const configPath = "/zookeeper/config"

// The session follows the ensemble's membership, as Curator's
// EnsembleTracker does: it reads /zookeeper/config at the first session
// and after every reconnect, and with a watch (whenever it changes) once
// it names members with client addresses (a static configuration or a
// standalone server costs no watch), and the
// members named there with a client address replace the server list in the
// host provider's rounds (hosts.go): servers a reconfiguration added are
// dialled, removed ones are not; the user's list stays the seed, tried
// again after a round of members made no session. A member that is a
// server of the seed by its address keeps the seed's name
// (resolver.entryOf), so a name stays followed. Without client addresses
// in the configuration (a static configuration, a standalone server) the
// seed is kept. Over TLS the configuration is not followed: it names the
// plain client ports, not the secure ones.

// parseMembers returns the client addresses ("host:port") of the members
// in a dynamic configuration, in its order: lines
// server.<id>=<host>:<quorum port>:<election port>[:<role>][;[<client host>:]<client port>]
// (ZooKeeper's administrator's guide, "Dynamic Reconfiguration"); a client
// host that is missing or a wildcard (0.0.0.0, ::) is the server's host.
// It returns nil when no line names a client port.
func parseMembers(config []byte) []string {
	var out []string
	for line := range strings.Lines(string(config)) {
		key, value, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok || !strings.HasPrefix(key, "server.") {
			continue
		}
		quorum, client, ok := strings.Cut(value, ";")
		if !ok || client == "" {
			continue
		}
		host := quorumHost(quorum)
		chost, cport, err := net.SplitHostPort(client)
		if err != nil { // a port alone
			chost, cport = "", client
		}
		if chost == "" || net.ParseIP(chost).IsUnspecified() {
			chost = host
		}
		if chost == "" || cport == "" {
			continue
		}
		if a := net.JoinHostPort(chost, cport); !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
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

// followConfig keeps the host provider on the ensemble's membership until
// Close (see above); it returns at once over TLS.
func (s *Conn) followConfig() {
	defer close(s.following)
	if s.cfg.TLS != nil {
		return
	}
	poke := &reconnectSink{c: make(chan struct{}, 1)}
	s.Subscribe(poke)
	defer s.Unsubscribe(poke)
	watch := false // set once the configuration names members
	for {
		data, changed, err := s.readConfig(watch)
		if err == nil {
			members := parseMembers(data)
			s.useMembers(members)
			if members != nil && !watch {
				watch = true
				continue // read it again, watched
			}
		}
		select {
		case <-changed:
		case <-poke.c:
		case <-s.followCtx.Done():
			return
		}
	}
}

// readConfig reads /zookeeper/config, watched or not; changed is nil
// without a watch.
func (s *Conn) readConfig(watch bool) (data []byte, changed <-chan zk.Event, err error) {
	if watch {
		data, _, changed, err = s.GetW(s.followCtx, configPath)
		return data, changed, err
	}
	data, _, err = s.Get(s.followCtx, configPath)
	return data, nil, err
}

// useMembers gives the host provider the members read, mapped to the
// seed's names where they are its servers.
func (s *Conn) useMembers(members []string) {
	if members == nil {
		return
	}
	for i, m := range members {
		members[i] = s.resolver.entryOf(m)
	}
	if s.hosts.setMembers(members) {
		s.log.Info().Strs("servers", members).Msg("zookeeper ensemble configuration changed; dialling its members")
	}
}

// reconnectSink pokes c (without blocking) at each new connection.
type reconnectSink struct{ c chan struct{} }

// SessionChanged pokes at Connected.
func (k *reconnectSink) SessionChanged(ev Event) {
	if ev.Kind != Connected {
		return
	}
	select {
	case k.c <- struct{}{}:
	default:
	}
}

// NodeChanged ignores node events.
func (k *reconnectSink) NodeChanged(zk.Event) {}

// stopFollowing ends followConfig and waits for it.
func (s *Conn) stopFollowing() {
	s.followStop()
	<-s.following
}
