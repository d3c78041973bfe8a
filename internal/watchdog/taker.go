package watchdog

import "errors"

// ErrTransport is returned when a session over TLS or a custom dialer is
// handed to a watchdog (recipe.Session.HandOver): the watchdog closes
// sessions with a plain TCP connect request carrying the session's id and
// password, which must not go in clear where the session itself does not.
// Such a session is left to its timeout after a crash.
var ErrTransport = errors.New("watchdog: sessions are closed over plain TCP only, not over this session's TLS or dialer")

// Taker is the watchdog's side of a handed-over session
// (recipe.Session.HandOver). A Session calls it in the order of its
// events, on its event goroutine; the calls must not block for long.
type Taker interface {
	// Session is a new session of the handed-over Session: the one to
	// close if this process dies.
	Session(c Credentials)
	// Closed says the session id ended (expired, closed, replaced).
	Closed(id int64)
	// Adopt records another Session handed over with this Taker (a
	// sibling); release undoes that when the watchdog is closed. A closed
	// Taker calls release at once.
	Adopt(release func())
}
