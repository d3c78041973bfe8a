package zkconn

import (
	"bufio"
	"io"
	"net"
	"os"
	"strings"
)

// maxHostsFile is the most of a hosts file read.
const maxHostsFile = 1 << 20

// hostsFileAddrs returns the addresses the hosts file at path gives host
// (case aside, a trailing dot aside), in the file's order; none when the
// file cannot be read or does not name host. It reads the file at every
// call: a hosts file is small, and a server moved behind a name in it
// (a container platform's or a test's) must be reached at once, where
// Go's resolver keeps the file's answers for 5s. The file is read before
// DNS, as the resolvers' usual order ("hosts: files dns") does.
func hostsFileAddrs(path, host string) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	host = strings.TrimSuffix(host, ".")
	var out []string
	sc := bufio.NewScanner(io.LimitReader(f, maxHostsFile))
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		ip, _, _ := strings.Cut(fields[0], "%")
		if net.ParseIP(ip) == nil {
			continue
		}
		for _, name := range fields[1:] {
			if strings.EqualFold(strings.TrimSuffix(name, "."), host) {
				out = append(out, fields[0])
				break
			}
		}
	}
	return out
}
