package zkconn

import "github.com/go-zookeeper/zk"

// configPath is the znode where ZooKeeper 3.5+ publishes its membership
// (the dynamic configuration), readable by every client.
const configPath = "/zookeeper/config"

// The session follows the ensemble's membership, as Curator's
// EnsembleTracker does: it reads /zookeeper/config at the first session
// and after every reconnect, and with a watch (whenever it changes) once
// it names members with client addresses (a static configuration or a
// standalone server costs no watch). The members named there with a client
// address are added to the host provider's rounds (hosts.go), never in
// place of the user's list: a client that reaches the ensemble only
// through the address it was given (a load balancer, a NodePort, NAT, a
// port-forward) while the configuration names pod or private addresses
// keeps that address in every round, and a member it cannot route to is
// tried under a short bound and dropped once it proved unreachable. A
// server the configuration removed is not dialled again, even when the
// user listed it. A member that is a server of the seed by its address
// keeps the seed's name (resolver.entryOf), so a name stays followed.
// Members listed with a wildcard address (0.0.0.0, ::) for both their
// client and quorum host are never dialled. Without client addresses in
// the configuration (a static configuration, a standalone server) the seed
// alone is dialled. Over TLS the configuration is not followed: it names
// the plain client ports, not the secure ones.
//
// Config.NoEnsembleTracking turns following off: only the user's list is
// dialled. The configuration is written by whoever may run reconfig
// (ZooKeeper lets only its superuser, or a user it skips ACLs for, and
// only with reconfigEnabled=true), and following it dials servers the user
// never listed; turn it off where the client reaches the ensemble only
// through the addresses it was given, or where that trust is not wanted.

// followConfig keeps the host provider on the ensemble's membership until
// Close (see above); it returns at once over TLS or with
// Config.NoEnsembleTracking.
func (s *Conn) followConfig() {
	defer close(s.following)
	if s.cfg.TLS != nil || s.cfg.NoEnsembleTracking {
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
func (s *Conn) useMembers(members []member) {
	if members == nil {
		return
	}
	for i, m := range members {
		if m.addr != "" {
			members[i].addr = s.resolver.entryOf(m.addr)
		}
	}
	if s.hosts.setMembers(members) {
		s.log.Info().Strs("members", addrsOf(members)).Strs("servers", s.hosts.servers()).
			Msg("zookeeper ensemble configuration changed; dialling its members beside the servers given")
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
