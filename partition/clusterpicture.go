package partition

import (
	"maps"
	"slices"

	rootdata "github.com/zkelect/zkelect/partition/internal/root"
	"github.com/zkelect/zkelect/partition/internal/root/electview"
	"github.com/zkelect/zkelect/partition/operator"
	"github.com/zkelect/zkelect/zxidfence"
)

// WatchCluster's picture kept from what changed at each step of its
// view: the shards whose election changed (electview's TakeChanged), and
// the members and operator state (a few thousand entries at most), instead
// of rebuilding and comparing every shard's leader at each step. A step
// that changes k shards' leaders costs O(k + members); only a change of a
// member's address (which every shard it leads carries) rebuilds the
// leaders whole. Handing the picture to fn copies it (fn owns it). The
// picture's shapes (Cluster, ShardLeader, MemberInfo, ClusterChange) are
// here too, below the calls in cluster.go that read and watch it.

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

// Cluster is a root's picture: its elections' leaders and what its
// members and operators publish.
type Cluster struct {
	// Leaders maps each led shard to its leader as the shard's election
	// holds it (the first candidate znode's member and czxid); a shard
	// without a leader is missing. No record is a source of leaders: a
	// record that claims shards its member does not lead shows nothing.
	Leaders map[string]ShardLeader
	// Members maps each live member to its metadata.
	Members map[string]MemberInfo
	// Operator is the operator state (the data of <root>/operator).
	Operator operator.State
}

// ShardLeader is a shard's leader as its election holds it.
type ShardLeader struct {
	Member  string          // the leading member's id (its candidate znode's data)
	Address string          // its Config.Address, from its record; "" if it publishes none or is not live
	Token   zxidfence.Token // its fencing token (the candidate znode's czxid)
}

// MemberInfo is what a live member publishes, with what operators set.
type MemberInfo struct {
	// Address is the member's Config.Address ("" if none, or from a record
	// of a release before addresses).
	Address string
	// Labels are the member's Config.Labels.
	Labels map[string]string
	// Weight is the weight the assignment uses: the operator's, else the
	// member's own, else 1.
	Weight int
	// Drained reports an operator's drain.
	Drained bool
	// Leads counts the shards it leads, as the elections hold them.
	Leads int
}

// ClusterChange is one change of a root's picture (WatchClusterChanges).
type ClusterChange struct {
	// Cluster is the picture after the change. It is the watch's own,
	// shared and updated in place by later changes: read it only within
	// the callback, and copy what you keep (Cluster.Clone).
	Cluster Cluster
	// Shards lists the shards whose leader changed (each now in
	// Cluster.Leaders, or gone from it); nil when Whole.
	Shards []string
	// Whole reports that any shard's leader or address may have changed:
	// the first picture, and after a member came, went or published
	// another address (every shard it leads carries its address).
	Whole bool
}

// Clone returns a deep copy of c, for keeping a ClusterChange's picture
// past its callback.
func (c Cluster) Clone() Cluster {
	out := Cluster{Leaders: maps.Clone(c.Leaders), Members: make(map[string]MemberInfo, len(c.Members)), Operator: c.Operator.Clone()}
	for id, m := range c.Members {
		m.Labels = maps.Clone(m.Labels)
		out.Members[id] = m
	}
	return out
}

// clusterOf returns the view's picture, with leaders (the elections') as
// its shards' leaders.
func clusterOf(v *rootdata.View, leaders map[string]rootdata.Published) Cluster {
	c := Cluster{Leaders: map[string]ShardLeader{}, Members: map[string]MemberInfo{}, Operator: v.Operator.OperatorState.Clone()}
	for id, sess := range v.Members {
		mi := MemberInfo{Weight: v.Weight(id), Drained: v.Operator.IsDrained(id)}
		if r, ok := v.Records[id]; ok && r.Session == sess {
			mi.Address, mi.Labels = r.Address, maps.Clone(r.Labels)
		}
		c.Members[id] = mi
	}
	for s, p := range leaders {
		mi := c.Members[p.Member]
		mi.Leads++
		c.Members[p.Member] = mi
		c.Leaders[s] = ShardLeader{Member: p.Member, Address: mi.Address, Token: p.Token}
	}
	return c
}
