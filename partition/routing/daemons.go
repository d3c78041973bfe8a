package routing

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
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

// daemonSource follows the daemons' /v1/watch streams, one at a time.
type daemonSource struct {
	urls   []string
	beat   time.Duration
	client *http.Client
}

// Daemons returns the source that follows the /v1/watch stream of the
// first reachable daemon among urls (each "http://host:port", a daemon's
// --listen), asking a heartbeat every beat (0: DefaultHeartbeat; 100ms to
// 15s). A stream silent for three heartbeats, refused or ended, is left for
// the next daemon in turn; each new stream starts from the daemon's
// snapshot, which replaces the view. Member labels come from snapshots.
func Daemons(urls []string, beat time.Duration) Source {
	if beat <= 0 {
		beat = DefaultHeartbeat
	}
	return &daemonSource{urls: append([]string(nil), urls...), beat: beat, client: &http.Client{}}
}

func (d *daemonSource) run(ctx context.Context, set func(Table), fresh func()) error {
	if len(d.urls) == 0 {
		return errors.New("no daemon given")
	}
	var b retry.Backoff
	for i := 0; ; i = (i + 1) % len(d.urls) {
		got := d.follow(ctx, d.urls[i], set, fresh)
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
func (d *daemonSource) follow(ctx context.Context, base string, set func(Table), fresh func()) bool {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(base, "/")+"/v1/watch?heartbeat="+url.QueryEscape(d.beat.String()), nil)
	if err != nil {
		return false
	}
	req.Header.Set("Accept", "text/event-stream")
	lines := make(chan string)
	go func() {
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
			if t, changed := st.line(line); changed {
				set(t)
			} else if st.gave {
				fresh()
			}
		}
	}
}

// streamState parses one Server-Sent Events stream into tables.
type streamState struct {
	event, data string
	routes      map[string]Route
	labels      map[string]map[string]string
	gave        bool // a snapshot arrived
}

// line takes one line; at an event's end it applies the event and
// returns the new table.
func (s *streamState) line(l string) (Table, bool) {
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
	return Table{}, false
}

func (s *streamState) apply(event, data string) (Table, bool) {
	switch event {
	case "owners":
		var o zkelecthttp.Owners
		if json.Unmarshal([]byte(data), &o) != nil {
			return Table{}, false
		}
		s.labels = map[string]map[string]string{}
		for _, m := range o.MemberList {
			s.labels[m.Member] = m.Labels
		}
		s.routes = map[string]Route{}
		for _, sh := range o.Shards {
			if sh.Leader != "" && sh.Token != nil {
				s.routes[sh.Shard] = Route{Shard: sh.Shard, Member: sh.Leader, Address: sh.Address, Labels: s.labels[sh.Leader], Token: tokenOf(*sh.Token)}
			}
		}
		s.gave = true
	case "leader":
		var ev zkelecthttp.LeaderEvent
		if json.Unmarshal([]byte(data), &ev) != nil || !s.gave {
			return Table{}, false
		}
		s.routes = tableOf(s.routes).Routes // handed-out tables are never modified
		if ev.Leader == nil || ev.Token == nil {
			delete(s.routes, ev.Shard)
		} else {
			s.routes[ev.Shard] = Route{Shard: ev.Shard, Member: *ev.Leader, Address: ev.Address, Labels: s.labels[*ev.Leader], Token: tokenOf(*ev.Token)}
		}
	default:
		return Table{}, false
	}
	return Table{Routes: s.routes}, true
}

// tokenOf converts the JSON token (its decimal form); 0 if unreadable.
func tokenOf(t zkelecthttp.Token) zxidfence.Token {
	n, err := strconv.ParseUint(t.Decimal, 10, 64)
	if err != nil {
		return 0
	}
	return zxidfence.Token(n)
}
