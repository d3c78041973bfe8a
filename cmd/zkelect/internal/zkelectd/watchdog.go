package zkelectd

import (
	"errors"

	"github.com/rs/zerolog"

	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/recipe/watchdog"
)

// StartWatchdog starts this process's watchdog and hands it sess when on
// is set; it returns nil (logged) when off, unsupported, over TLS (the
// watchdog closes sessions over plain TCP only) or failing: the session
// then waits out its timeout after a crash, as without it.
func StartWatchdog(on bool, log zerolog.Logger, sess *recipe.Session) *watchdog.Process {
	if !on {
		return nil
	}
	wd, err := watchdog.Start()
	if errors.Is(err, watchdog.ErrUnsupported) {
		log.Info().Msg("no watchdog on this system: after a crash, successors wait out the session timeout")
		return nil
	}
	if err == nil {
		if err = wd.Watch(sess); err != nil {
			_ = wd.Close()
		}
	}
	if errors.Is(err, watchdog.ErrTransport) {
		log.Info().Msg("no watchdog for a session over TLS (it would close it in clear): after a crash, successors wait out the session timeout")
		return nil
	}
	if err != nil {
		log.Warn().Err(err).Msg("watchdog not started: after a crash, successors wait out the session timeout")
		return nil
	}
	return wd
}

// StopWatchdog tells wd (nil: none) that this process leaves on purpose.
func StopWatchdog(log zerolog.Logger, wd *watchdog.Process) {
	if wd == nil {
		return
	}
	if err := wd.Close(); err != nil {
		log.Debug().Err(err).Msg("watchdog close")
	}
}
