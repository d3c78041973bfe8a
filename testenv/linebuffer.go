package testenv

import (
	"bytes"
	"context"
	"strings"
	"sync"
)

// lineBuffer collects a child's output and lets readers wait for lines.
type lineBuffer struct {
	mu      sync.Mutex
	all     bytes.Buffer
	lines   []string
	partial []byte
	cursor  int           // index of the next line next() examines
	changed chan struct{} // closed and replaced on every new line
	done    bool          // the writer finished: no more lines
}

func newLineBuffer() *lineBuffer {
	return &lineBuffer{changed: make(chan struct{})}
}

// Write stores b and completes lines; it never fails.
func (b *lineBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.all.Write(p)
	b.partial = append(b.partial, p...)
	added := false
	for {
		i := bytes.IndexByte(b.partial, '\n')
		if i < 0 {
			break
		}
		b.lines = append(b.lines, strings.TrimSuffix(string(b.partial[:i]), "\r"))
		b.partial = b.partial[i+1:]
		added = true
	}
	if added {
		b.notify()
	}
	return len(p), nil
}

// finish turns a last unterminated line into a line and wakes waiters.
func (b *lineBuffer) finish() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.partial) > 0 {
		b.lines = append(b.lines, string(b.partial))
		b.partial = nil
	}
	b.done = true
	b.notify()
}

func (b *lineBuffer) notify() {
	close(b.changed)
	b.changed = make(chan struct{})
}

func (b *lineBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.all.String()
}

// next returns the first line at or after the cursor that match accepts
// and moves the cursor past it, waiting for more output as needed. match
// runs without the lock held.
func (b *lineBuffer) next(ctx context.Context, match func(string) bool) (string, error) {
	for {
		b.mu.Lock()
		start := b.cursor
		pending := b.lines[start:len(b.lines):len(b.lines)]
		done, changed := b.done, b.changed
		b.mu.Unlock()
		for i, line := range pending {
			if match(line) {
				b.advance(start + i + 1)
				return line, nil
			}
		}
		b.advance(start + len(pending))
		if done {
			return "", ErrProcessExited
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}

func (b *lineBuffer) advance(cursor int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.cursor = max(b.cursor, cursor)
}
