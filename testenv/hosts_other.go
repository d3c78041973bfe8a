//go:build !linux

package testenv

import "testing"

// WithPrivateHosts needs Linux mount namespaces: elsewhere it skips t.
func WithPrivateHosts(t *testing.T, body func(t *testing.T, h *Hosts)) {
	t.Skip("testenv: a private /etc/hosts needs Linux mount namespaces; skipped")
}
