package testenv

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/go-zookeeper/zk"
)

// Mntr returns one numeric line of server i's "mntr" reply, such as
// zk_watch_count or zk_znode_count. It fails when the server does not
// answer (see FourLetterWord), has no such line, or the value is not a
// whole number.
func (c *Cluster) Mntr(ctx context.Context, i int, key string) (int64, error) {
	reply, err := c.FourLetterWord(ctx, i, "mntr")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(reply, "\n") {
		if k, v, ok := strings.Cut(line, "\t"); ok && k == key {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("mntr of server %d: %s is %q, not a number", i, key, v)
			}
			return n, nil
		}
	}
	return 0, fmt.Errorf("mntr of server %d has no %s", i, key)
}

// Wchc returns server i's data and exists watches, per session id: the
// watched paths of each session in the server's "wchc" reply, sorted.
// ZooKeeper's wchc leaves child watches out (count them with Mntr's
// zk_watch_count). It fails when the server does not answer (see
// FourLetterWord) or sends a session line that is not a hex session id.
func (c *Cluster) Wchc(ctx context.Context, i int) (map[int64][]string, error) {
	reply, err := c.FourLetterWord(ctx, i, "wchc")
	if err != nil {
		return nil, err
	}
	return perSession(reply, fmt.Sprintf("wchc of server %d", i))
}

// Ephemerals returns the ephemeral znodes server i knows, per owning
// session id, sorted: the ephemeral part of its "dump" reply. Only a
// standalone server and the quorum leader answer dump with them. It fails
// when the server does not answer (see FourLetterWord) or its reply has no
// ephemeral part.
func (c *Cluster) Ephemerals(ctx context.Context, i int) (map[int64][]string, error) {
	reply, err := c.FourLetterWord(ctx, i, "dump")
	if err != nil {
		return nil, err
	}
	_, eph, ok := strings.Cut(reply, "ephemeral nodes dump:")
	if !ok {
		return nil, fmt.Errorf("dump of server %d has no ephemeral nodes (not the quorum leader?)", i)
	}
	eph, _, _ = strings.Cut(eph, "Connections dump:")
	return perSession(eph, fmt.Sprintf("dump of server %d", i))
}

// perSession parses a four-letter word's list of paths per session:
// "0x<session id>" lines (a trailing colon allowed), each followed by its
// paths, one a line after a tab.
func perSession(reply, what string) (map[int64][]string, error) {
	out := map[int64][]string{}
	var session int64
	for _, line := range strings.Split(reply, "\n") {
		switch {
		case strings.HasPrefix(line, "0x"):
			id, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(line[2:]), ":"), 16, 64)
			if err != nil {
				return nil, fmt.Errorf("%s: bad session line %q", what, line)
			}
			session = int64(id)
		case strings.HasPrefix(line, "\t"):
			out[session] = append(out[session], strings.TrimSpace(line))
		}
	}
	for _, ps := range out {
		slices.Sort(ps)
	}
	return out, nil
}

// errUnknownConn reports a go-zookeeper Conn whose fields ClientWatchers
// does not know.
var errUnknownConn = errors.New("testenv: go-zookeeper's Conn has no watchers/watchersLock fields (not v1.0.4?)")

// ClientWatchers returns how many watch channels go-zookeeper holds on
// conn, for tests asserting that none is left behind (go-zookeeper v1.0.4
// re-sets every watch it holds after a reconnect, racing with its receive
// loop, and never removes one before it fires). The library does not
// expose the count: it is read from its watchers map under its own lock,
// by field name, and fails with an error if those fields are not there.
func ClientWatchers(conn *zk.Conn) (int, error) {
	v := reflect.ValueOf(conn).Elem()
	lockField, mapField := v.FieldByName("watchersLock"), v.FieldByName("watchers")
	if !lockField.IsValid() || !mapField.IsValid() || lockField.Type() != reflect.TypeFor[sync.Mutex]() {
		return 0, errUnknownConn
	}
	mu := (*sync.Mutex)(unsafe.Pointer(lockField.UnsafeAddr()))
	mu.Lock()
	defer mu.Unlock()
	n := 0
	for it := mapField.MapRange(); it.Next(); {
		n += it.Value().Len()
	}
	return n, nil
}
