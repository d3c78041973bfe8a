package testenv

import (
	"context"
	"errors"
	"fmt"
	"reflect"
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
