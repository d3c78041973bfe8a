package testenv

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Ensemble timing, in ticks. With the default 100 ms tick and syncLimit a
// follower gives up on a silent (for example paused) quorum leader after
// about a second.
const (
	initLimitTicks = 20
	syncLimitTicks = 10
)

// DefaultHeap is a server's maximum Java heap unless Options.Heap says
// otherwise: enough for tests' few thousand znodes.
const DefaultHeap = "128m"

// minHeapBytes is the smallest Options.Heap: the JVM starts with 16 MiB.
const minHeapBytes = 32 << 20

// checkHeap validates Options.Heap, in Java's -Xmx notation.
func checkHeap(heap string) error {
	digits := strings.TrimRight(heap, "kKmMgG")
	n, err := strconv.ParseInt(digits, 10, 64)
	shift := map[string]uint{"": 0, "k": 10, "K": 10, "m": 20, "M": 20, "g": 30, "G": 30}
	s, ok := shift[heap[len(digits):]]
	if err != nil || !ok || n <= 0 || n > 1<<40>>s { // at most 1 TiB
		return &OptionsError{Field: "Heap", Value: heap, Reason: "want a size such as 512m or 2g"}
	}
	if n<<s < minHeapBytes {
		return &OptionsError{Field: "Heap", Value: heap, Reason: "want at least 32m"}
	}
	return nil
}

// jvmFlags keep a test server small and quick to start (with its -Xmx from
// Options.Heap): a small serial-GC initial heap, the client compiler only,
// one visible CPU for thread-pool sizing, and no fsync (test data need not
// survive a machine crash).
var jvmFlags = []string{
	"-Xms16m", "-Xss512k",
	"-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:ActiveProcessorCount=1",
	"-XX:-UsePerfData", "-Xshare:auto",
	"-Djava.net.preferIPv4Stack=true",
	"-Dzookeeper.forceSync=no",
	"-Dzookeeper.preAllocSize=1024",
	"-Dzookeeper.snapshot.trust.empty=true",
	"-Dzookeeper.admin.enableServer=false",
	"-Dzookeeper.jmx.log4j.disable=true",
	"-Dzookeeper.cnxTimeout=1000",
	"-Dorg.slf4j.simpleLogger.showDateTime=true",
	"-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",
	// One INFO line per four-letter word would bury the log tail a failed
	// test shows, since tests poll wchc, mntr and srvr.
	"-Dorg.slf4j.simpleLogger.log." + cnxnLogger + "=warn",
}

// checkProperties validates Options.SystemProperties.
func (o Options) checkProperties() error {
	for k := range o.SystemProperties {
		if k == "" || strings.ContainsAny(k, "= \t\n") {
			return &OptionsError{Field: "SystemProperties", Value: k, Reason: "want a key without =, spaces or control characters"}
		}
	}
	return nil
}

// systemProperties returns Options.SystemProperties as JVM flags, sorted
// by key.
func (o Options) systemProperties() []string {
	keys := slices.Sorted(maps.Keys(o.SystemProperties))
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, "-D"+k+"="+o.SystemProperties[k])
	}
	return out
}

// cnxnLogger logs every four-letter-word command at INFO (nettyCnxnLogger
// with the Netty connection factory that TLS needs).
const (
	cnxnLogger      = "org.apache.zookeeper.server.NIOServerCnxn"
	nettyCnxnLogger = "org.apache.zookeeper.server.NettyServerCnxn"
)

// serverSecurity is what a server of a cluster with Options.TLS or
// Options.SASLUsers is configured with; the zero value is neither.
type serverSecurity struct {
	tls        *tlsMaterial
	clientAuth string // ssl.clientAuth
	jaas       string // the JAAS configuration's path, "" without SASL
	// saslRequired: sessionRequireClientSASLAuth (Options.SASLRequired).
	saslRequired bool
}

// writeConfig adds the secure client port and its Netty connection factory
// to zoo.cfg (the ssl.* settings go in as system properties, sysProps).
func (sec serverSecurity) writeConfig(line func(k string, v any), s *server) {
	if sec.tls == nil {
		return
	}
	line("secureClientPort", s.securePort)
	line("secureClientPortAddress", "127.0.0.1")
}

// sysProps are the JVM flags for TLS (ZooKeeper reads its ssl.* settings
// as zookeeper.ssl.* system properties) and SASL.
func (sec serverSecurity) sysProps() []string {
	var p []string
	if sec.tls != nil {
		t := sec.tls
		p = append(p,
			"-Dzookeeper.serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory",
			"-Dzookeeper.ssl.keyStore.location="+t.keyStore,
			"-Dzookeeper.ssl.keyStore.password="+t.password,
			"-Dzookeeper.ssl.keyStore.type=PKCS12",
			"-Dzookeeper.ssl.trustStore.location="+t.trustStore,
			"-Dzookeeper.ssl.trustStore.password="+t.password,
			"-Dzookeeper.ssl.trustStore.type=PKCS12",
			"-Dzookeeper.ssl.clientAuth="+sec.clientAuth,
			"-Dorg.slf4j.simpleLogger.log."+nettyCnxnLogger+"=warn",
		)
	}
	if sec.jaas != "" {
		p = append(p,
			"-Djava.security.auth.login.config="+sec.jaas,
			"-Dzookeeper.authProvider.sasl="+saslProvider,
		)
		if sec.saslRequired {
			p = append(p, "-Dzookeeper.sessionRequireClientSASLAuth=true")
		}
	}
	return p
}

