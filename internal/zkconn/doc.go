// Package zkconn is zkelect's ZooKeeper connection layer: the only code
// that speaks ZooKeeper. A Conn owns one go-zookeeper *zk.Conn (v1.0.4,
// the wire client zkelect builds on) and fills what it lacks through its
// Dialer hook, reading and writing the wire under it:
//
//   - contexts: Get, Children, Exists, Create, Create2, Delete, Set,
//     Multi, Sync, RemoveWatches and the watched GetW, ChildrenW, ExistsW
//     and WatchData write their request themselves, with an xid of the
//     layer's own (negative, so go-zookeeper ignores the reply), and read
//     the reply by xid off the wire (wirecall.go); a call whose ctx ends
//     holds nothing. Writes are ordered with go-zookeeper's frames and
//     with each other (wirequeue.go);
//   - one watch table for every server watch the layer sets, keyed by path
//     and kind: the one-shot watches of GetW, ChildrenW and ExistsW
//     (watchshot.go) and the routed data watches of WatchData
//     (datawatch.go) share an entry on the same path (watchtable.go):
//     go-zookeeper keeps no channel per watch, and a watch is removed from
//     the server (removeWatches, ZooKeeper 3.5+) when its last user leaves;
//   - servers named as the user gave them: the layer's own host provider
//     (hosts.go) hands go-zookeeper one "host:port" entry per attempt and
//     the dialer resolves the name then (every address, shuffled, tried in
//     turn; resolve.go), the hosts file read afresh and DNS under a bound
//     of its own, in seconds, an answer in hand serving while a lookup is
//     slow (lookup.go), so an address that moved behind its name is
//     followed at once and a name that does not resolve yet is skipped
//     with a warning; after a round in which no server answered the layer
//     pauses a twentieth of the session timeout, not go-zookeeper's fixed
//     second (dialroute.go); TLS verifies the certificate against the name dialled, and
//     a server refusing TLS (any alert) is not retried: Dial fails with a
//     *TLSError once every server refused once (tlsrefusal.go);
//   - reconfiguration followed: /zookeeper/config is read at each session
//     (and watched once it names members), its members are added to the
//     servers given, never in their place: one the client cannot route to
//     is tried under a short bound and dropped, a wildcard member is never
//     dialled, a server the configuration removed is not dialled again;
//     Config.NoEnsembleTracking turns it off (reconfig.go, members.go);
//   - session events from the event callback (never the library's lossy
//     event channel), fanned out to Sinks; only StateHasSession is usable;
//   - the negotiated session timeout and session id, read from the connect
//     response; every request and ping stamped when written and matched to
//     its reply: the send time of the last answered request gives the
//     answer lag (wire.go), and the answers to the session's own syncs,
//     which the quorum leader must vouch for, the lease (leaseclock.go);
//   - the highest zxid of any reply, presented by every reconnect in place
//     of go-zookeeper's (which counts only replies to its own requests);
//   - a bounded handshake: deadlines are clamped until the connect response
//     (a silent server no longer holds the client for 6.7 session
//     timeouts), and the bound grows after each handshake that timed out,
//     so a slow but live server is still reached;
//   - the request deadline: a connection whose server answers no request
//     for a session timeout while one is in flight is closed (deadline.go);
//   - foreign servers: a frame length no ZooKeeper server sends fails the
//     connection before go-zookeeper allocates a buffer for it, and Dial
//     fails with ErrNotZooKeeper once every server answered so (foreign.go);
//   - ensemble identity from the data (ensemble.go, identity.go,
//     marks.go): the layer keeps persistent znodes the session read
//     (path, czxid, ctime: its marks), the 4 oldest by czxid (a root, its
//     members directory, parents: they outlive the elections a partition
//     manager removes) and the 4 latest; a znode deleted or read missing
//     is forgotten. A server's "expired" to the
//     session is believed once that very server (the address reached)
//     holds a mark: a probe opens a session there, reads the marks with
//     exists and closes it; then go-zookeeper asks for the next session at
//     once. One server of the ensemble suffices, however many entries,
//     names or addresses the user gave, so a client that reaches a
//     minority ends a dead session by itself. A server holding no mark
//     serves another ensemble: its answer is refused and logged once, its
//     address dialled after its name's others for a minute. A new session
//     is used only where its server holds a mark (checked on its
//     connection before go-zookeeper sees it); a process without marks
//     (nothing persistent read yet) believes the first "expired";
//   - wiped-ensemble recovery: after every server has refused the session
//     for two session timeouts, connect requests present it without its
//     last zxid, for the ensemble to judge it: servers restarted after an
//     outage resume it, servers that cannot serve refuse again, and once
//     every configured server has answered that it expired (counted by
//     the address reached) the ensemble was wiped and redeployed: the last
//     zxid and the marks are forgotten and the new session starts from
//     zxid 0 (Generation counts these); HeldBefore remembers the ids of
//     the sessions it held;
//   - SASL DIGEST-MD5 on every connection (sasl.go), with a bound of its
//     own that grows after an exchange that timed out; a server that
//     refuses the credentials speaks for itself: the session moves to the
//     others, and is over for good (ErrAuthFailed, Ended) only once the
//     ensemble as a whole refuses, six refusals in a row and two per
//     entry with no login accepted between them (one per entry at Dial,
//     before any server accepted them), whichever servers one address
//     stands for (saslservers.go), or at once when a server answers any
//     request, the layer's own included, that it requires a SASL login
//     (SESSIONCLOSEDREQUIRESASLAUTH, saslrequired.go);
//   - calls bound to their session: one that waits for a connection while
//     its session expires fails at once with zk.ErrSessionExpired
//     (wirecall.go), and every call fails at once once the session is
//     over for good;
//   - one error table (internal/jute's codes, Classify): retry, session
//     over, or the caller's;
//   - go-zookeeper's debug line for every reply with a negative xid is
//     dropped for the layer's own replies; the rest of its log goes to the
//     Conn's zerolog logger at debug level.
//
// What it assumes of go-zookeeper, pinned by contract_test.go: each frame
// written with one Write, receives with exact-size io.ReadFull, the event
// callback run synchronously on the receive loop, replies with negative
// xids ignored, and a 44-byte connect request (without the readOnly byte,
// which servers accept either way). The codec is internal/jute, shared
// with testenv's proxy. No election rule lives here: paths are checked as
// ZooKeeper checks them (znode.CheckPath), so /zookeeper/config is readable.
package zkconn
