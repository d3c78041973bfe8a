package testenv

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// stopGrace bounds how long Stop waits after SIGTERM before it sends SIGKILL.
const stopGrace = 10 * time.Second

// server is one ZooKeeper server of a cluster: its ports and directory,
// which outlive its processes, and the Java process running now, if any.
type server struct {
	index         int
	dir           string
	clientPort    int
	quorumPort    int
	electionPort  int
	securePort    int      // TLS client port; 0 without Options.TLS
	heap          string   // the JVM's -Xmx value, such as "128m"
	props         []string // -Dkey=value flags from Options.SystemProperties, sorted
	security      serverSecurity
	juteMaxBuffer int // -Djute.maxbuffer, 0 for ZooKeeper's default

	mu      sync.Mutex
	proc    *javaProc // nil before the first start and after a kill or stop
	retired bool      // the cluster closed: never start again
	logFrom int64     // size of the log when the current process started
}

// javaProc is one run of a server's JVM. exited is closed once the process
// has been reaped; err is its exit status, readable after exited is closed.
type javaProc struct {
	pid    int
	exited chan struct{}
	err    error
}

func (s *server) id() int            { return s.index + 1 }
func (s *server) addr() string       { return "127.0.0.1:" + strconv.Itoa(s.clientPort) }
func (s *server) secureAddr() string { return "127.0.0.1:" + strconv.Itoa(s.securePort) }
func (s *server) dataDir() string    { return filepath.Join(s.dir, "data") }
func (s *server) configPath() string { return filepath.Join(s.dir, "zoo.cfg") }
func (s *server) logPath() string    { return filepath.Join(s.dir, "zookeeper.log") }

// start launches the server's JVM in a new process group, appending its
// output to the server's log file. A goroutine reaps the process.
func (s *server) start(inst installation) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.retired {
		return ErrClosed
	}
	if s.proc != nil {
		return fmt.Errorf("start server %d: already running (pid %d)", s.index, s.proc.pid)
	}
	logFile, err := os.OpenFile(s.logPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("open server log: %w", err)
	}
	defer logFile.Close() // the child holds its own descriptor
	if fi, err := logFile.Stat(); err == nil {
		s.logFrom = fi.Size()
	}
	cmd := exec.Command(inst.java, javaArgs(s, inst)...)
	cmd.Dir = s.dir
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = childProcAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start server %d: %w", s.index, err)
	}
	p := &javaProc{pid: cmd.Process.Pid, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	s.proc = p
	return nil
}

// pid returns the running process's id, or 0.
func (s *server) pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return 0
	}
	return s.proc.pid
}

// exitErr reports a process that exited although nobody stopped it.
func (s *server) exitErr() error {
	s.mu.Lock()
	p := s.proc
	s.mu.Unlock()
	if p == nil {
		return fmt.Errorf("server %d is not running", s.index)
	}
	select {
	case <-p.exited:
		return fmt.Errorf("server %d (pid %d) exited: %v", s.index, p.pid, p.err)
	default:
		return nil
	}
}

// retire kills the server, if it runs, and prevents any later start.
func (s *server) retire() error {
	s.mu.Lock()
	s.retired = true
	s.mu.Unlock()
	return s.kill()
}

// kill sends SIGKILL to the server's process group and waits until the
// process has been reaped.
func (s *server) kill() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.proc
	if p == nil {
		return ErrNotRunning
	}
	_ = signalGroup(p.pid, syscall.SIGKILL)
	<-p.exited
	s.proc = nil
	return nil
}

// stop sends SIGTERM (and SIGCONT, should the server be paused) and waits
// up to stopGrace for the process to exit, then kills it.
func (s *server) stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.proc
	if p == nil {
		return ErrNotRunning
	}
	_ = signalGroup(p.pid, syscall.SIGTERM)
	_ = signalGroup(p.pid, syscall.SIGCONT)
	timer := time.NewTimer(stopGrace)
	defer timer.Stop()
	select {
	case <-p.exited:
	case <-timer.C:
		_ = signalGroup(p.pid, syscall.SIGKILL)
		<-p.exited
	}
	s.proc = nil
	return nil
}

// setPaused sends SIGSTOP or SIGCONT to the server's process group and
// waits until the process has stopped or runs again.
func (s *server) setPaused(pause bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return ErrNotRunning
	}
	sig := syscall.SIGCONT
	if pause {
		sig = syscall.SIGSTOP
	}
	if err := signalGroup(s.proc.pid, sig); err != nil {
		return fmt.Errorf("signal server %d: %w", s.index, err)
	}
	if err := awaitStopped(s.proc.pid, pause); err != nil {
		return fmt.Errorf("server %d: %w", s.index, err)
	}
	return nil
}

// logTail returns the last n lines of the server's log.
func (s *server) logTail(n int) string {
	const maxRead = 64 << 10
	f, err := os.Open(s.logPath())
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > maxRead {
		_, _ = f.Seek(fi.Size()-maxRead, io.SeekStart)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return fmt.Sprintf("(read log: %v)", err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// logContains reports whether the current process's part of the server's
// log mentions sub.
func (s *server) logContains(sub string) bool {
	s.mu.Lock()
	from := s.logFrom
	s.mu.Unlock()
	f, err := os.Open(s.logPath())
	if err != nil {
		return false
	}
	defer f.Close()
	b, err := io.ReadAll(io.NewSectionReader(f, from, 1<<40))
	return err == nil && strings.Contains(string(b), sub)
}

// signalGroup signals every process in the group led by pid. A group that
// no longer exists is not an error.
func signalGroup(pid int, sig syscall.Signal) error {
	err := syscall.Kill(-pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}
