package zkconn

import "testing"

// TestValidateServers accepts host:port and a bare host (port 2181, as
// go-zookeeper and ZooKeeper's Java client read it), and refuses the rest.
func TestValidateServers(t *testing.T) {
	for _, tc := range []struct {
		server string
		ok     bool
	}{
		{"127.0.0.1:2181", true},
		{"zk1.example.com:2181", true},
		{"[::1]:2181", true},
		{"zk1", true},
		{"127.0.0.1", true},
		{"127.0.0.1:99999", false},
		{"127.0.0.1:0", false},
		{"127.0.0.1:x", false},
		{":2181", false},
		{"", false},
		{"::1", false},
	} {
		if err := CheckServers([]string{tc.server}); (err == nil) != tc.ok {
			t.Errorf("CheckServers(%q) = %v, want ok=%v", tc.server, err, tc.ok)
		}
	}
}
