package electview

import (
	"strings"

	rootdata "github.com/zkelect/zkelect/partition/internal/root"
)

// What a change's path under the root is to the view.
type pathKind uint8

const (
	pathOther     pathKind = iota // members, records, operator: not an election
	pathLayout                    // <root>/buckets or <root>/shards itself: the layout may change
	pathBucket                    // <root>/buckets/<bucket>
	pathElection                  // a shard's election znode
	pathCandidate                 // a candidate znode in an election
)

// election names one shard election: its shard and whether it is a flat
// one (<root>/shards/<shard>).
type election struct {
	shard string
	flat  bool
}

// classify tells what p, a path under root, is; for an election or a
// candidate, the election's path and shard.
func classify(root, p string) (kind pathKind, elPath string, el election) {
	rel, ok := strings.CutPrefix(p, root+"/")
	if !ok {
		return pathOther, "", election{}
	}
	parts := strings.Split(rel, "/")
	switch parts[0] {
	case rootdata.BucketsDir:
		switch len(parts) {
		case 1:
			return pathLayout, "", election{}
		case 2:
			return pathBucket, "", election{}
		case 3:
			return pathElection, p, election{shard: parts[2]}
		case 4:
			return pathCandidate, root + "/" + strings.Join(parts[:3], "/"), election{shard: parts[2]}
		}
	case rootdata.ShardsDir:
		switch len(parts) {
		case 1:
			return pathLayout, "", election{}
		case 2:
			return pathElection, p, election{shard: parts[1], flat: true}
		case 3:
			return pathCandidate, root + "/" + strings.Join(parts[:2], "/"), election{shard: parts[1], flat: true}
		}
	}
	return pathOther, "", election{}
}
