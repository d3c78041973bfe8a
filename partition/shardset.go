package partition

import "github.com/zkelect/zkelect/partition/assign"

// Members are meant to run the same shard list, but nothing forces them
// to: a rolling deployment changes it member by member, and a
// misconfigured member may run a shorter one. The assignment deals every
// shard to some live member, and a member never campaigns for a shard that
// is not in its own list: a shard dealt to a member that does not run it
// would have no leader. So each member publishes a digest of its list in
// its record, and deals its shards only among the live members that
// publish the same digest (members whose record does not say yet count as
// running the same list). Members that disagree form groups that each
// lead their own shards; a shard in two groups' lists gets a candidate
// from each, and its election decides. Balance then holds within each
// group, and safety, as always, rests on the elections alone.

// shardSetDigest names a shard list independently of its order and
// duplicates (assign.ListDigest), so that every member computes the same
// digest.
func shardSetDigest(ids []string) string { return assign.ListDigest(ids) }
