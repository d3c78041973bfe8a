package zxidfence_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/zkelect/zkelect/zxidfence"
)

func TestFenceCompareGenerationFirst(t *testing.T) {
	oldHigh := zxidfence.Fence{Generation: 0, Token: zxidfence.NewToken(9, 9)}
	newLow := zxidfence.Fence{Generation: 1, Token: zxidfence.NewToken(1, 1)}
	if oldHigh.Compare(newLow) != -1 || newLow.Compare(oldHigh) != 1 {
		t.Fatal("a higher generation must compare higher whatever the tokens")
	}
	if got := newLow.String(); got != "gen 1 0x100000001 (1:1)" {
		t.Fatalf("String = %q", got)
	}
	if got := zxidfence.At(5).String(); got != "0x5 (0:5)" {
		t.Fatalf("String of generation 0 = %q", got)
	}
}

func TestErrorsNameBothFences(t *testing.T) {
	stale := error(&zxidfence.StaleTokenError{Key: "shard-1", Presented: zxidfence.At(0x100000005), Highest: zxidfence.At(0x100000009)})
	if !errors.Is(stale, zxidfence.ErrStaleToken) {
		t.Fatal("StaleTokenError must match ErrStaleToken")
	}
	for _, want := range []string{`"shard-1"`, "0x100000005 (1:5)", "0x100000009 (1:9)"} {
		if !strings.Contains(stale.Error(), want) {
			t.Errorf("%q does not name %s", stale, want)
		}
	}
	gen := error(&zxidfence.GenerationError{Key: "k", Presented: zxidfence.Fence{Generation: 2, Token: 1}})
	if !errors.Is(gen, zxidfence.ErrUnknownGeneration) || errors.Is(gen, zxidfence.ErrStaleToken) {
		t.Fatal("GenerationError must match ErrUnknownGeneration only")
	}
}
