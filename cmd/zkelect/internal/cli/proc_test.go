package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// proc is a zkelect process started by a test. Its output is kept and
// logged when the test fails; cleanup kills it.
type proc struct {
	t    *testing.T
	name string
	cmd  *exec.Cmd
	out  *lockedBuffer
	err  *lockedBuffer
	done chan struct{}
	werr error
}

// startProc runs the zkelect binary with args (zkelect-dev for demo, dev
// and bench); env is added to the test's environment minus ZKELECT_ZK.
func startProc(t *testing.T, name string, args []string, env ...string) *proc {
	t.Helper()
	bin := zkelectBin
	if len(args) > 0 && slices.Contains([]string{"demo", "dev", "bench"}, args[0]) {
		bin = zkelectDevBin
	}
	return startBinary(t, name, bin, args, env...)
}

// startBinary runs bin with args; env is added to the test's environment
// minus ZKELECT_ZK.
func startBinary(t *testing.T, name, bin string, args []string, env ...string) *proc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(withoutEnv(os.Environ(), envZK), env...)
	p := &proc{t: t, name: name, cmd: cmd, out: newLockedBuffer(), err: newLockedBuffer(), done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.err
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		p.werr = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("--- %s stdout:\n%s--- %s stderr:\n%s", name, p.out.String(), name, p.err.String())
		}
	})
	return p
}

func withoutEnv(env []string, name string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}

func (p *proc) signal(sig syscall.Signal) {
	_ = p.cmd.Process.Signal(sig)
}

// kill sends SIGKILL (also to a stopped process) and waits for it.
func (p *proc) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	_ = p.cmd.Process.Signal(syscall.SIGCONT)
	<-p.done
}

// wait waits up to timeout for the process to exit and returns its status.
func (p *proc) wait(timeout time.Duration) int {
	p.t.Helper()
	select {
	case <-p.done:
	case <-time.After(timeout):
		p.t.Fatalf("%s did not exit within %s", p.name, timeout)
	}
	var ee *exec.ExitError
	if errors.As(p.werr, &ee) {
		return ee.ExitCode()
	}
	if p.werr != nil {
		p.t.Fatalf("%s: %v", p.name, p.werr)
	}
	return 0
}

// waitStdout waits until stdout contains substr.
func (p *proc) waitStdout(ctx context.Context, substr string) string {
	p.t.Helper()
	s, err := p.out.waitFor(ctx, substr)
	if err != nil {
		p.t.Fatalf("%s: waiting for %q in stdout: %v; got:\n%s", p.name, substr, err, s)
	}
	return s
}

// waitStderr waits until stderr contains substr.
func (p *proc) waitStderr(ctx context.Context, substr string) string {
	p.t.Helper()
	s, err := p.err.waitFor(ctx, substr)
	if err != nil {
		p.t.Fatalf("%s: waiting for %q in stderr: %v; got:\n%s", p.name, substr, err, s)
	}
	return s
}

// lockedBuffer is an io.Writer safe for concurrent use that signals every
// write, so readers can wait for output.
type lockedBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{} // closed and replaced on every write
}

func newLockedBuffer() *lockedBuffer { return &lockedBuffer{changed: make(chan struct{})} }

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := b.buf.Write(p)
	close(b.changed)
	b.changed = make(chan struct{})
	return n, err
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitFor waits until the buffer contains substr, returning its contents.
func (b *lockedBuffer) waitFor(ctx context.Context, substr string) (string, error) {
	for {
		b.mu.Lock()
		s, ch := b.buf.String(), b.changed
		b.mu.Unlock()
		if strings.Contains(s, substr) {
			return s, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return s, ctx.Err()
		}
	}
}

// waitLines waits until the buffer holds at least n complete lines and
// returns them.
func (b *lockedBuffer) waitLines(ctx context.Context, n int) ([]string, error) {
	for {
		b.mu.Lock()
		s, ch := b.buf.String(), b.changed
		b.mu.Unlock()
		if lines := strings.SplitAfter(s, "\n"); len(lines)-1 >= n {
			out := make([]string, n)
			for i := range out {
				out[i] = strings.TrimSuffix(lines[i], "\n")
			}
			return out, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
