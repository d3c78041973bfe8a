package cli

import (
	"net"
	"os"
	"testing"
)

// TestAdvertisedAddress: --advertise wins; otherwise --listen, with an
// unspecified host replaced by the host name others can reach.
func TestAdvertisedAddress(t *testing.T) {
	host, err := os.Hostname()
	if err != nil {
		t.Skip("no host name")
	}
	for _, c := range []struct{ listen, advertise, want string }{
		{"127.0.0.1:9464", "", "127.0.0.1:9464"},
		{"0.0.0.0:9464", "", net.JoinHostPort(host, "9464")},
		{"[::]:9464", "", net.JoinHostPort(host, "9464")},
		{":9464", "", net.JoinHostPort(host, "9464")},
		{"0.0.0.0:9464", "10.0.0.7:80", "10.0.0.7:80"},
	} {
		f := &shardsFlags{listen: c.listen, advertise: c.advertise}
		if got := f.advertised(); got != c.want {
			t.Errorf("--listen %q --advertise %q: advertised %q, want %q", c.listen, c.advertise, got, c.want)
		}
	}
}
