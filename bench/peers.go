package bench

import (
	"archive/zip"
	"context"
	"embed"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/zkelect/zkelect/internal/watchdog"
)

// The peers' candidate programs, written out and run at run time.
//
//go:embed peers/LatchCandidate.java peers/kazoo_candidate.py
var peerSources embed.FS

// Names of the libraries the side-by-side scenario runs, in table order.
const (
	PeerZkelect = "zkelect"
	PeerKazoo   = "kazoo"
	PeerCurator = "curator"
)

// curatorJars are the jars LatchCandidate needs, as Debian's
// libcurator-recipes-java and zookeeper packages install them.
var curatorJars = []string{
	"curator-recipes.jar", "curator-framework.jar", "curator-client.jar",
	"zookeeper.jar", "zookeeper-jute.jar", "guava.jar", "slf4j-api.jar", "slf4j-nop.jar",
}

// peerInstallHint says how to install the peers, as `make deps` does.
const peerInstallHint = "install them with `make deps` " +
	"(apt-get install default-jdk-headless libcurator-recipes-java zookeeper python3-kazoo)"

// peer is one library of the side-by-side scenario: how to start one of its
// candidates, or why it cannot run here.
type peer struct {
	name    string
	version string
	missing string // why the library cannot run here; "" when it can
	note    string // how it was run, when that matters to the figures
	// argv returns the command line of one candidate.
	argv func(servers, path, id string, timeout time.Duration) []string
}

// peers prepares every library in table order, working in dir (the Java
// candidate is compiled there). A library that cannot run is returned with
// missing set, never left out.
func peers(ctx context.Context, dir string, self []string) []peer {
	return []peer{zkelectPeer(self), kazooPeer(ctx, dir), curatorPeer(ctx, dir)}
}

func zkelectPeer(self []string) peer {
	p := peer{name: PeerZkelect, version: "(devel)"}
	if watchdog.Supported() {
		p.note = "each candidate runs a watchdog.Process: after a SIGKILL it closes the dead process's session"
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		p.version = bi.Main.Version
	}
	if len(self) == 0 {
		exe, err := os.Executable()
		if err != nil {
			p.missing = fmt.Sprintf("cannot find this executable to run candidates: %v", err)
			return p
		}
		self = []string{exe}
	}
	p.argv = func(servers, path, id string, timeout time.Duration) []string {
		return append(append([]string(nil), self...), ChildArg, servers, path, id, millis(timeout))
	}
	return p
}

// kazooPeer finds a python3 that imports kazoo: Debian's /usr/bin/python3
// first (python3-kazoo installs there), then the first on $PATH.
func kazooPeer(ctx context.Context, dir string) peer {
	p := peer{name: PeerKazoo}
	script := filepath.Join(dir, "kazoo_candidate.py")
	if err := writePeerSource("peers/kazoo_candidate.py", script); err != nil {
		p.missing = err.Error()
		return p
	}
	var tried []string
	for _, py := range []string{"/usr/bin/python3", "python3"} {
		out, err := exec.CommandContext(ctx, py, "-c", "import kazoo.version; print(kazoo.version.__version__)").CombinedOutput()
		if err != nil {
			tried = append(tried, fmt.Sprintf("%s: %s", py, lastLine(out, err)))
			continue
		}
		p.version = strings.TrimSpace(string(out))
		p.argv = func(servers, path, id string, timeout time.Duration) []string {
			return []string{py, "-u", script, servers, path, id, millis(timeout)}
		}
		return p
	}
	p.missing = fmt.Sprintf("no python3 imports kazoo (%s); %s", strings.Join(tried, "; "), peerInstallHint)
	return p
}

// curatorPeer compiles LatchCandidate with javac against the jars in
// $ZKELECT_JAVA_LIBS (default /usr/share/java).
func curatorPeer(ctx context.Context, dir string) peer {
	p := peer{name: PeerCurator}
	libs := os.Getenv("ZKELECT_JAVA_LIBS")
	if libs == "" {
		libs = "/usr/share/java"
	}
	cp := []string{dir}
	for _, j := range curatorJars {
		jar := filepath.Join(libs, j)
		if _, err := os.Stat(jar); err != nil {
			p.missing = fmt.Sprintf("%s: %v; %s", jar, err, peerInstallHint)
			return p
		}
		cp = append(cp, jar)
	}
	p.version = jarVersion(filepath.Join(libs, "curator-recipes.jar"), "org.apache.curator/curator-recipes")
	src := filepath.Join(dir, "LatchCandidate.java")
	if err := writePeerSource("peers/LatchCandidate.java", src); err != nil {
		p.missing = err.Error()
		return p
	}
	classpath := strings.Join(cp, ":")
	if out, err := exec.CommandContext(ctx, "javac", "-d", dir, "-cp", classpath, src).CombinedOutput(); err != nil {
		p.missing = fmt.Sprintf("javac LatchCandidate: %s; %s", lastLine(out, err), peerInstallHint)
		return p
	}
	p.argv = func(servers, path, id string, timeout time.Duration) []string {
		return []string{"java", "-cp", classpath, "LatchCandidate", servers, path, id, millis(timeout)}
	}
	return p
}

// writePeerSource copies an embedded peer program to path.
func writePeerSource(name, path string) error {
	b, err := peerSources.ReadFile(name)
	if err != nil {
		return fmt.Errorf("bench: embedded %s: %w", name, err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("bench: write %s: %w", path, err)
	}
	return nil
}

// jarVersion reads the Maven version from a jar's pom.properties (as
// Debian's curator-recipes.jar carries it), or "".
func jarVersion(jar, artifact string) string {
	z, err := zip.OpenReader(jar)
	if err != nil {
		return ""
	}
	defer z.Close()
	f, err := z.Open("META-INF/maven/" + artifact + "/pom.properties")
	if err != nil {
		return ""
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "version="); ok {
			return v
		}
	}
	return ""
}

// lastLine is the last line of a failed command's output, or its error.
func lastLine(out []byte, err error) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if l := strings.TrimSpace(lines[len(lines)-1]); l != "" {
		return l
	}
	return err.Error()
}

func millis(d time.Duration) string { return fmt.Sprint(d.Milliseconds()) }
