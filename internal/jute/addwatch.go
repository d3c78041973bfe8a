package jute

// addWatch (ZooKeeper 3.6+): a watch that stays set after it fires.

// OpAddWatch is the op code of addWatch (ZooDefs.OpCode.addWatch).
const OpAddWatch int32 = 106

// AddWatch modes (ZooKeeper's AddWatchMode).
const (
	// AddWatchPersistent watches one path: its data, its creation and
	// deletion, and its children list, until removed.
	AddWatchPersistent int32 = 0
	// AddWatchPersistentRecursive watches a path and every path under it:
	// creations, deletions and data changes (never NodeChildrenChanged),
	// until removed.
	AddWatchPersistentRecursive int32 = 1
)

// WatcherAny is removeWatches' type for every watch of the session on a
// path. ZooKeeper 3.6 to 3.8 register a persistent watch in both their
// data and child watch tables and know no type of its own (3.9 adds
// Persistent, 4, and PersistentRecursive, 5; 3.8 fails a request naming
// them without an answer), so Any is how a persistent watch is removed.
const WatcherAny int32 = 3

// AddWatchRequest encodes addWatch(path, mode).
func AddWatchRequest(xid int32, path string, mode int32) []byte {
	e := NewRequest(xid, OpAddWatch, 8+len(path))
	e.String(path)
	e.Int32(mode)
	return e.Frame()
}
