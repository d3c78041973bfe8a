package zkelecthttp

// WatchSubscribers returns how many /v1/watch streams s's hub feeds now.
func WatchSubscribers(s *Shards) int {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	return len(s.hub.subs)
}

// WatchStreamsOpen returns how many /v1/watch slots are taken (a slot is
// given back after the stream's hub subscription).
func WatchStreamsOpen(s *Shards) int { return len(s.streams) }
