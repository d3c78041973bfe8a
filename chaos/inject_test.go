package chaos

import (
	"context"
	"fmt"
	"time"

	"github.com/zkelect/zkelect/testenv"
)

// hold keeps a fault in force for d, or until ctx ends.
func hold(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// inject applies f, keeps it for its duration and heals it. It records the
// fault (and a crash) in the harness history.
func (h *harness) inject(ctx context.Context, f Fault) error {
	rec := Record{Kind: KindFault, Fault: string(f.Kind), Detail: f.String()}
	if f.Kind.ClientFault() {
		s := h.slots[f.Target]
		rec.Member = s.cfg.Member
		_ = h.rec.Record(rec)
		return h.injectClient(ctx, f, s)
	}
	i := f.Target
	if f.Kind == FaultServerLeaderKill || f.Kind == FaultServerLeaderPause {
		if l, err := h.cluster.QuorumLeader(ctx); err == nil {
			i = l
		}
	}
	rec.Detail += fmt.Sprintf(" server=%d", i)
	_ = h.rec.Record(rec)
	return h.injectServer(ctx, f, i)
}

func (h *harness) injectClient(ctx context.Context, f Fault, s *slot) error {
	switch f.Kind {
	case FaultCutShort, FaultCutLong:
		s.proxy.Blackhole() // reconnects are accepted but go nowhere...
		s.proxy.Cut()       // ...after every connection is closed now
		hold(ctx, f.Duration)
		s.proxy.Heal()
	case FaultBlackholeShort, FaultBlackholeLong:
		s.proxy.Blackhole()
		hold(ctx, f.Duration)
		s.proxy.Heal()
	case FaultPauseShort, FaultPauseLong:
		p := s.process()
		if err := p.Pause(); err != nil {
			return fmt.Errorf("pause %s: %w", s.cfg.Member, err)
		}
		hold(ctx, f.Duration)
		if err := p.Resume(); err != nil {
			return fmt.Errorf("resume %s: %w", s.cfg.Member, err)
		}
	case FaultCrash:
		if err := s.process().Kill(); err != nil {
			return fmt.Errorf("kill %s: %w", s.cfg.Member, err)
		}
		_ = h.rec.Record(Record{Kind: KindCrash, Member: s.cfg.Member})
		hold(ctx, f.Duration)
		h.start(s)
	case FaultExpire:
		return h.expire(ctx, s)
	}
	return nil
}

// expire ends the member's latest session through a second connection.
func (h *harness) expire(ctx context.Context, s *slot) error {
	sessions := s.proxy.Sessions()
	if len(sessions) == 0 {
		return nil
	}
	last := sessions[len(sessions)-1]
	err := testenv.ExpireSession(ctx, h.cluster.Addrs(), last.ID, last.Password)
	if err != nil && ctx.Err() == nil {
		// The session may be gone already (expired, or replaced by a
		// reconnect the proxy has not reported yet): servers then refuse
		// or drop the second connection. Not the system under test.
		h.t.Logf("expire session 0x%x of %s: %v (ignored)", last.ID, s.cfg.Member, err)
		return nil
	}
	return err
}

func (h *harness) injectServer(ctx context.Context, f Fault, i int) error {
	switch f.Kind {
	case FaultServerKill, FaultServerLeaderKill:
		if err := h.cluster.Kill(i); err != nil {
			return fmt.Errorf("kill server %d: %w", i, err)
		}
		hold(ctx, f.Duration)
		return h.restart(ctx, i)
	case FaultServerPause, FaultServerLeaderPause:
		if err := h.cluster.Pause(i); err != nil {
			return fmt.Errorf("pause server %d: %w", i, err)
		}
		hold(ctx, f.Duration)
		if err := h.cluster.Resume(i); err != nil {
			return fmt.Errorf("resume server %d: %w", i, err)
		}
	case FaultServerRestart:
		return h.restart(ctx, i)
	}
	return nil
}

func (h *harness) restart(ctx context.Context, i int) error {
	rctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := h.cluster.Restart(rctx, i); err != nil {
		return fmt.Errorf("restart server %d: %w", i, err)
	}
	return nil
}
