package recipe_test

import (
	"context"
	"errors"
	"path"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/recipe"
)

// securedElection returns an election path one level below the tests'
// shared open prefix, so that its parent is the test's own.
func securedElection(t testing.TB) string { return electionPath(t) + "/run" }

func TestIdleElectionPathCannotBeDeletedByOthers(t *testing.T) {
	p := securedElection(t)
	s := session(t, zkc.ConnectString(), recipe.WithDigestAuth("alice", "secret"))
	c := candidate(t, s, p, recipe.WithACL(recipe.GroupACL()))
	if err := lead(t, c).Resign(context.Background()); err != nil {
		t.Fatal(err)
	}
	raw := rawConn(t, zkc.ConnectString())
	if kids := children(t, raw, p); len(kids) != 0 {
		t.Fatalf("children of the idle election %v", kids)
	}
	if err := raw.Delete(p, -1); !errors.Is(err, zk.ErrNoAuth) {
		t.Fatalf("an anonymous client deleting the idle election path %s: %v; want zk.ErrNoAuth (its parent, a shared level, grants nobody delete)", p, err)
	}
	acl, _, err := raw.GetACL(path.Dir(p))
	if err != nil {
		t.Fatal(err)
	}
	// A shared level (recipe.SharedParentACL): others may create their
	// own elections beside this one, nobody may delete one.
	if got := recipe.FormatACL(acl); got != "world:anyone:cr" {
		t.Fatalf("ACL of the election's parent %s = %s; want world:anyone:cr", path.Dir(p), got)
	}
}

func TestCampaignRefusesAnElectionPathRecreatedOpen(t *testing.T) {
	// The layout zkelect made before its parents got the group's ACL: the
	// parent open, the election path the group's. Between two runs an
	// anonymous client deletes the idle path and creates it again open.
	p := securedElection(t)
	raw := rawConn(t, zkc.ConnectString())
	ensurePath(t, raw, path.Dir(p))
	owner := session(t, zkc.ConnectString(), recipe.WithDigestAuth("alice", "secret"))
	if _, err := owner.Create(context.Background(), p, nil, 0, recipe.GroupACL()); err != nil {
		t.Fatal(err)
	}
	if err := raw.Delete(p, -1); err != nil {
		t.Fatalf("the anonymous delete the old layout allowed: %v", err)
	}
	if _, err := raw.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}

	c := candidate(t, owner, p, recipe.WithACL(recipe.GroupACL()))
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	_, err := c.Campaign(ctx)
	var unsafe *recipe.UnsafeACLError
	if !errors.As(err, &unsafe) || !errors.Is(err, recipe.ErrUnsafeACL) {
		t.Fatalf("campaign on an election path re-created open: %v; want an *UnsafeACLError", err)
	}
	if unsafe.Path != p || recipe.FormatACL(unsafe.ACL) != "world:anyone:cdrwa" || recipe.FormatACL(unsafe.Grants) != "world:anyone:cdwa" {
		t.Fatalf("UnsafeACLError names %s with ACL %s (grants %s); want %s, world:anyone:cdrwa, world:anyone:cdwa",
			unsafe.Path, recipe.FormatACL(unsafe.ACL), recipe.FormatACL(unsafe.Grants), p)
	}
	if kids := children(t, raw, p); len(kids) != 0 {
		t.Fatalf("the refused campaign created %v", kids)
	}

	// Accepted explicitly, it campaigns.
	lead(t, candidate(t, owner, p, recipe.WithACL(recipe.GroupACL()), recipe.WithACLCheck(recipe.ACLCheckWarn)))
}

func TestCampaignRefusesAnOpenParent(t *testing.T) {
	p := securedElection(t)
	raw := rawConn(t, zkc.ConnectString())
	ensurePath(t, raw, path.Dir(p)) // squatted before the first start
	s := session(t, zkc.ConnectString(), recipe.WithDigestAuth("alice", "secret"))
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	_, err := candidate(t, s, p, recipe.WithACL(recipe.GroupACL())).Campaign(ctx)
	var unsafe *recipe.UnsafeACLError
	if !errors.As(err, &unsafe) || unsafe.Path != path.Dir(p) || recipe.FormatACL(unsafe.Grants) != "world:anyone:da" {
		t.Fatalf("campaign under a parent anyone may delete from: %v; want an *UnsafeACLError naming %s, world:anyone:da", err, path.Dir(p))
	}
}

