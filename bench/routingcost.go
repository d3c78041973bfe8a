package bench

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
)

// What following a root costs the ensemble, per event class of the
// routing scenario: the packets the servers sent the router's session
// (notifications and replies) and received from it (requests), from the
// servers' own per-connection counters ("cons"), and the watches its
// session holds ("wchc", and zk_watch_count for the whole ensemble).

// connCounters are one session's packet counters on the servers.
type connCounters struct {
	recved, sent int64 // requests from it, packets to it
}

// consLine matches a "cons" line's counters and session id.
var consLine = regexp.MustCompile(`recved=(\d+),sent=(\d+),sid=0x([0-9a-f]+)`)

// sessionCounters sums sid's connection counters over every server (one
// holds its connection; a reconnect starts them again).
func (e *env) sessionCounters(ctx context.Context, sid int64) (connCounters, error) {
	var c connCounters
	for i := range e.cluster.Size() {
		reply, err := e.cluster.FourLetterWord(ctx, i, "cons")
		if err != nil {
			return c, fmt.Errorf("bench: cons of server %d: %w", i, err)
		}
		for _, m := range consLine.FindAllStringSubmatch(reply, -1) {
			id, err := strconv.ParseUint(m[3], 16, 64)
			if err != nil || int64(id) != sid {
				continue
			}
			r, _ := strconv.ParseInt(m[1], 10, 64)
			s, _ := strconv.ParseInt(m[2], 10, 64)
			c.recved, c.sent = c.recved+r, c.sent+s
		}
	}
	return c, nil
}

// sessionWatches counts the data and exists watches sid holds on every
// server (wchc: a persistent recursive watch is one path), and the
// ensemble's watches of every session (zk_watch_count).
func (e *env) sessionWatches(ctx context.Context, sid int64) (own, all int64, err error) {
	for i := range e.cluster.Size() {
		per, err := e.cluster.Wchc(ctx, i)
		if err != nil {
			return 0, 0, fmt.Errorf("bench: watches of server %d: %w", i, err)
		}
		own += int64(len(per[sid]))
		n, err := e.cluster.Mntr(ctx, i, "zk_watch_count")
		if err != nil {
			return 0, 0, fmt.Errorf("bench: watch count of server %d: %w", i, err)
		}
		all += n
	}
	return own, all, nil
}

// routerSession returns the router's session id from its SESS line.
func routerSession(ls []stampedLine) (int64, bool) {
	for _, l := range ls {
		if l.fields[0] == "SESS" && len(l.fields) == 3 {
			id, err := strconv.ParseInt(l.fields[2], 10, 64)
			return id, err == nil
		}
	}
	return 0, false
}

// notificationBytes is the size on the wire of a watch notification of
// path: length prefix, reply header (xid, zxid, err), type, state, path.
func notificationBytes(path string) int { return 4 + 16 + 4 + 4 + 4 + len(path) }
