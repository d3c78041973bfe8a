package zxidfence

import (
	"errors"

	"github.com/rs/zerolog"
)

// logRejection logs a refused write at info level with the fences involved.
func logRejection(l zerolog.Logger, kind string, err error) {
	ev := l.Info().Str("guard", kind).Str("reason", rejectReason(err))
	var stale *StaleTokenError
	var gen *GenerationError
	switch {
	case errors.As(err, &stale):
		ev = ev.Str("key", stale.Key).Stringer("token", stale.Presented).Stringer("highest", stale.Highest)
	case errors.As(err, &gen):
		ev = ev.Str("key", gen.Key).Stringer("token", gen.Presented).Stringer("highest", gen.Current)
	}
	ev.Err(err).Msg("fenced write refused")
}

// logGeneration records an operator's generation change at warn level: it
// is the one way a guard's fence moves to a lower token, so it is always
// logged with its reason.
func logGeneration(l zerolog.Logger, kind, key string, prev, next Fence, reason string) {
	l.Warn().Str("guard", kind).Str("key", key).
		Uint64("from_generation", prev.Generation).Stringer("from_token", prev.Token).
		Uint64("to_generation", next.Generation).Str("reason", reason).
		Msg("fencing generation accepted")
}
