package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"
)

// watchPrinter writes watch's lines as text or JSON lines, one at a time:
// an election's observations (print, in watch.go) and a root's changes
// (printRoot, in watchroot.go).
type watchPrinter struct {
	mu     sync.Mutex
	w      io.Writer
	format string
}

func newWatchPrinter(w io.Writer, format string) *watchPrinter {
	return &watchPrinter{w: w, format: format}
}

// emit writes one line: v as JSON with -o json, else text with every
// character a terminal would act on escaped (termSafe: values from
// ZooKeeper are in it).
func (p *watchPrinter) emit(v any, text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.format == "json" {
		b, _ := json.Marshal(v)
		fmt.Fprintf(p.w, "%s\n", b)
		return
	}
	fmt.Fprintln(p.w, termSafe(text))
}
