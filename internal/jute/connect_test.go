package jute

import (
	"bytes"
	"testing"
	"time"
)

// TestConnectRequestHasGoZookeepersLayout: the connect request the layer's
// CloseSession and testenv's ExpireSession send is the 44-byte one the
// connection layer recognises, with the session's id, password and
// timeout where a server reads them.
func TestConnectRequestHasGoZookeepersLayout(t *testing.T) {
	pw := bytes.Repeat([]byte{7}, 16)
	f := ConnectRequest(0x1234, 2500*time.Millisecond, 0x77, pw)
	if !IsConnectRequest(f) || len(f) != 4+ConnectRequestLen {
		t.Fatalf("connect request of %d bytes is not recognised as one", len(f))
	}
	if ConnectLastZxid(f) != 0x1234 {
		t.Fatalf("last zxid %x, want 1234", ConnectLastZxid(f))
	}
	d := NewDecoder(f[4:])
	if v, z, to, id, got := d.Int32(), d.Int64(), d.Int32(), d.Int64(), d.Buffer(); v != 0 || z != 0x1234 || to != 2500 || id != 0x77 || !bytes.Equal(got, pw) || d.Err() != nil {
		t.Fatalf("decoded version %d zxid %x timeout %d id %x password %x (%v)", v, z, to, id, got, d.Err())
	}
}
