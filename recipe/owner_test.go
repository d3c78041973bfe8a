package recipe_test

import (
	"context"
	"path"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/zkelect/zkelect/testenv"
)

func TestNeverLeadsOnAZnodeOfAnotherSession(t *testing.T) {
	elec := electionPath(t)
	raw := rawConn(t, zkc.ConnectString())
	p := zkc.NewProxyT(t)
	s := session(t, p.ConnectString())
	c := candidate(t, s, elec)
	l := lead(t, c)
	name := path.Base(l.Znode())
	prefix := name[:len(name)-10] // the candidate's protected prefix, with its GUID

	// Cut the candidate off and expire its session; meanwhile another
	// session creates a znode with the candidate's GUID, which now sorts
	// first. Back in contact, the candidate must not take it for its own.
	p.Blackhole()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	creds := p.Sessions()
	last := creds[len(creds)-1]
	if err := testenv.ExpireSession(ctx, zkc.Addrs(), last.ID, last.Password); err != nil {
		t.Fatalf("expire: %v", err)
	}
	impostor, err := raw.Create(elec+"/"+prefix, []byte("impostor"), zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
	if err != nil {
		t.Fatal(err)
	}
	p.Heal()
	awaitEnd(t, l, "the expired leadership to end")
	l2 := lead(t, c)
	if l2.Znode() == impostor {
		t.Fatalf("leads on %s, a znode of another session", impostor)
	}
	_, stat, err := raw.Exists(l2.Znode())
	if err != nil || stat.EphemeralOwner != s.ID() {
		t.Fatalf("leader znode owner %x (err %v), session %x", stat.EphemeralOwner, err, s.ID())
	}
	if ok, _, _ := raw.Exists(impostor); ok {
		t.Fatalf("the znode with the candidate's GUID but another owner, %s, was not deleted", impostor)
	}
}