func TestOpenCandidateChecksNothing(t *testing.T) {
	p := securedElection(t)
	raw := rawConn(t, zkc.ConnectString())
	ensurePath(t, raw, p)
	lead(t, candidate(t, session(t, zkc.ConnectString()), p))
}

func TestCheckNamesTheHiddenDigestOfAnElectionWithoutAdmin(t *testing.T) {
	// The group's election path, made by the group with its digest granted
	// cdrw but not admin: ZooKeeper shows that session the entry as
	// digest:alice:x, so the check cannot prove it the group's.
	p := securedElection(t)
	ensurePath(t, rawConn(t, zkc.ConnectString()), path.Dir(path.Dir(p)))
	s := session(t, zkc.ConnectString(), recipe.WithDigestAuth("alice", "secret"))
	acl := append(zk.DigestACL(zk.PermAll&^zk.PermAdmin, "alice", "secret"), zk.WorldACL(zk.PermRead)...)
	for _, z := range []string{path.Dir(p), p} {
		if _, err := s.Create(context.Background(), z, nil, 0, acl); err != nil {
			t.Fatal(err)
		}
	}
	err := recipe.CheckACL(context.Background(), s, p, acl)
	if !errors.Is(err, recipe.ErrACLDenied) {
		t.Fatalf("CheckACL of %s, made by the group without admin: %v; want ErrACLDenied", p, err)
	}
	if !strings.Contains(err.Error(), "hides the hash of a digest id") {
		t.Fatalf("CheckACL of %s: %q does not say ZooKeeper hid the digest's hash (user:x) for want of admin", p, err)
	}
}

