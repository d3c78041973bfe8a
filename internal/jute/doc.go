// Package jute encodes and decodes the ZooKeeper client protocol's frames:
// the 4-byte big-endian length prefix, request and reply headers, the
// request bodies the connection layer writes itself and the reply bodies it
// reads back, in ZooKeeper's jute serialisation (ZooKeeper's
// zookeeper.jute). It does no I/O and holds no state beyond a
// Splitter's; the connection layer (internal/zkconn) and testenv's proxy
// share it.
package jute
