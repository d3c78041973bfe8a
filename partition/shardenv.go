package partition

import "github.com/zkelect/zkelect/partition/internal/shard"

// This file is what the loop gives its runners (partition/internal/shard):
// the Manager seen through shard.Env, and the values they share.

// shardEnv is the loop and its Manager as their runners see them.
type shardEnv struct {
	m *Manager
	l *loop
}

func (e shardEnv) TargetOf(s string) string     { return e.l.targetOf(s) }
func (e shardEnv) ElectionPath(s string) string { return e.m.runnerPath(s) }
func (e shardEnv) CountStop(reason error)       { e.m.met.stopped.WithLabelValues(reasonLabel(reason)).Inc() }

// shardMember returns what the loop's runners share, fixed for the run.
func (l *loop) shardMember() *shard.Member {
	m := l.m
	return &shard.Member{
		Env: shardEnv{m, l}, MemberID: m.cfg.MemberID, ACL: m.cfg.ACL, HandoffTimeout: m.cfg.HandoffTimeout,
		Naming: m.naming, MetricsLabel: m.shardsLabel(),
		OnStartedLeading: m.cfg.OnStartedLeading, OnStoppedLeading: m.cfg.OnStoppedLeading,
		Log: m.log, PassedOn: m.met.passedOn, Started: m.met.started,
		Held: m.held, Primary: m.sess, Sessions: m.pool, Events: l.events, Workers: &l.workers,
		Transitions: shard.NewTransitions(m.cfg.MaxConcurrentHandoffs),
	}
}

// book returns the loop's record of runner r, made on first use and
// dropped when r reports shard.Finished.
func (l *loop) book(r *shard.Runner) *runnerBook {
	b := l.books[r]
	if b == nil {
		b = &runnerBook{}
		l.books[r] = b
	}
	return b
}
