package routing

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zkelect/zkelect/internal/retry"
	"github.com/zkelect/zkelect/zkelecthttp"
	"github.com/zkelect/zkelect/zxidfence"
)

// DefaultHeartbeat is the heartbeat Daemons asks of a daemon when given 0.
const DefaultHeartbeat = 500 * time.Millisecond

// missedBeats is how many heartbeats a stream may stay silent before its
// daemon is left for the next.
const missedBeats = 3

// MinHeartbeat and MaxHeartbeat bound the heartbeat Daemons may ask of a
// daemon: what its /v1/watch accepts (it answers 400 outside).
const (
	MinHeartbeat = 100 * time.Millisecond
	MaxHeartbeat = 15 * time.Second
)

// HeartbeatError reports a heartbeat given to Daemons outside
// MinHeartbeat..MaxHeartbeat; New returns it.
type HeartbeatError struct {
	Heartbeat time.Duration // the heartbeat given
}

func (e *HeartbeatError) Error() string {
	return fmt.Sprintf("routing: Daemons heartbeat %v: want 0 (DefaultHeartbeat) or %v to %v", e.Heartbeat, MinHeartbeat, MaxHeartbeat)
}

// daemonSource follows the daemons' /v1/watch streams, one at a time.
type daemonSource struct {
	urls   []string
	beat   time.Duration
	client *http.Client
	err    error // an invalid heartbeat, for New
}

// Daemons returns the source that follows the /v1/watch stream of the
// first reachable daemon among urls (each "http://host:port", a daemon's
// --listen), asking a heartbeat every beat (0: DefaultHeartbeat; 100ms to
// 15s, else New fails with a *HeartbeatError). A stream silent for three heartbeats, refused or ended, is left for
// the next daemon in turn; each new stream starts from the daemon's
// snapshot, which replaces the view. Member labels come from snapshots.
func Daemons(urls []string, beat time.Duration) Source {
	var err error
	switch {
	case beat == 0:
		beat = DefaultHeartbeat
	case beat < MinHeartbeat || beat > MaxHeartbeat:
		err = &HeartbeatError{Heartbeat: beat}
	}
	return &daemonSource{urls: append([]string(nil), urls...), beat: beat, client: &http.Client{}, err: err}
}

func (d *daemonSource) check() error { return d.err }

// lag: the daemons' view lag is their own; the client measures none.
func (d *daemonSource) lag(*clientMetrics) {}

func (d *daemonSource) run(ctx context.Context, apply func(update), fresh func()) error {
	if len(d.urls) == 0 {
		return errors.New("no daemon given")
	}
	var b retry.Backoff
	for i := 0; ; i = (i + 1) % len(d.urls) {
		got := d.follow(ctx, d.urls[i], apply, fresh)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if got {
			b.Reset()
			continue // the next daemon at once
		}
		if i == len(d.urls)-1 && !b.Wait(ctx) { // every daemon refused: pause a round
			return ctx.Err()
		}
	}
}

// follow reads one daemon's stream until it fails or goes silent, and
// reports whether it gave a view.
func (d *daemonSource) follow(ctx context.Context, base string, apply func(update), fresh func()) bool {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }() // the reader ends with ctx
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(base, "/")+"/v1/watch?heartbeat="+url.QueryEscape(d.beat.String()), nil)
	if err != nil {
		return false
	}
	req.Header.Set("Accept", "text/event-stream")
	lines := make(chan string)
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(lines)
		resp, err := d.client.Do(req)
		if err != nil {
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 256<<20)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	st := &streamState{}
	silent := time.NewTimer(missedBeats*d.beat + 2*time.Second) // the first answer may take a connect
	defer silent.Stop()
	for {
		select {
		case <-ctx.Done():
			return st.gave
		case <-silent.C:
			return st.gave // paused, cut off, or gone
		case line, ok := <-lines:
			if !ok {
				return st.gave
			}
			silent.Reset(missedBeats * d.beat)
			if u, changed := st.line(line); changed {
				apply(u)
			} else if st.gave {
				fresh()
			}
		}
	}
}

// streamState parses one Server-Sent Events stream into updates.
type streamState struct {
	event, data string
	labels      map[string]map[string]string
	gave        bool // a snapshot arrived
}

// line takes one line; at an event's end it returns the event's update.
func (s *streamState) line(l string) (update, bool) {
	switch {
	case strings.HasPrefix(l, "event: "):
		s.event = l[len("event: "):]
	case strings.HasPrefix(l, "data: "):
		s.data += l[len("data: "):]
	case l == "" && s.data != "":
		ev, data := s.event, s.data
		s.event, s.data = "", ""
		return s.apply(ev, data)
	}
	return update{}, false
}

func (s *streamState) apply(event, data string) (update, bool) {
	switch event {
	case "owners":
		var o zkelecthttp.Owners
		if json.Unmarshal([]byte(data), &o) != nil {
			return update{}, false
		}
		s.labels = map[string]map[string]string{}
		for _, m := range o.MemberList {
			s.labels[m.Member] = m.Labels
		}
		routes := map[string]Route{}
		for _, sh := range o.Shards {
			if sh.Leader == "" || sh.Token == nil {
				continue
			}
			if tok, ok := tokenOf(*sh.Token); ok { // an unreadable token: no route
				routes[sh.Shard] = Route{Shard: sh.Shard, Member: sh.Leader, Address: sh.Address, Labels: s.labels[sh.Leader], Token: tok}
			}
		}
		s.gave = true
		return update{all: true, routes: routes}, true
	case "leader":
		var ev zkelecthttp.LeaderEvent
		if json.Unmarshal([]byte(data), &ev) != nil || !s.gave {
			return update{}, false
		}
		tok, ok := zxidfence.Token(0), false
		if ev.Leader != nil && ev.Token != nil {
			tok, ok = tokenOf(*ev.Token)
		}
		if !ok { // no leader, or a token we cannot read: no route
			return update{gone: []string{ev.Shard}}, true
		}
		r := Route{Shard: ev.Shard, Member: *ev.Leader, Address: ev.Address, Labels: s.labels[*ev.Leader], Token: tok}
		return update{routes: map[string]Route{ev.Shard: r}}, true
	}
	return update{}, false
}

// tokenOf converts the JSON token (its decimal form); false if
// unreadable or 0 (no leadership has token 0).
func tokenOf(t zkelecthttp.Token) (zxidfence.Token, bool) {
	n, err := strconv.ParseUint(t.Decimal, 10, 64)
	if err != nil || n == 0 {
		return 0, false
	}
	return zxidfence.Token(n), true
}
