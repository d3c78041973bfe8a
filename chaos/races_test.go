package chaos

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// raceSeparator delimits the race detector's reports in its log.
const raceSeparator = "=================="

// knownRace reports whether a race report is go-zookeeper v1.0.4's own
// (Conn.lastZxid written by recvLoop while a reconnect's sendSetWatches
// reads it): a bug in the dependency that zkelect cannot fix, hit whenever a
// session with go-zookeeper watches reconnects.
func knownRace(report string) bool {
	return strings.Contains(report, "go-zookeeper/zk.(*Conn).sendSetWatches") &&
		strings.Contains(report, "go-zookeeper/zk.(*Conn).recvLoop")
}

// raceReports reads the race detector logs the members wrote under dir
// (GORACE log_path) and splits them into known go-zookeeper races and the
// rest.
func raceReports(dir string) (known int, others []string, err error) {
	files, err := filepath.Glob(filepath.Join(dir, "race.*"))
	if err != nil {
		return 0, nil, fmt.Errorf("list race logs: %w", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return 0, nil, fmt.Errorf("read race log: %w", err)
		}
		for _, rep := range strings.Split(string(b), raceSeparator) {
			if !strings.Contains(rep, "DATA RACE") {
				continue
			}
			if knownRace(rep) {
				known++
			} else {
				others = append(others, strings.TrimSpace(rep))
			}
		}
	}
	return known, others, nil
}
