package partition

import (
	"maps"
	"slices"

	rootdata "github.com/zkelect/zkelect/partition/internal/root"
	"github.com/zkelect/zkelect/partition/internal/root/electview"
)

// WatchCluster's picture kept from what changed at each step of its
// view: the shards whose election changed (electview's TakeChanged), and
// the members and operator state (a few thousand entries at most), instead
// of rebuilding and comparing every shard's leader at each step. A step
// that changes k shards' leaders costs O(k + members); only a change of a
// member's address (which every shard it leads carries) rebuilds the
// leaders whole. Handing the picture to fn copies it (fn owns it).

// leaderSource is what a picture reads of the elections: electview's
// Elections.
type leaderSource interface {
	// TakeChanged returns the shards whose leader may have changed since
	// the last call.
	TakeChanged() []string
	// Leader returns shard's leader, if it has one.
	Leader(shard string) (electview.Leader, bool)
	// Published returns every led shard's leader.
	Published() map[string]rootdata.Published
}

// picture is WatchCluster's picture and what keeps it current.
type picture struct {
	c        Cluster
	started  bool
	whole    bool              // the last step rebuilt the picture
	shards   []string          // the shards whose leader the last step changed
	leads    map[string]int    // member → shards it leads (in c.Leaders)
	address  map[string]string // member → the address c.Leaders carries for it
	operator []byte            // c.Operator encoded
}

// step updates the picture from one step of the view and reports whether
// it changed.
func (p *picture) step(v *rootdata.View, e leaderSource) bool {
	changed := e.TakeChanged()
	address := addressesOf(v)
	if !p.started || !maps.Equal(address, p.address) {
		p.rebuild(v, e.Published(), address)
		p.whole, p.shards = true, nil
		return true
	}
	p.whole, p.shards = false, p.shards[:0]
	for _, s := range changed {
		if p.setLeader(s, e) {
			p.shards = append(p.shards, s)
		}
	}
	diff := len(p.shards) > 0
	members := p.membersOf(v)
	if !membersEqual(members, p.c.Members) {
		p.c.Members, diff = members, true
	}
	if op, _ := v.Operator.OperatorState.Encode(); !slices.Equal(op, p.operator) {
		p.c.Operator, p.operator, diff = v.Operator.OperatorState.Clone(), op, true
	}
	return diff
}

// change is the last step's change, sharing the picture.
func (p *picture) change() ClusterChange {
	ch := ClusterChange{Cluster: p.c, Whole: p.whole}
	if !p.whole {
		ch.Shards = slices.Clone(p.shards)
	}
	return ch
}

// rebuild makes the picture whole from the view and every leader.
func (p *picture) rebuild(v *rootdata.View, leaders map[string]rootdata.Published, address map[string]string) {
	p.c, p.started, p.address = clusterOf(v, leaders), true, address
	p.leads = make(map[string]int, len(p.c.Members))
	for id, m := range p.c.Members {
		if m.Leads > 0 {
			p.leads[id] = m.Leads
		}
	}
	p.operator, _ = p.c.Operator.Encode()
}

// setLeader takes shard's leader from e, and reports whether it changed.
func (p *picture) setLeader(s string, e leaderSource) bool {
	l, ok := e.Leader(s)
	old, had := p.c.Leaders[s]
	if ok {
		next := ShardLeader{Member: l.Member, Address: p.address[l.Member], Token: l.Token}
		if had && old == next {
			return false
		}
		p.c.Leaders[s] = next
		p.leads[next.Member]++
	} else {
		if !had {
			return false
		}
		delete(p.c.Leaders, s)
	}
	if had {
		if p.leads[old.Member]--; p.leads[old.Member] <= 0 {
			delete(p.leads, old.Member)
		}
	}
	return true
}

// membersOf returns the view's live members, with the shards each leads,
// and every other member leading a shard, as clusterOf does.
func (p *picture) membersOf(v *rootdata.View) map[string]MemberInfo {
	out := make(map[string]MemberInfo, len(v.Members))
	for id, sess := range v.Members {
		mi := MemberInfo{Weight: v.Weight(id), Drained: v.Operator.IsDrained(id), Leads: p.leads[id]}
		if r, ok := v.Records[id]; ok && r.Session == sess {
			mi.Address, mi.Labels = r.Address, maps.Clone(r.Labels)
		}
		out[id] = mi
	}
	for id, n := range p.leads {
		if _, live := out[id]; !live {
			out[id] = MemberInfo{Leads: n}
		}
	}
	return out
}

// addressesOf returns each live member's address, as clusterOf gives its
// leaders: from its record of its current session ("" without one).
func addressesOf(v *rootdata.View) map[string]string {
	out := make(map[string]string, len(v.Members))
	for id, sess := range v.Members {
		if r, ok := v.Records[id]; ok && r.Session == sess {
			out[id] = r.Address
		} else {
			out[id] = ""
		}
	}
	return out
}

// membersEqual reports whether two pictures' members are the same.
func membersEqual(a, b map[string]MemberInfo) bool {
	return maps.EqualFunc(a, b, func(m, n MemberInfo) bool {
		return m.Address == n.Address && m.Weight == n.Weight && m.Drained == n.Drained && m.Leads == n.Leads && maps.Equal(m.Labels, n.Labels)
	})
}
