//go:build !linux

package proctree

// List finds nothing outside Linux: there is no /proc to read, and no
// error is returned (a caller has no tree to end there).
func List() ([]Process, error) { return nil, nil }

// Stat finds nothing outside Linux: there is no /proc to read.
func Stat(pid int) (Process, bool) { return Process{}, false }
