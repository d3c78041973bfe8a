package recipe

import "github.com/rs/zerolog"

// electionLog is a candidate's logger: its session's, with the election's
// path in every event's "election" field. It adds the field per event
// rather than holding a logger with its own context buffer, and reaches
// both through the candidate, so that thousands of candidates on a session
// (a partition member's shards) cost no buffer and one pointer each; a
// disabled level costs nothing.
type electionLog struct{ c *Candidate }

// log is the candidate's logger: a value made on each call, not a field,
// so that a candidate keeps within its 512-byte size class
// (TestCandidateFitsItsSizeClass).
func (c *Candidate) log() electionLog { return electionLog{c} }

func (l electionLog) Debug() *zerolog.Event { return l.c.sess.log.Debug().Str("election", l.c.path) }
func (l electionLog) Info() *zerolog.Event  { return l.c.sess.log.Info().Str("election", l.c.path) }
func (l electionLog) Warn() *zerolog.Event  { return l.c.sess.log.Warn().Str("election", l.c.path) }
func (l electionLog) Error() *zerolog.Event { return l.c.sess.log.Error().Str("election", l.c.path) }
