package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"
)

// rawExpiry measures, trials times, the time from a session falling silent
// (its connection blackholed at a proxy: to the servers, a killed process)
// to another session's data watch on its ephemeral znode firing. The
// session asks for the candidates' timeout: this is the floor under every
// failover after a crash, the servers' session-expiry detection.
func (e *env) rawExpiry(ctx context.Context, trials int) (Dist, error) {
	obs, err := e.rawConn(ctx)
	if err != nil {
		return Dist{}, err
	}
	defer obs.Close()
	dir := rawRoot + "/expiry"
	if err := ensurePath(obs, dir); err != nil {
		return Dist{}, err
	}
	samples := make([]time.Duration, 0, trials)
	for i := range trials {
		d, err := e.expireOnce(ctx, obs, fmt.Sprintf("%s/n-%d", dir, i))
		if err != nil {
			return Dist{}, err
		}
		samples = append(samples, d)
	}
	return NewDist(samples), nil
}

// expireOnce silences one session holding the ephemeral path and times
// obs's notification of its deletion.
func (e *env) expireOnce(ctx context.Context, obs *zk.Conn, path string) (time.Duration, error) {
	proxy, err := e.cluster.NewProxy()
	if err != nil {
		return 0, fmt.Errorf("bench: proxy: %w", err)
	}
	defer proxy.Close()
	c, err := e.rawConnTo(ctx, proxy.Addrs(), e.sessionTimeout)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	defer proxy.Heal()
	return timeDeletion(ctx, c, obs, path, zk.FlagEphemeral, func() error {
		proxy.Blackhole()
		return nil
	})
}
