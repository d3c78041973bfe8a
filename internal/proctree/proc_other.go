//go:build !linux

package proctree

// Descendants returns nil outside Linux: there is no /proc to read.
func Descendants(pid int) []Process { return nil }
