package root

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// millionIDs returns 1,000,000 ids of 32 bytes: "shard-" and 26 digits.
func millionIDs() []string {
	ids := make([]string, 1_000_000)
	for i := range ids {
		ids[i] = fmt.Sprintf("shard-%026d", i)
	}
	return ids
}

// TestBoundAdmitsAMillionIDsOf32Bytes: the default layout's fullest
// bucket at 1,000,000 ids of 32 bytes lists well within jute.maxbuffer
// (the figures DefaultBuckets states), where the flat layout refuses them.
func TestBoundAdmitsAMillionIDsOf32Bytes(t *testing.T) {
	ids := millionIDs()
	if err := NewRootLayout.CheckListing(ids, DefaultJuteMaxBuffer); err != nil {
		t.Fatalf("bucketed layout refuses 1,000,000 ids of 32 bytes: %v", err)
	}
	count := map[string]int{}
	for _, id := range ids {
		count[NewRootLayout.Bucket(id)]++
	}
	fullest := 0
	for _, n := range count {
		fullest = max(fullest, n)
	}
	listing := listingOverhead + fullest*(4+32)
	t.Logf("%d buckets used, fullest %d ids, listing %d bytes (%.1f%% of jute.maxbuffer)", len(count), fullest, listing, 100*float64(listing)/DefaultJuteMaxBuffer)
	if len(count) != DefaultBuckets || fullest != 1059 || listing > DefaultJuteMaxBuffer/10 {
		t.Errorf("%d buckets, fullest %d ids listing %d bytes; DefaultBuckets' doc says 1,024, 1,059 and 38,252", len(count), fullest, listing)
	}
	var lim *LimitError
	if err := Flat.CheckListing(ids, DefaultJuteMaxBuffer); !errors.As(err, &lim) {
		t.Errorf("flat layout admits 1,000,000 ids of 32 bytes: %v", err)
	}
}

// TestBoundRefusesAnImpossibleListWithItsArithmetic: ids too long for
// their bucket are refused with an error naming the bucket, its ids and
// what a bucket holds.
func TestBoundRefusesAnImpossibleListWithItsArithmetic(t *testing.T) {
	l := Layout{Buckets: 4}
	ids := make([]string, 30_000)
	for i := range ids {
		ids[i] = fmt.Sprintf("%0200d", i) // 30,000 x 204 bytes over 4 buckets: 1.5 MB a bucket
	}
	err := l.CheckListing(ids, DefaultJuteMaxBuffer)
	var lim *LimitError
	if !errors.As(err, &lim) || !errors.Is(err, ErrOverLimit) {
		t.Fatalf("CheckListing = %v, want a *LimitError", err)
	}
	for _, want := range []string{"30000 shard ids over 4 buckets", "ids of up to 200 bytes", "(1048575 - 128) / (4 + 200) = 5139"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}
