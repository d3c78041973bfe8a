package devcli

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// startCPUProfile starts writing the process's CPU profile (the members,
// their sessions and the bench itself; the ZooKeeper servers are other
// processes) to path, for `go tool pprof`; stop ends it and closes the
// file. An empty path profiles nothing.
func startCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("invalid --cpuprofile %s: %w", path, err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("start CPU profile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}, nil
}