// writeConfig writes zoo.cfg and myid for server s of the ensemble peers
// (peers has one entry for a standalone server, which then gets no
// server.N lines); s reaches peer p's quorum port at peerPort(s, p).
func writeConfig(s *server, peers []*server, opts Options, peerPort func(from, to *server) int) error {
	if err := os.MkdirAll(s.dataDir(), 0o755); err != nil {
		return fmt.Errorf("create data dir: %w", err)
	}
	var b strings.Builder
	line := func(k string, v any) { fmt.Fprintf(&b, "%s=%v\n", k, v) }
	line("tickTime", opts.TickTime.Milliseconds())
	line("initLimit", initLimitTicks)
	line("syncLimit", opts.SyncLimit)
	line("dataDir", s.dataDir())
	if !opts.DynamicConfig {
		line("clientPort", s.clientPort)
		line("clientPortAddress", "127.0.0.1")
	}
	line("maxClientCnxns", 0)
	line("4lw.commands.whitelist", "*")
	line("admin.enableServer", "false")
	if opts.MinSessionTimeout > 0 {
		line("minSessionTimeout", opts.MinSessionTimeout.Milliseconds())
	}
	if opts.MaxSessionTimeout > 0 {
		line("maxSessionTimeout", opts.MaxSessionTimeout.Milliseconds())
	}
	s.security.writeConfig(line, s)
	if opts.DynamicConfig {
		if err := writeDynamicConfig(s, peers, line); err != nil {
			return err
		}
	} else if len(peers) > 1 {
		for _, p := range peers {
			port := p.quorumPort
			if p != s {
				port = peerPort(s, p)
			}
			fmt.Fprintf(&b, "server.%d=127.0.0.1:%d:%d\n", p.id(), port, p.electionPort)
		}
		myid := []byte(strconv.Itoa(s.id()) + "\n")
		if err := os.WriteFile(filepath.Join(s.dataDir(), "myid"), myid, 0o644); err != nil {
			return fmt.Errorf("write myid: %w", err)
		}
	}
	if err := os.WriteFile(s.configPath(), []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("write zoo.cfg: %w", err)
	}
	return writeLogConfigs(s.dir)
}

// writeLogConfigs writes console-only configurations for the logging
// backends an Apache release may bring (log4j 1.2 before 3.8, logback from
// 3.8); Debian's package logs through slf4j-simple, configured by flags.
func writeLogConfigs(dir string) error {
	const log4j = "log4j.rootLogger=INFO, C\n" +
		"log4j.logger." + cnxnLogger + "=WARN\n" +
		"log4j.appender.C=org.apache.log4j.ConsoleAppender\n" +
		"log4j.appender.C.layout=org.apache.log4j.PatternLayout\n" +
		"log4j.appender.C.layout.ConversionPattern=%d{HH:mm:ss.SSS} [%t] %-5p %c{1} - %m%n\n"
	const logback = `<configuration>
  <appender name="C" class="ch.qos.logback.core.ConsoleAppender">
    <encoder><pattern>%d{HH:mm:ss.SSS} [%thread] %-5level %logger{0} - %msg%n</pattern></encoder>
  </appender>
  <logger name="` + cnxnLogger + `" level="WARN"/>
  <root level="INFO"><appender-ref ref="C"/></root>
</configuration>
`
	if err := os.WriteFile(filepath.Join(dir, "log4j.properties"), []byte(log4j), 0o644); err != nil {
		return fmt.Errorf("write log4j.properties: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "logback.xml"), []byte(logback), 0o644); err != nil {
		return fmt.Errorf("write logback.xml: %w", err)
	}
	return nil
}

// javaArgs is the command line (without the java executable) that runs
// server s.
func javaArgs(s *server, inst installation) []string {
	args := append([]string{}, jvmFlags...)
	args = append(args, s.security.sysProps()...)
	if s.juteMaxBuffer > 0 {
		args = append(args, fmt.Sprintf("-Djute.maxbuffer=%d", s.juteMaxBuffer))
	}
	args = append(args, s.props...)
	args = append(args, "-Xmx"+s.heap,
		"-Dlog4j.configuration=file:"+filepath.Join(s.dir, "log4j.properties"),
		"-Dlogback.configurationFile="+filepath.Join(s.dir, "logback.xml"),
		"-cp", strings.Join(inst.classpath, string(os.PathListSeparator)),
		"org.apache.zookeeper.server.quorum.QuorumPeerMain",
		s.configPath(),
	)
	return args
}
