package main

import "strconv"

// shardLess orders shard ids numerically when both are numbers, else
// lexically, so tables read 0, 1, 2, ..., 10 rather than 0, 1, 10, 11.
func shardLess(a, b string) bool {
	x, errA := strconv.ParseUint(a, 10, 64)
	y, errB := strconv.ParseUint(b, 10, 64)
	switch {
	case errA == nil && errB == nil:
		return x < y
	case errA == nil:
		return true
	case errB == nil:
		return false
	}
	return a < b
}
