package partition_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/testenv"
)

// TestRunReturnsErrAuthFailedWhenEveryServerRefuses: a member whose
// credentials every server refuses (rotated on the ensemble) cannot get a
// session again; Run returns ErrAuthFailed instead of waiting for one.
func TestRunReturnsErrAuthFailedWhenEveryServerRefuses(t *testing.T) {
	users := map[string]string{"group": "group-secret"}
	zks := testenv.New(t, testenv.Options{SASLUsers: users})
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	sess, err := recipe.Connect(ctx, zks.Addrs(), recipe.WithSASL("group", users["group"]), recipe.WithSessionTimeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	shards := partition.Range(0, 4)
	a := startMemberOn(t, sess, newRoot(t), "a", shards, newTracker())
	waitBalanced(t, shards, []*member{a}, 20*time.Second)
	if err := zks.RestartWithSASLUsers(t.Context(), 0, map[string]string{"group": "rotated"}); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	select {
	case err := <-a.done:
		a.once.Do(func() {}) // Run returned: nothing to stop at cleanup
		if !errors.Is(err, recipe.ErrAuthFailed) {
			t.Fatalf("Run: %v, want ErrAuthFailed", err)
		}
		t.Logf("Run returned %v after the server came back refusing: %v", time.Since(restarted).Round(time.Millisecond), err)
	case <-time.After(20 * time.Second):
		t.Fatal("Run still running 20s after every server refused the credentials")
	}
}
