//go:build !linux

package testenv

import "errors"

// UseNameserver needs Linux mount namespaces (WithPrivateHosts skips the
// test elsewhere).
func (h *Hosts) UseNameserver(ip string) error {
	return errors.New("testenv: a private resolv.conf needs Linux mount namespaces")
}
