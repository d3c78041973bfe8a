package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// UseNameserver makes the test's resolver ask only the DNS server at ip
// (port 53; a DNS started by StartDNS): it bind-mounts a private
// resolv.conf over /etc/resolv.conf in the test's own mount namespace
// (WithPrivateHosts), one attempt of 5s per query. The machine's file is
// never touched. Call it before the test's first lookup: Go's resolver
// reads the file again at most every 5 seconds.
func (h *Hosts) UseNameserver(ip string) error {
	file := filepath.Join(filepath.Dir(h.path), "resolv.conf")
	conf := fmt.Sprintf("nameserver %s\noptions timeout:5 attempts:1\n", ip)
	if err := os.WriteFile(file, []byte(conf), 0o644); err != nil {
		return fmt.Errorf("testenv: write private resolv.conf: %w", err)
	}
	if err := syscall.Mount(file, "/etc/resolv.conf", "", syscall.MS_BIND, ""); err != nil {
		return fmt.Errorf("testenv: bind-mount the private resolv.conf over /etc/resolv.conf: %w", err)
	}
	return nil
}
