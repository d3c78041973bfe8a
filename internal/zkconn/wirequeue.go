package zkconn

// The session's own frames go out in the order it decides on them, and
// never while the session's lock is held.
//
// A watch removal is decided under the session's lock (watchtable.go,
// datawatch.go); writing it there would let a full send buffer (a slow
// server) hold the lock, and with it go-zookeeper's receive loop, which
// takes the lock to route every event. So a removal is queued under the
// lock and written after it is released (flush). A request the session
// writes (wirecall.go) first writes every frame queued before it: a watch
// re-armed after its removal was decided never goes out ahead of that
// removal, which would otherwise take the new watch away.
//
// wireTracker.order serialises these writes; it is never taken with the
// session's lock held, and never held while taking it.

// queuedFrame is a frame for one connection, written by the next flush.
type queuedFrame struct {
	conn  *wireConn
	frame []byte
}

// queueIfReady queues frame for the current connection if it is ready now;
// otherwise the frame is dropped (the server dropped the connection's
// watches with it). It does not write: call flush once the session's lock
// is released. It reports whether it queued the frame.
func (w *wireTracker) queueIfReady(frame []byte) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := w.current
	if c == nil {
		return false
	}
	select {
	case <-c.ready:
	default:
		return false
	}
	w.queue = append(w.queue, queuedFrame{conn: c, frame: frame})
	return true
}

// flush writes the queued frames in order. A frame whose connection has
// closed meanwhile is dropped.
func (w *wireTracker) flush() {
	w.order.Lock()
	defer w.order.Unlock()
	w.drainLocked()
}

// drainLocked writes the queued frames in order (w.order held).
func (w *wireTracker) drainLocked() {
	w.mu.Lock()
	q := w.queue
	w.queue = nil
	w.mu.Unlock()
	for _, f := range q {
		f.conn.inject(f.frame)
	}
}
