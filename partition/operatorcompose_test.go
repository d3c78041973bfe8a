package partition_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/partition/operator"
)

// writeOperatorState stores st as root's operator state directly, as a tool
// of an earlier release (or a lost race) may leave it: the verbs refuse
// to write moves like these.
func writeOperatorState(t *testing.T, root string, st operator.State) {
	t.Helper()
	data, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	sess, p := connect(t, 2*time.Second), path.Join(root, "operator")
	_, stat, err := sess.Get(t.Context(), p)
	switch {
	case errors.Is(err, zk.ErrNoNode):
		_, err = sess.Create(t.Context(), p, data, 0, zk.WorldACL(zk.PermAll))
	case err == nil:
		_, err = sess.Set(t.Context(), p, data, stat.Version)
	}
	if err != nil {
		t.Fatalf("write operator state %s: %v", p, err)
	}
}

// movesLeft returns a description of the moves in op's state, "" for none.
func movesLeft(t *testing.T, op *operator.Operator) string {
	t.Helper()
	st, err := op.State(t.Context())
	if err != nil {
		t.Fatalf("State: %v", err)
	}
	if len(st.Moves) == 0 {
		return ""
	}
	return fmt.Sprint(st.Moves)
}

// TestPinOverAMoveTakesEffect: a pin written while a move of the same
// shard is in progress clears the move, and the shard ends on the pin's
// member; before, the move won and was never cleared, so the shard stayed
// on the move's target for good.
func TestPinOverAMoveTakesEffect(t *testing.T) {
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, 30)
	ms := []*member{startMember(t, root, "a", shards, tr), startMember(t, root, "b", shards, tr), startMember(t, root, "c", shards, tr)}
	before, _ := waitBalanced(t, shards, ms, 20*time.Second)
	s := shardLedBy(t, before, "a")
	op, err := operator.New(connect(t, 2*time.Second), root, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if changed, err := op.Move(ctx, s, "b"); err != nil || !changed {
		t.Fatalf("Move(%s, b) = %v, %v", s, changed, err)
	}
	if changed, err := op.Pin(ctx, s, "c"); err != nil || !changed {
		t.Fatalf("Pin(%s, c) over the move = %v, %v", s, changed, err)
	}
	if left := movesLeft(t, op); left != "" {
		t.Fatalf("moves after Pin: %s, want the pin to clear the move of %s", left, s)
	}
	waitFor(t, 20*time.Second, "the pinned shard on c and no move left", func() (bool, string) {
		lead := leaders(t, ms)
		return lead[s] == "c" && movesLeft(t, op) == "", fmt.Sprintf("%s led by %q; moves %q", s, lead[s], movesLeft(t, op))
	})
	if changed, err := op.Unpin(ctx, s); err != nil || !changed {
		t.Fatalf("Unpin = %v, %v", changed, err)
	}
	tr.check(t, true)
}

// TestMoveThatCannotTakeEffectExpires: a move to a member that is not live,
// a move to a drained member and a move of a shard pinned elsewhere are
// cleared by the members (the lowest live one writes), and the shards stay
// led; before, such moves stayed in the state and held their shard on the
// target again whenever it came back.
func TestMoveThatCannotTakeEffectExpires(t *testing.T) {
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, 20)
	ms := []*member{startMember(t, root, "a", shards, tr), startMember(t, root, "b", shards, tr), startMember(t, root, "c", shards, tr)}
	before, _ := waitBalanced(t, shards, ms, 20*time.Second)
	s1, s2, s3 := shardLedBy(t, before, "a"), shardLedBy(t, before, "b"), shardLedBy(t, before, "c")
	now := time.Now()
	writeOperatorState(t, root, operator.State{
		Moves:   map[string]string{s1: "gone", s2: "c", s3: "a"},
		Drained: map[string]operator.Note{"c": {Since: now, Reason: "test"}},
		Pins:    map[string]string{s3: "b"},
	})
	op, err := operator.New(connect(t, 2*time.Second), root, nil)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the three void moves cleared", func() (bool, string) {
		left := movesLeft(t, op)
		return left == "", left
	})
	waitFor(t, 20*time.Second, "c drained, "+s3+" on its pin's b, every shard led", func() (bool, string) {
		lead := leaders(t, ms)
		n := 0
		for _, m := range lead {
			if m == "c" {
				n++
			}
		}
		return n == 0 && lead[s3] == "b" && len(lead) == len(shards), fmt.Sprintf("c leads %d, %s on %q, %d of %d led", n, s3, lead[s3], len(lead), len(shards))
	})
	tr.check(t, true)
}

