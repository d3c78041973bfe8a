// Package testenv runs real Apache ZooKeeper servers on loopback for tests,
// benchmarks and demos, and injects real faults into them.
//
// A Cluster is a standalone server or an ensemble of 3 or 5 servers, each a
// Java process in its own process group with its own data directory, on free
// 127.0.0.1 ports, with a short tickTime so that sessions of about a second
// work. Servers can be killed, stopped, restarted on the same port and data
// directory, paused and resumed. A Proxy sits between one client and the
// servers and cuts, stalls or delays its traffic, or lets one request of a
// given operation reach the server and cuts the connection before its reply
// reaches the client. ExpireSession ends a session on demand.
//
// Options.TLS adds a secure client port to every server, with a CA,
// keystore, truststore and client certificate made by the JDK's keytool in
// the cluster's directory at start (nothing is committed or reused), and
// Options.SASLUsers makes the servers accept SASL DIGEST-MD5 logins through
// a JAAS file the cluster writes.
//
// The package needs java on PATH (or JAVA_HOME) and a ZooKeeper installation:
// $ZOOKEEPER_HOME (an Apache binary release) or Debian/Ubuntu's zookeeper
// package. `make deps` installs both on Debian-like machines.
//
// A package's tests usually share one cluster started in TestMain:
//
//	var zkc *testenv.Cluster
//
//	func TestMain(m *testing.M) {
//		os.Exit(testenv.Main(m, testenv.Options{Servers: 1}, &zkc))
//	}
//
// while tests that break servers start their own with New.
package testenv
