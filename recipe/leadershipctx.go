package recipe

import "context"

// leadershipKey is the context key of the Leadership a context belongs to.
type leadershipKey struct{}

// LeadershipFrom returns the Leadership whose Context ctx is or derives
// from, and whether there is one: code handed only a context (a
// partition.Config.OnStartedLeading callback, for example) reaches the
// leader's znode and its version, which zxidfence's ZooKeeper guard checks
// (zxidfence.LeaderOf(lead, gen)), as well as the token.
func LeadershipFrom(ctx context.Context) (*Leadership, bool) {
	l, ok := ctx.Value(leadershipKey{}).(*Leadership)
	return l, ok && l != nil
}
