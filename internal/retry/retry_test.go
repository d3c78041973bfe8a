package retry

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestBackoffDoublesUpToMaxAndResets(t *testing.T) {
	b := Backoff{Min: 10 * time.Millisecond, Max: 50 * time.Millisecond}
	want := []time.Duration{10, 20, 40, 50, 50}
	for i, w := range want {
		if got := b.Next(); got != w*time.Millisecond {
			t.Fatalf("pause %d = %v, want %v", i, got, w*time.Millisecond)
		}
	}
	b.Reset()
	if got := b.Next(); got != 10*time.Millisecond {
		t.Fatalf("pause after Reset = %v, want Min (10ms)", got)
	}
}

func TestZeroBackoffPauses20msTo1s(t *testing.T) {
	var b Backoff
	if got := b.Next(); got != 20*time.Millisecond {
		t.Fatalf("first pause = %v, want 20ms", got)
	}
	for range 10 {
		b.Next()
	}
	if got := b.Next(); got != time.Second {
		t.Fatalf("pause after 12 attempts = %v, want the 1s cap", got)
	}
}

func TestDoReturnsTheDoneAttemptsError(t *testing.T) {
	errLast := errors.New("last")
	n := 0
	err := Do(context.Background(), func() (bool, error) {
		n++
		if n < 3 {
			return false, errors.New("transient")
		}
		return true, errLast
	})
	if !errors.Is(err, errLast) || n != 3 {
		t.Fatalf("Do = %v after %d attempts, want the third attempt's error", err, n)
	}
}

func TestDoEndsWithContextReturningTheLastError(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	errTransient := errors.New("transient")
	err := Do(ctx, func() (bool, error) {
		cancel()
		return false, errTransient
	})
	if !errors.Is(err, errTransient) {
		t.Fatalf("Do after cancel = %v, want the last attempt's error", err)
	}
	err = Do(ctx, func() (bool, error) { return false, nil })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Do after cancel with no error = %v, want context.Canceled", err)
	}
}

func TestWaitEndsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	b := Backoff{Min: time.Hour}
	if b.Wait(ctx) {
		t.Fatal("Wait on a cancelled context reported the hour-long pause as passed")
	}
	if !Sleep(context.Background(), time.Millisecond) {
		t.Fatal("Sleep of 1ms on a live context did not report the pause as passed")
	}
}

func TestForeverRetriesFailedRoundsUntilContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	b := Backoff{Min: time.Millisecond, Max: time.Millisecond}
	var rounds, failures int
	Forever(ctx, &b, func() error {
		rounds++
		switch rounds {
		case 1, 2:
			return errors.New("transient")
		case 4:
			cancel()
		}
		return nil
	}, func(error) { failures++ })
	if rounds != 4 || failures != 2 {
		t.Fatalf("Forever ran %d rounds with %d failures, want 4 rounds (until cancel) and 2 failures", rounds, failures)
	}
}

// TestWaitOrEndsAtTheWake: a pause of an hour ends when wake is closed
// (the session's next connect), and WaitOr reports that ctx did not end.
func TestWaitOrEndsAtTheWake(t *testing.T) {
	b := Backoff{Min: time.Hour, Max: time.Hour}
	wake := make(chan struct{})
	close(wake)
	done := make(chan bool, 1)
	go func() { done <- b.WaitOr(context.Background(), wake) }()
	select {
	case ok := <-done:
		if !ok {
			t.Fatal("WaitOr reported ctx ended; want true after the wake")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("WaitOr still pausing 10s after its wake channel was closed (pause: 1h)")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if b.WaitOr(ctx, wake) {
		t.Fatal("WaitOr reported true with ctx ended")
	}
}
