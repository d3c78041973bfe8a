// Package registry holds the one Prometheus registration rule zkelect's
// packages share: several sessions or managers in one process may register
// the same collectors on one Registerer, and then share them.
package registry

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Register registers c on r and returns it, or returns the collector of the
// same type already registered under the same description. Any other
// registration error (an inconsistent description) leaves c unregistered
// and returns it, so metrics stay usable but unexported.
func Register[C prometheus.Collector](r prometheus.Registerer, c C) C {
	if err := r.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing
			}
		}
	}
	return c
}
