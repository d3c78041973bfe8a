package root

import (
	"fmt"
	"testing"
	"time"

	"github.com/zkelect/zkelect/partition/assign"
)

// TestOperatorVerbsComposeOnOneShard: every combination of a move, a pin,
// a drain, a freeze and a weight on one shard (s0, held by a with the
// oldest token, in a balanced steady state of a, b and c) gives the one
// outcome operator's package doc states:
//
//  1. a pin to a live, undrained member holds the shard there;
//  2. else a move to a live, undrained member of a shard not pinned
//     elsewhere takes it there (a move to a member not live or drained, or
//     of a shard pinned elsewhere, is void: VoidMove);
//  3. else the balance decides: the holder a keeps it unless a is drained,
//     frozen or not, whatever the weights (s0 is a's oldest shard); a
//     drained a gives it to an undrained member.
//
// Drains are ignored only when every live member is drained (not among
// these combinations).
func TestOperatorVerbsComposeOnOneShard(t *testing.T) {
	live := map[string]int64{"a": 1, "b": 2, "c": 3}
	shards := []string{"s0", "s1", "s2", "s3", "s4", "s5"}
	cur := map[string]string{"s0": "a", "s1": "a", "s2": "b", "s3": "b", "s4": "c", "s5": "c"}
	tokens := map[string]uint64{"s0": 1, "s1": 2, "s2": 3, "s3": 4, "s4": 5, "s5": 6}
	now := time.Now()
	n := 0
	for _, move := range []string{"", "b", "c", "ghost"} {
		for _, pin := range []string{"", "b", "c"} {
			for _, drain := range []string{"", "a", "b"} {
				for _, frozen := range []bool{false, true} {
					for _, weighted := range []bool{false, true} {
						st := OperatorState{}
						if move != "" {
							st.Moves = map[string]string{"s0": move}
						}
						if pin != "" {
							st.Pins = map[string]string{"s0": pin}
						}
						if drain != "" {
							st.Drained = map[string]Note{drain: {Since: now}}
						}
						if frozen {
							st.Freeze = &Freeze{Note: Note{Since: now}}
						}
						if weighted {
							st.Weights = map[string]int{"b": 3}
						}
						in := assign.Input{
							Shards: shards, Members: []string{"a", "b", "c"}, Current: cur, Tokens: tokens,
							Drained: st.DrainedList(), Pins: st.AssignPins(), Frozen: st.Frozen(now), Weights: st.Weights,
						}
						got := assign.Assign(in)["s0"]
						name := fmt.Sprintf("move=%q pin=%q drain=%q frozen=%v weight(b)=3:%v", move, pin, drain, frozen, weighted)
						taker := func(m string) bool { _, ok := live[m]; return ok && m != drain }
						wantVoid := move != "" && (!taker(move) || (pin != "" && pin != move))
						if void := st.VoidMove("s0", live); void != wantVoid {
							t.Errorf("%s: VoidMove = %v, want %v", name, void, wantVoid)
						}
						switch {
						case pin != "" && taker(pin):
							if got != pin {
								t.Errorf("%s: s0 on %s, want the pin's %s", name, got, pin)
							}
						case move != "" && !wantVoid:
							if got != move {
								t.Errorf("%s: s0 on %s, want the move's %s", name, got, move)
							}
						case drain != "a":
							if got != "a" {
								t.Errorf("%s: s0 on %s, want its holder a (balance)", name, got)
							}
						default:
							if !taker(got) {
								t.Errorf("%s: s0 on %s, want an undrained live member", name, got)
							}
						}
						n++
					}
				}
			}
		}
	}
	t.Logf("%d combinations", n)
}
