package jute

import "strconv"

// Op codes of a request header, as ZooKeeper's ZooDefs.OpCode defines them.
const (
	OpCreate          int32 = 1
	OpDelete          int32 = 2
	OpExists          int32 = 3
	OpGetData         int32 = 4
	OpSetData         int32 = 5
	OpGetACL          int32 = 6
	OpSetACL          int32 = 7
	OpGetChildren     int32 = 8
	OpSync            int32 = 9
	OpPing            int32 = 11
	OpGetChildren2    int32 = 12
	OpCheck           int32 = 13
	OpMulti           int32 = 14
	OpCreate2         int32 = 15
	OpReconfig        int32 = 16
	OpRemoveWatches   int32 = 18
	OpCreateContainer int32 = 19
	OpCreateTTL       int32 = 21
	OpCloseSession    int32 = -11
	OpSetAuth         int32 = 100
	OpSetWatches      int32 = 101
	OpError           int32 = -1 // a failed operation's result in a multi reply
)

// opNames are ZooKeeper's names of the op codes (ZooDefs.OpCode).
var opNames = map[int32]string{
	OpCreate: "create", OpDelete: "delete", OpExists: "exists", OpGetData: "getData", OpSetData: "setData",
	OpGetACL: "getACL", OpSetACL: "setACL", OpGetChildren: "getChildren", OpSync: "sync", OpPing: "ping",
	OpGetChildren2: "getChildren2", OpCheck: "check", OpMulti: "multi", OpCreate2: "create2",
	OpReconfig: "reconfig", OpRemoveWatches: "removeWatches", OpCreateContainer: "createContainer",
	OpCreateTTL: "createTTL", OpCloseSession: "closeSession", OpSetAuth: "auth", OpSetWatches: "setWatches",
}

// OpName returns ZooKeeper's name of op ("getChildren2", as ZooDefs.OpCode
// names it), or "op N" for a code it does not name here.
func OpName(op int32) string {
	if n, ok := opNames[op]; ok {
		return n
	}
	return "op " + strconv.Itoa(int(op))
}

// Reserved xids of reply (and request) headers: not answers to numbered
// requests.
const (
	XidWatchEvent int32 = -1
	XidPing       int32 = -2
	XidAuth       int32 = -4
	XidSetWatches int32 = -8
)

// Watcher types of removeWatches.
const (
	WatcherChildren int32 = 1
	WatcherData     int32 = 2
)

// Create flags (CreateMode).
const (
	FlagEphemeral int32 = 1
	FlagSequence  int32 = 2
)

// HeaderLen is the length of a reply header: xid, zxid, error code.
const HeaderLen = 4 + 8 + 4
