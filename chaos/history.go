package chaos

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/zkelect/zkelect/zxidfence"
)

// Kind says what a history Record describes.
type Kind string

// Record kinds.
const (
	// KindAcquire: Member started acting as the leader of Shard with Token
	// (the leadership callback began).
	KindAcquire Kind = "acquire"
	// KindRelease: Member stopped acting as the leader of Shard with Token
	// (its writer returned, so no write of that term is in flight any more).
	KindRelease Kind = "release"
	// KindWrite: one fenced write attempt by Member, the leader of Shard with
	// Token, to Resource, from Start to Time, with its Result.
	KindWrite Kind = "write"
	// KindFault: the harness injected a fault (Fault names it; Member is the
	// client it hit, or "" for a ZooKeeper server fault), at Time.
	KindFault Kind = "fault"
	// KindCrash: the harness killed Member's process at Time; its open
	// acting intervals end there.
	KindCrash Kind = "crash"
	// KindHeal: the last fault was healed at Time; liveness is judged from
	// here on.
	KindHeal Kind = "heal"
	// KindEnd: the end of observation: every open acting interval ends here
	// and every shard must be led at this instant.
	KindEnd Kind = "end"
	// KindNote: information for a reader (such as why a member stopped
	// leading a shard); the checker ignores it.
	KindNote Kind = "note"
	// KindMemberError: a member's election component (a partition
	// Manager's Run) returned an unexpected error and was started again;
	// Detail holds the error. Counted in the summary, not a violation.
	KindMemberError Kind = "member_error"
	// KindLeftover: something was left behind (Detail says what): a process,
	// an ephemeral znode or a goroutine.
	KindLeftover Kind = "leftover"
)

// Result is the outcome of a write attempt.
type Result string

// Write results.
const (
	// Accepted: the guard admitted the write.
	Accepted Result = "accepted"
	// RejectedStale: the guard refused the token as lower than one it had
	// accepted (zxidfence.ErrStaleToken).
	RejectedStale Result = "stale"
	// RejectedNotLeader: ZooKeeper refused the write because the writer's
	// election znode was gone or changed (zxidfence.ErrNotLeader).
	RejectedNotLeader Result = "not_leader"
	// Failed: the outcome is unknown (connection loss, timeout, busy
	// database): the write may or may not have been applied.
	Failed Result = "failed"
)

// Record is one line of a history file (JSON). Times are wall-clock times,
// comparable across the processes of one machine.
type Record struct {
	// Time is when the event happened; for a write, when the attempt ended.
	Time time.Time `json:"t"`
	// Kind says what happened.
	Kind Kind `json:"kind"`
	// Member is the member (client process) concerned, if any.
	Member string `json:"member,omitempty"`
	// Shard is the election: a partition shard id, or a single election's
	// name.
	Shard string `json:"shard,omitempty"`
	// Token is the leadership's fencing token (acquire, release, write).
	Token zxidfence.Token `json:"token,omitempty"`
	// Generation is the fence generation presented with a write.
	Generation uint64 `json:"gen,omitempty"`
	// Resource names the guarded resource a write went to, e.g. "sql:7".
	Resource string `json:"resource,omitempty"`
	// Start is when a write attempt began.
	Start time.Time `json:"start,omitzero"`
	// Result is a write's outcome.
	Result Result `json:"result,omitempty"`
	// Fault names an injected fault (KindFault).
	Fault string `json:"fault,omitempty"`
	// Detail is free text: an error, a fault's target and duration, what
	// was left over.
	Detail string `json:"detail,omitempty"`
}

// Recorder appends records to a history file, one JSON line per record,
// each with a single write call, so a record is either wholly in the file
// or absent even if the process is killed. It is safe for concurrent use.
type Recorder struct {
	mu  sync.Mutex
	f   *os.File
	err error
}

// OpenRecorder opens (creating or appending to) the history file at path.
// Several processes may append to one file; each line is written at once.
// The caller must Close it.
func OpenRecorder(path string) (*Recorder, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("chaos: open history %s: %w", path, err)
	}
	return &Recorder{f: f}, nil
}

// Record appends r, stamping Time with now if it is zero. The first write
// error is kept and returned by this and every later call and by Close.
func (w *Recorder) Record(r Record) error {
	if r.Time.IsZero() {
		r.Time = time.Now()
	}
	r.Time = r.Time.Round(0)
	r.Start = r.Start.Round(0)
	line, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("chaos: encode record: %w", err)
	}
	line = append(line, '\n')
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if w.f == nil {
		return errRecorderClosed
	}
	if _, err := w.f.Write(line); err != nil {
		w.err = fmt.Errorf("chaos: write history: %w", err)
	}
	return w.err
}

// Close closes the file. It is idempotent and returns the first error met.
func (w *Recorder) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return w.err
	}
	if err := w.f.Close(); err != nil && w.err == nil {
		w.err = fmt.Errorf("chaos: close history: %w", err)
	}
	w.f = nil
	return w.err
}

var errRecorderClosed = errors.New("chaos: recorder closed")

// ReadHistory decodes the JSON lines of r. A last line without its newline
// (a writer killed mid-line) is ignored; any other malformed line is an
// error naming its number.
func ReadHistory(r io.Reader) ([]Record, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	var out []Record
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			return out, nil // an unterminated last line is a torn write
		}
		if err != nil {
			return nil, fmt.Errorf("chaos: read history: %w", err)
		}
		var rec Record
		if err := json.Unmarshal(line, &rec); err != nil {
			return nil, fmt.Errorf("chaos: history line %d: %w", n, err)
		}
		out = append(out, rec)
	}
}

// ReadFiles reads every history file in paths and returns their records
// merged in time order (stable for equal times).
func ReadFiles(paths ...string) ([]Record, error) {
	var all []Record
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, fmt.Errorf("chaos: open history: %w", err)
		}
		recs, err := ReadHistory(f)
		_ = f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		all = append(all, recs...)
	}
	SortRecords(all)
	return all, nil
}

// SortRecords orders records by Time, keeping the order of equal times.
func SortRecords(recs []Record) {
	sort.SliceStable(recs, func(i, j int) bool { return recs[i].Time.Before(recs[j].Time) })
}
