package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// stderrKeep is how much of a candidate process's stderr an error quotes.
const stderrKeep = 2048

// line is one line a candidate process printed, stamped on this process's
// clock when it was read. A line "WORD <microseconds since the Unix
// epoch>" (LEADER) carries the candidate's own stamp of the moment it
// wrote it: text is then WORD and said that moment.
type line struct {
	text string
	at   time.Time
	said time.Time // zero when the line carries no stamp
}

// readLine splits a stamped line from its stamp.
func readLine(text string, at time.Time) line {
	word, stamp, ok := strings.Cut(text, " ")
	if !ok {
		return line{text: text, at: at}
	}
	us, err := strconv.ParseInt(stamp, 10, 64)
	if err != nil {
		return line{text: text, at: at}
	}
	return line{text: word, at: at, said: time.UnixMicro(us)}
}

// since returns how long after start the candidate reported l: by its own
// stamp when it has one (the pipe and this process's scheduling left out;
// both processes read the same system clock), by the reading otherwise,
// and never outside [start, the reading].
func (l line) since(start time.Time) time.Duration {
	read := l.at.Sub(start)
	if l.said.IsZero() {
		return read
	}
	return min(max(l.said.Sub(start), 0), read)
}

// peerProc is one candidate process of the side-by-side scenario: its
// stdin takes commands, its stdout lines arrive stamped on lines. It owns
// two goroutines (the stdout reader and the reaper), which end when the
// process exits; kill ends it.
type peerProc struct {
	name   string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan line
	exited chan struct{} // closed once the process is reaped
	stderr *tailBuffer
}

// startPeerProc starts argv as a candidate process.
func startPeerProc(name string, argv []string) (*peerProc, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = peerProcAttr()
	p := &peerProc{name: name, cmd: cmd, lines: make(chan line, 64), exited: make(chan struct{}), stderr: &tailBuffer{}}
	cmd.Stderr = p.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("bench: %s: %w", name, err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("bench: %s: %w", name, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("bench: start %s: %w", name, err)
	}
	p.stdin = stdin
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			p.lines <- readLine(sc.Text(), time.Now())
		}
		_ = cmd.Wait() // after the last read, as exec requires
		close(p.lines)
		close(p.exited)
	}()
	return p, nil
}

// await waits for the next line equal to want, bounded by ctx and
// acquireLimit, and returns it. Other lines are skipped.
func (p *peerProc) await(ctx context.Context, want string) (line, error) {
	t := time.NewTimer(acquireLimit)
	defer t.Stop()
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				return line{}, fmt.Errorf("bench: %s exited before printing %s (%s): %s", p.name, want, p.cmd.ProcessState, p.stderr)
			}
			if l.text == want {
				return l, nil
			}
		case <-t.C:
			return line{}, fmt.Errorf("bench: %s printed no %s in %s: %s", p.name, want, acquireLimit, p.stderr)
		case <-ctx.Done():
			return line{}, fmt.Errorf("bench: waiting for %s from %s: %w", want, p.name, ctx.Err())
		}
	}
}

// send writes one command line to the process.
func (p *peerProc) send(cmd string) error {
	if _, err := io.WriteString(p.stdin, cmd+"\n"); err != nil {
		return fmt.Errorf("bench: send %s to %s: %w", cmd, p.name, err)
	}
	return nil
}

// awaitExit waits until the process has exited, bounded by ctx and
// acquireLimit.
func (p *peerProc) awaitExit(ctx context.Context) error {
	t := time.NewTimer(acquireLimit)
	defer t.Stop()
	select {
	case <-p.exited:
		return nil
	case <-t.C:
		return fmt.Errorf("bench: %s did not exit in %s", p.name, acquireLimit)
	case <-ctx.Done():
		return fmt.Errorf("bench: waiting for %s to exit: %w", p.name, ctx.Err())
	}
}

// kill sends SIGKILL to the process group (an exited process is no error)
// and waits until the process is reaped. Idempotent.
func (p *peerProc) kill() {
	select {
	case <-p.exited:
		return
	default:
	}
	if err := syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		_ = p.cmd.Process.Kill()
	}
	_ = p.stdin.Close()
	for range p.lines { // unblock the reader; it ends at the process's exit
	}
	<-p.exited
}

// tailBuffer keeps the last stderrKeep bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - stderrKeep; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

// String returns the kept stderr on one line, or "no stderr".
func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := strings.Join(strings.Fields(string(b.buf)), " ")
	if s == "" {
		return "no stderr"
	}
	return "stderr: " + s
}
