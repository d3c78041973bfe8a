//go:build !linux

package proctree

// List returns nil outside Linux: there is no /proc to read.
func List() []Process { return nil }

// Stat finds nothing outside Linux: there is no /proc to read.
func Stat(pid int) (Process, bool) { return Process{}, false }
