//go:build !linux

package watchdog

// watchParent has no proof of death outside Linux.
func watchParent(int) (<-chan struct{}, func(), error) { return nil, nil, ErrUnsupported }