func TestCandidateSecuredByIPCampaigns(t *testing.T) {
	// An ACL of the ip scheme is no login: ZooKeeper grants it to every
	// connection from the address. The candidate's own election path,
	// made with it, is not someone else's.
	p := securedElection(t)
	ipACL := []zk.ACL{{Scheme: "ip", ID: "127.0.0.1", Perms: zk.PermAll}}
	lead(t, candidate(t, session(t, zkc.ConnectString()), p, recipe.WithACL(ipACL)))
	acl, _, err := rawConn(t, zkc.ConnectString()).GetACL(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := recipe.FormatACL(acl); got != "ip:127.0.0.1:cdrwa" {
		t.Fatalf("ACL of the election %s = %s; want ip:127.0.0.1:cdrwa", p, got)
	}
}

func TestACLErrorsDoNotShowTheDigestHash(t *testing.T) {
	// The hash of a digest id is SHA-1 of user:password: an error that
	// ends in a log must not carry it, the session's own included.
	s := session(t, zkc.ConnectString(), recipe.WithDigestAuth("alice", "secret"))
	hash := zk.DigestACL(zk.PermAll, "alice", "secret")[0].ID // alice:<hash>
	// open carries alice's digest with admin, and is open to all.
	open := securedElection(t)
	ensurePath(t, rawConn(t, zkc.ConnectString()), path.Dir(path.Dir(open)))
	mixed := append(zk.DigestACL(zk.PermAll, "alice", "secret"), zk.WorldACL(zk.PermAll)...)
	if _, err := s.Create(context.Background(), path.Dir(open), nil, 0, recipe.GroupACL()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(context.Background(), open, nil, 0, mixed); err != nil {
		t.Fatal(err)
	}
	foreign := path.Dir(open) + "/bob"
	if _, err := s.Create(context.Background(), foreign, nil, 0, zk.DigestACL(zk.PermAll, "bob", "other")); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]error{open: recipe.ErrUnsafeACL, foreign: recipe.ErrACLDenied} {
		err := recipe.CheckACL(context.Background(), s, p, recipe.GroupACL())
		if !errors.Is(err, want) {
			t.Fatalf("CheckACL(%s) = %v; want %v", p, err, want)
		}
		if strings.Contains(err.Error(), hash[len("alice:"):]) {
			t.Fatalf("CheckACL(%s) shows alice's digest hash: %q", p, err)
		}
	}
}

func TestUnreadableParentIsRefusedUnlessAccepted(t *testing.T) {
	// An administrator's parent that only the administrator may read, and
	// the group's election path below it: the group cannot read the
	// parent's ACL (getACL needs read or admin), so nothing proves that
	// others may not delete the election path. Refused by default, as an
	// unsafe ACL that names the fix, it runs once accepted.
	p := securedElection(t)
	ensurePath(t, rawConn(t, zkc.ConnectString()), path.Dir(path.Dir(p)))
	admin := session(t, zkc.ConnectString(), recipe.WithDigestAuth("admin", "root-secret"))
	if _, err := admin.Create(context.Background(), path.Dir(p), nil, 0, zk.DigestACL(zk.PermAll, "admin", "root-secret")); err != nil {
		t.Fatal(err)
	}
	groupACL := append(zk.DigestACL(zk.PermAll, "alice", "secret"), zk.WorldACL(zk.PermRead)...)
	if _, err := admin.Create(context.Background(), p, nil, 0, groupACL); err != nil {
		t.Fatal(err)
	}
	s := session(t, zkc.ConnectString(), recipe.WithDigestAuth("alice", "secret"))
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	_, err := candidate(t, s, p, recipe.WithACL(recipe.GroupACL())).Campaign(ctx)
	var unsafe *recipe.UnsafeACLError
	if !errors.As(err, &unsafe) || unsafe.Path != path.Dir(p) || !strings.Contains(err.Error(), "cannot read") {
		t.Fatalf("campaign under a parent the group cannot read: %v; want an *UnsafeACLError naming %s that says its ACL cannot be read", err, path.Dir(p))
	}
	lead(t, candidate(t, s, p, recipe.WithACL(recipe.GroupACL()), recipe.WithACLCheck(recipe.ACLCheckWarn)))
}

func TestElectionDirectlyUnderTheRootNamesTheFix(t *testing.T) {
	// "/" is open in a fresh ensemble and cannot be deleted: the refusal
	// of an election directly below it says to go deeper, not to delete
	// or re-create its parent.
	s := session(t, zkc.ConnectString(), recipe.WithDigestAuth("alice", "secret"))
	p := "/" + path.Base(electionPath(t))
	err := recipe.CheckACL(context.Background(), s, p, recipe.GroupACL())
	var unsafe *recipe.UnsafeACLError
	if !errors.As(err, &unsafe) || unsafe.Path != "/" || !strings.Contains(err.Error(), "two levels deep") {
		t.Fatalf("CheckACL(%s) = %v; want an *UnsafeACLError naming / that says to put the path two levels deep", p, err)
	}
}

func TestHiddenDigestHintOnlyForTheGroupsUser(t *testing.T) {
	// A znode of another digest user, bob, is shown as digest:bob:x too:
	// its refusal must not send the operator looking for the group's
	// admin permission.
	p := securedElection(t)
	ensurePath(t, rawConn(t, zkc.ConnectString()), path.Dir(path.Dir(p)))
	bob := session(t, zkc.ConnectString(), recipe.WithDigestAuth("bob", "other"))
	for _, z := range []string{path.Dir(p), p} {
		if _, err := bob.Create(context.Background(), z, nil, 0, append(zk.DigestACL(zk.PermAll, "bob", "other"), zk.WorldACL(zk.PermRead)...)); err != nil {
			t.Fatal(err)
		}
	}
	s := session(t, zkc.ConnectString(), recipe.WithDigestAuth("alice", "secret"))
	err := recipe.CheckACL(context.Background(), s, p, recipe.GroupACL())
	if !errors.Is(err, recipe.ErrACLDenied) || strings.Contains(err.Error(), "hides the hash") {
		t.Fatalf("CheckACL of bob's %s as alice = %v; want ErrACLDenied without the hidden-digest hint", p, err)
	}
}
