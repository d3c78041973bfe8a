package zxidfence

import (
	"fmt"
	"strconv"
)

// Fence is what a guard compares: a generation, then a token.
//
// Generation identifies the ZooKeeper ensemble the token comes from. It is 0
// until an ensemble is wiped and rebuilt: the new ensemble restarts its
// zxids low, so its leaders' tokens would be refused forever. Operators then
// configure the writers with the next generation and admit it at each guard
// with AcceptGeneration (an explicit, logged and counted operation; guards
// never reset by themselves). Fences compare lexicographically: generation
// first, then token.
type Fence struct {
	// Generation of the ZooKeeper ensemble that issued Token; 0 by default.
	Generation uint64
	// Token is the writer's fencing token (the czxid of its election znode).
	Token Token
}

// At returns the Fence of token t in generation 0, the common case.
func At(t Token) Fence { return Fence{Token: t} }

// Compare returns -1, 0 or +1 as f is lower than, equal to or higher than g,
// comparing Generation first and then Token.
func (f Fence) Compare(g Fence) int {
	switch {
	case f.Generation < g.Generation:
		return -1
	case f.Generation > g.Generation:
		return 1
	}
	return f.Token.Compare(g.Token)
}

// IsZero reports whether f is the zero Fence: what a guard holds for a
// resource it has never accepted a write or generation for.
func (f Fence) IsZero() bool { return f == Fence{} }

// String returns the token's String form, prefixed by the generation when it
// is not 0: "0x100000005 (1:5)" or "gen 2 0x100000005 (1:5)".
func (f Fence) String() string {
	if f.Generation == 0 {
		return f.Token.String()
	}
	return "gen " + strconv.FormatUint(f.Generation, 10) + " " + f.Token.String()
}

// admit decides a write presenting p against the highest fence h accepted
// for key. A zero h (nothing recorded) admits any generation; otherwise the
// generation must equal h's and the token be at least h's. It returns nil,
// or an error wrapping ErrNoToken, *StaleTokenError or *GenerationError.
func admit(key string, h, p Fence) error {
	switch {
	case p.Token.IsZero():
		return fmt.Errorf("%w for %q", ErrNoToken, key)
	case h.IsZero():
		return nil
	case p.Generation > h.Generation:
		return &GenerationError{Key: key, Presented: p, Current: h}
	case p.Compare(h) < 0:
		return &StaleTokenError{Key: key, Presented: p, Highest: h}
	}
	return nil
}

// nextGeneration checks that gen may replace the current fence's generation
// and returns the fence a guard stores for it: the new generation with no
// token yet, so that the generation's first leader is accepted.
func nextGeneration(key string, cur Fence, gen uint64) (Fence, error) {
	if gen <= cur.Generation {
		return cur, fmt.Errorf("%w: %q is at generation %d, asked for %d", ErrGenerationNotNewer, key, cur.Generation, gen)
	}
	return Fence{Generation: gen}, nil
}