// TestUnmoveCancelsAMove: Unmove removes a move (one that cannot complete
// here: its member does not run the shard) and reports whether there was
// one. WaitMoved for a member that is not live refuses at once rather than
// waiting for a move that expired.
func TestUnmoveCancelsAMove(t *testing.T) {
	tr, root := newTracker(), newRoot(t)
	a := startMember(t, root, "a", partition.Range(0, 4), tr)
	waitBalanced(t, partition.Range(0, 4), []*member{a}, 20*time.Second)
	writeOperatorState(t, root, operator.State{Moves: map[string]string{"elsewhere": "a"}})
	op, err := operator.New(connect(t, 2*time.Second), root, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if changed, err := op.Unmove(ctx, "elsewhere"); err != nil || !changed {
		t.Fatalf("Unmove = %v, %v; want true, nil", changed, err)
	}
	if left := movesLeft(t, op); left != "" {
		t.Fatalf("moves after Unmove: %s", left)
	}
	if changed, err := op.Unmove(ctx, "elsewhere"); err != nil || changed {
		t.Fatalf("second Unmove = %v, %v; want false, nil", changed, err)
	}
	if err := op.WaitMoved(ctx, "elsewhere", "gone"); !errors.Is(err, operator.ErrRefused) {
		t.Fatalf("WaitMoved to a member that is not live: %v, want ErrRefused", err)
	}
	tr.check(t, true)
}

// TestMoveToTheLeaderCancelsAMoveElsewhere: asked to move a shard to the
// member that leads it while an earlier move of it to another member is
// pending, Move clears that move (the latest word wins, as with Pin);
// before, it reported no change and left the move, so the shard went to
// the other member all the same. The root is laid out as members leave
// it (registrations, records, the shard's election), with no member
// running to act on the move.
func TestMoveToTheLeaderCancelsAMoveElsewhere(t *testing.T) {
	root, sess := newRoot(t), connect(t, 5*time.Second)
	ctx := t.Context()
	for _, p := range []string{path.Dir(root), root, root + "/members", root + "/owners", root + "/shards", root + "/shards/s"} {
		if _, err := sess.Create(ctx, p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatalf("create %s: %v", p, err)
		}
	}
	for id, leading := range map[string]string{"b": `{"s":5}`, "c": `{}`} {
		rec := fmt.Sprintf(`{"session":%d,"leading":%s}`, sess.ID(), leading)
		if _, err := sess.Create(ctx, root+"/members/"+id, nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
		if _, err := sess.Create(ctx, root+"/owners/"+id, []byte(rec), 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
	}
	op, err := operator.New(sess, root, nil)
	if err != nil {
		t.Fatal(err)
	}
	if changed, err := op.Move(ctx, "s", "c"); err != nil || !changed {
		t.Fatalf("Move(s, c) while b leads s = %v, %v; want true, nil", changed, err)
	}
	changed, err := op.Move(ctx, "s", "b")
	if err != nil || !changed {
		t.Fatalf("Move(s, b) to its leader over a move to c = %v, %v; want true, nil (the move to c cleared)", changed, err)
	}
	if left := movesLeft(t, op); left != "" {
		t.Fatalf("moves after Move(s, b) to the leader: %s; want none (s would go to c)", left)
	}
	if changed, err := op.Move(ctx, "s", "b"); err != nil || changed {
		t.Fatalf("Move(s, b) again = %v, %v; want false, nil", changed, err)
	}
}
