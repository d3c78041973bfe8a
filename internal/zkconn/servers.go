package zkconn

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// defaultClientPort is ZooKeeper's client port, which a server given
// without one gets (as in go-zookeeper and ZooKeeper's Java client).
const defaultClientPort = "2181"

// CheckServers checks Dial's server list: at least one entry, each
// "host:port" with a non-empty host and a port in 1..65535, or a bare host
// (no colon) meaning port 2181, so a typo fails at once instead of after
// the connect timeout.
func CheckServers(servers []string) error {
	if len(servers) == 0 {
		return &ServersError{Reason: "empty server list"}
	}
	for _, s := range servers {
		if s != "" && !strings.Contains(s, ":") {
			s = net.JoinHostPort(s, defaultClientPort)
		}
		host, port, err := net.SplitHostPort(s)
		if err != nil || host == "" {
			return &ServersError{Reason: fmt.Sprintf("%q is not host:port", s)}
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return &ServersError{Reason: fmt.Sprintf("%q: port must be a number in 1..65535", s)}
		}
	}
	return nil
}
