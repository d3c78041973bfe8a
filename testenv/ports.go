package testenv

import (
	"fmt"
	"net"
)

// freePorts returns n distinct TCP ports that were free on 127.0.0.1 a moment
// ago. All listeners are held until every port is chosen, so the ports are
// distinct; another process may still take one before the server binds it,
// which Start handles by retrying with new ports.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("pick a free port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
