package cli

import (
	"context"
	"errors"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// TestRunRefusesAnElectionPathRecreatedOpen: between two runs an
// anonymous client deletes the idle election path (its parent was left
// open) and creates it again open: the next secured run refuses it,
// naming the path and the ACL found, and writes nothing there; with
// --accept-open-acl it runs, warning.
func TestRunRefusesAnElectionPathRecreatedOpen(t *testing.T) {
	s := testSession(t)
	election := testPath(t) + "/run"
	for _, p := range []string{path.Dir(path.Dir(election)), path.Dir(election), election} {
		if _, err := s.Create(context.Background(), p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatalf("create %s: %v", p, err)
		}
	}
	cred := envZKCredentials + "=cmdgroup:cmdsecret"
	p := startProc(t, "secured run", runArgs(t, zkc.ConnectString(), election, "p1", "--zk-auth", "digest"), cred)
	if code := p.wait(30 * time.Second); code == 0 {
		t.Fatalf("secured run on an open election path exited 0; want a refusal")
	}
	stderr := p.err.String()
	for _, want := range []string{election + " has ACL world:anyone:cdrwa", "--accept-open-acl"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr of the refused run lacks %q:\n%s", want, stderr)
		}
	}
	if ps := participants(t, s, election); len(ps) != 0 {
		t.Fatalf("the refused run left participants %v", ps)
	}

	events := filepath.Join(t.TempDir(), "events")
	startProc(t, "accepting run", runArgs(t, zkc.ConnectString(), election, "p1", "--zk-auth", "digest", "--accept-open-acl"),
		cred, envTestChild+"="+events)
	eventually(t, 20*time.Second, "the accepting run's child to start", func() bool { return countKind(readEvents(t, events), "start") == 1 })
}

// TestShardsRefusesASquattedRoot: a root an anonymous client created open
// before the first start, with an open operator znode: a secured shards
// daemon refuses it, naming the root and its ACL, and registers nothing.
func TestShardsRefusesASquattedRoot(t *testing.T) {
	s := testSession(t)
	root := testPath(t) + "/root"
	for _, p := range []string{path.Dir(path.Dir(root)), path.Dir(root), root, root + "/members", root + "/operator"} {
		if _, err := s.Create(context.Background(), p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatalf("create %s: %v", p, err)
		}
	}
	p := startProc(t, "secured shards", []string{"shards", "--zk", zkc.ConnectString(), "--root", root, "--member", "m1",
		"--shards", "2", "--listen", "127.0.0.1:0", "--zk-auth", "digest"}, envZKCredentials+"=cmdgroup:cmdsecret")
	if code := p.wait(30 * time.Second); code == 0 {
		t.Fatalf("secured shards on a squatted root exited 0; want a refusal")
	}
	stderr := p.err.String()
	for _, want := range []string{root + " has ACL world:anyone:cdrwa", "--accept-open-acl"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr of the refused shards lacks %q:\n%s", want, stderr)
		}
	}
	if kids, _, err := s.Children(context.Background(), root+"/members"); err != nil || len(kids) != 0 {
		t.Errorf("members of the squatted root after the refusal: %v %v; want none", kids, err)
	}
}
