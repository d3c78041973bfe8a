package cli

import (
	"strings"
	"testing"
	"time"
)

// TestShardsVerbsRefuseWhatCannotHold runs each verb's refusal and the
// pin, unpin, unmove and weight verbs against one daemon process: a refusal exits
// 1 with one line naming why, and changes nothing.
func TestShardsVerbsRefuseWhatCannotHold(t *testing.T) {
	const n = 4
	root := testPath(t)
	d := startDaemonWith(t, root, "m1", n, []string{"--advertise", "m1.example:8080", "--label", "zone=a"})
	s := testSession(t)
	eventually(t, 20*time.Second, "m1 leading every shard", func() bool { return balanced(owners(t, s, root), n, "m1") })
	zk := []string{"--zk", zkc.ConnectString(), "--root", root}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"drain the last member", []string{"drain", "--member", "m1"}, "would leave no live member"},
		{"drain a member that is not live", []string{"drain", "--member", "ghost"}, `"ghost" is not live`},
		{"pin to a member that is not live", []string{"pin", "--shard", "1", "--to", "ghost"}, `"ghost" is not live`},
		{"move a shard without an election", []string{"move", "--shard", "99", "--to", "m1"}, `"99" has no election`},
		{"weight 0", []string{"weight", "--member", "m1", "--weight", "0"}, "want 1..10000"},
		{"freeze for a negative time", []string{"freeze", "--for", "-1m"}, "must not be negative"},
		{"no member", []string{"undrain"}, "missing --member"},
	} {
		p := startProc(t, c.name, append(append([]string{"shards"}, c.args...), zk...))
		if code := p.wait(20 * time.Second); code != 1 || !strings.Contains(p.err.String(), c.want) {
			t.Errorf("%s: exit %d, stderr %q; want 1 and %q", c.name, code, p.err.String(), c.want)
		}
	}
	if out := runVerbCLI(t, root, "pin", "--shard", "1", "--to", "m1"); !strings.Contains(out, "pinned shard 1 to m1") {
		t.Errorf("pin printed %q", out)
	}
	if out := runVerbCLI(t, root, "weight", "--member", "m1", "--weight", "3"); !strings.Contains(out, "set the weight of member m1 to 3") {
		t.Errorf("weight printed %q", out)
	}
	eventually(t, 10*time.Second, "/v1/owners to show the pin, the weight and m1's label", func() bool {
		st := ownersOf(t, d)
		return st.Pins["1"] == "m1" && len(st.MemberList) == 1 && st.MemberList[0].Weight == 3 &&
			st.MemberList[0].Labels["zone"] == "a" && st.MemberList[0].Address == "m1.example:8080"
	})
	runVerbCLI(t, root, "unpin", "--shard", "1")
	if out := runVerbCLI(t, root, "unpin", "--shard", "1"); !strings.Contains(out, "nothing changed") {
		t.Errorf("a second unpin printed %q", out)
	}
	runVerbCLI(t, root, "weight", "--member", "m1", "--reset")
	if out := runVerbCLI(t, root, "unmove", "--shard", "1"); !strings.Contains(out, "nothing changed") {
		t.Errorf("unmove of a shard without a move printed %q", out)
	}
}

// TestShardsVerbsRefuseAMissingRoot runs every operator verb against a root
// no daemon ever ran under (a typo in a runbook): each exits 2 naming the
// root, and nothing is created there. freeze and weight once exited 0,
// freezing nothing.
func TestShardsVerbsRefuseAMissingRoot(t *testing.T) {
	root, s := testPath(t), testSession(t)
	for _, args := range [][]string{
		{"drain", "--member", "m1"}, {"undrain", "--member", "m1"},
		{"freeze", "--for", "1h"}, {"unfreeze"},
		{"move", "--shard", "0", "--to", "m1"}, {"pin", "--shard", "0", "--to", "m1"}, {"unpin", "--shard", "0"},
		{"weight", "--member", "m1", "--weight", "2"}, {"weight", "--member", "m1", "--reset"},
	} {
		p := startProc(t, "shards "+args[0], append(append([]string{"shards"}, args...), "--zk", zkc.ConnectString(), "--root", root))
		want := "partition root " + root + " does not exist"
		if code := p.wait(20 * time.Second); code != statusMissing || !strings.Contains(p.err.String(), want) {
			t.Errorf("shards %v on a missing root: exit %d, stderr %q; want %d and %q", args, code, p.err.String(), statusMissing, want)
		}
	}
	if ok, _, err := s.Exists(t.Context(), root); err != nil || ok {
		t.Errorf("after the refused verbs %s exists: %v, %v", root, ok, err)
	}
}
