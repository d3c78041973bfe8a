package proctree

import "errors"

// This file holds what the listing (proc_*.go), the pinning (pidfd_*.go)
// and the tree's walk and kill (proctree.go) share: a process as listed,
// and the error for a PID that names another process by now.

// ErrReused is returned (wrapped) when a listed PID names another process
// by the time it is signalled: the listed one exited and its PID was
// reused. The process now holding the PID is left alone.
var ErrReused = errors.New("proctree: pid reused by another process")

// Process is one process as /proc/<pid>/stat shows it.
type Process struct {
	PID   int    // its process id
	PPID  int    // its parent
	PGID  int    // its process group
	Start uint64 // start time in clock ticks after boot: with PID, names one process
	Live  bool   // able to run: not a zombie (or a zombie leader with live threads)
}
