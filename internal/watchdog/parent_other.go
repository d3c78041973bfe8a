//go:build !linux

package watchdog

import (
	"context"
	"time"
)

// watchParent has no proof of death outside Linux.
func watchParent(int) (<-chan struct{}, func(), error) { return nil, nil, ErrUnsupported }

// killGroups is never reached outside Linux (watchParent fails first).
func killGroups(context.Context, []int, time.Duration) error { return ErrUnsupported }

// Supported reports whether this kernel can prove a process's death: never
// outside Linux.
func Supported() bool { return false }
