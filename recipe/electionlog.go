package recipe

import "github.com/rs/zerolog"

// electionLog is a candidate's logger: the session's, with the election's
// path in every event's "election" field. It adds the field per event
// rather than holding a logger with its own context buffer, so that
// thousands of candidates on a session (a partition member's shards) cost
// no buffer each; a disabled level costs nothing.
type electionLog struct {
	log  *zerolog.Logger
	path string
}

func (l electionLog) Debug() *zerolog.Event { return l.log.Debug().Str("election", l.path) }
func (l electionLog) Info() *zerolog.Event  { return l.log.Info().Str("election", l.path) }
func (l electionLog) Warn() *zerolog.Event  { return l.log.Warn().Str("election", l.path) }
func (l electionLog) Error() *zerolog.Event { return l.log.Error().Str("election", l.path) }
