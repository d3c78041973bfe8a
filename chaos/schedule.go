package chaos

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// FaultKind names a kind of fault.
type FaultKind string

// The faults a Schedule draws from. "Short" lasts 30-60% of the session
// timeout (the session survives), "long" 150-250% (the server expires it).
const (
	// Client faults, aimed at one member (Fault.Target is its index).
	FaultCutShort       FaultKind = "cut-short"       // proxy cuts every connection and refuses to forward for a while
	FaultCutLong        FaultKind = "cut-long"        //
	FaultBlackholeShort FaultKind = "blackhole-short" // proxy stalls traffic both ways, sockets open
	FaultBlackholeLong  FaultKind = "blackhole-long"  //
	FaultPauseShort     FaultKind = "pause-short"     // SIGSTOP, then SIGCONT
	FaultPauseLong      FaultKind = "pause-long"      //
	FaultCrash          FaultKind = "crash"           // SIGKILL, restarted after Duration
	FaultExpire         FaultKind = "expire"          // the member's session expired on demand

	// Server faults, aimed at one ZooKeeper server (Fault.Target is its
	// index; for the leader kinds, the quorum leader when the fault starts).
	FaultServerKill        FaultKind = "zk-kill"         // SIGKILL, restarted after Duration
	FaultServerLeaderKill  FaultKind = "zk-leader-kill"  //
	FaultServerPause       FaultKind = "zk-pause"        // SIGSTOP for Duration
	FaultServerLeaderPause FaultKind = "zk-leader-pause" //
	FaultServerRestart     FaultKind = "zk-restart"      // graceful stop, then start
)

// AllFaults lists every kind a Schedule uses.
var AllFaults = []FaultKind{
	FaultCutShort, FaultCutLong, FaultBlackholeShort, FaultBlackholeLong,
	FaultPauseShort, FaultPauseLong, FaultCrash, FaultExpire,
	FaultServerKill, FaultServerLeaderKill, FaultServerPause, FaultServerLeaderPause, FaultServerRestart,
}

// ClientFault reports whether k is aimed at a member rather than a server.
func (k FaultKind) ClientFault() bool { return !strings.HasPrefix(string(k), "zk-") }

// Fault is one planned fault.
type Fault struct {
	// At is the offset from the start of the schedule.
	At   time.Duration
	Kind FaultKind
	// Target is a member index for client faults, a server index for
	// server faults (ignored by the leader kinds).
	Target int
	// Duration is how long the fault is in force before it heals.
	Duration time.Duration
}

// String renders the fault for logs.
func (f Fault) String() string {
	return fmt.Sprintf("+%s %s target=%d for %s", f.At.Round(time.Millisecond), f.Kind, f.Target,
		f.Duration.Round(time.Millisecond))
}

// ScheduleConfig sizes a schedule.
type ScheduleConfig struct {
	Seed           uint64
	Length         time.Duration // faults start within [0, Length)
	SessionTimeout time.Duration
	Members        int
	Servers        int
}

// Plan draws a fault schedule from cfg.Seed: the same config always gives
// the same plan. Faults run one after another with a pause of 20-60% of
// the session timeout between them; kinds come in rounds, each round every
// kind once in a random order, so a long enough run meets them all.
func Plan(cfg ScheduleConfig) []Fault {
	rng := rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x5eed))
	T := cfg.SessionTimeout
	between := func(lo, hi float64) time.Duration {
		return time.Duration((lo + rng.Float64()*(hi-lo)) * float64(T))
	}
	var plan []Fault
	var round []FaultKind
	for at := between(0.2, 0.6); at < cfg.Length; {
		if len(round) == 0 {
			round = append(round, AllFaults...)
			rng.Shuffle(len(round), func(i, j int) { round[i], round[j] = round[j], round[i] })
		}
		f := Fault{At: at, Kind: round[0]}
		round = round[1:]
		if f.Kind.ClientFault() {
			f.Target = rng.IntN(cfg.Members)
		} else {
			f.Target = rng.IntN(cfg.Servers)
		}
		switch {
		case strings.HasSuffix(string(f.Kind), "-long"):
			f.Duration = between(1.5, 2.5)
		case f.Kind == FaultExpire:
			f.Duration = 0
		default:
			f.Duration = between(0.3, 0.6)
		}
		plan = append(plan, f)
		at += f.Duration + between(0.2, 0.6)
	}
	return plan
}
