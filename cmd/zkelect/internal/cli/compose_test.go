package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// Paths of the playground's files, relative to this package.
const (
	composeFile    = "../../../../docker-compose.yml"
	dockerfile     = "../../../../Dockerfile"
	promConfigFile = "../../../../deploy/prometheus/prometheus.yml"
)

// composeService is what the test reads of a docker-compose service, as
// `docker-compose config` resolves it.
type composeService struct {
	Image string `json:"image"`
	Build *struct {
		Context string `json:"context"`
		Target  string `json:"target"`
	} `json:"build"`
	Entrypoint  stringList        `json:"entrypoint"`
	Command     stringList        `json:"command"`
	Environment map[string]string `json:"environment"`
	Hostname    string            `json:"hostname"`
	DependsOn   map[string]any    `json:"depends_on"`
}

// stringList is a compose list that may be written as one string (split
// on blanks, as compose does for an exec form it is not given).
type stringList []string

func (l *stringList) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*l = strings.Fields(s)
		return nil
	}
	return json.Unmarshal(b, (*[]string)(l))
}

// readCompose resolves docker-compose.yml (anchors, merges, defaults) with
// docker-compose itself and decodes its services.
func readCompose(t *testing.T) map[string]composeService {
	t.Helper()
	if _, err := exec.LookPath("docker-compose"); err != nil {
		t.Fatal("docker-compose not found: run make deps (installs Debian's docker-compose)")
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "docker-compose", "-f", composeFile, "config").Output()
	if err != nil {
		t.Fatalf("docker-compose config: %v", err)
	}
	var c struct {
		Services map[string]composeService `json:"services"`
	}
	if err := yaml.Unmarshal(out, &c); err != nil {
		t.Fatalf("decode docker-compose config: %v", err)
	}
	return c.Services
}

// imageStage is what a stage of the Dockerfile gives its containers.
type imageStage struct {
	binaries   map[string]string // path in the image -> the Go package built into it
	entrypoint []string
}

// readDockerfile follows the Dockerfile's stages: each stage's binaries
// (COPY --from=build of a `go build -o` output, inherited from the stage
// it is FROM) and ENTRYPOINT, and the last one (docker build's default
// target) under the key "".
func readDockerfile(t *testing.T) map[string]imageStage {
	t.Helper()
	b, err := os.ReadFile(dockerfile)
	if err != nil {
		t.Fatal(err)
	}
	built := map[string]string{} // /out/X -> package
	for _, m := range regexp.MustCompile(`-o (/out/\S+) (\./\S+)`).FindAllStringSubmatch(string(b), -1) {
		built[m[1]] = m[2]
	}
	stages := map[string]imageStage{}
	var cur string
	from := regexp.MustCompile(`^FROM (\S+)(?: AS (\S+))?$`)
	copyBin := regexp.MustCompile(`^COPY --from=build (/out/\S+) (\S+)$`)
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if m := from.FindStringSubmatch(line); m != nil {
			cur = m[2]
			st := imageStage{binaries: map[string]string{}}
			if parent, ok := stages[m[1]]; ok {
				for k, v := range parent.binaries {
					st.binaries[k] = v
				}
				st.entrypoint = parent.entrypoint
			}
			stages[cur] = st
			continue
		}
		if m := copyBin.FindStringSubmatch(line); m != nil {
			stages[cur].binaries[m[2]] = built[m[1]]
		}
		if rest, ok := strings.CutPrefix(line, "ENTRYPOINT "); ok {
			var ep []string
			if err := json.Unmarshal([]byte(rest), &ep); err != nil {
				t.Fatalf("Dockerfile ENTRYPOINT %s: %v", rest, err)
			}
			st := stages[cur]
			st.entrypoint = ep
			stages[cur] = st
		}
	}
	stages[""] = stages[cur]
	return stages
}

// testBinaries are the binaries TestMain built, by the package built.
func testBinaries() map[string]string {
	return map[string]string{"./cmd/zkelect": zkelectBin, "./cmd/zkelect/zkelect-dev": zkelectDevBin}
}

// TestDockerfileDefaultImageCarriesZkelectAlone: the image docker build
// makes by default (what the Kubernetes manifests deploy) carries the
// zkelect binary alone, as its entrypoint; zkelect-dev, which links test
// code, is in the playground target only.
func TestDockerfileDefaultImageCarriesZkelectAlone(t *testing.T) {
	stages := readDockerfile(t)
	def := stages[""]
	if len(def.binaries) != 1 || def.binaries["/usr/local/bin/zkelect"] != "./cmd/zkelect" {
		t.Errorf("the default image carries %v; want /usr/local/bin/zkelect (./cmd/zkelect) alone", def.binaries)
	}
	if len(def.entrypoint) == 0 || def.entrypoint[0] != "/usr/local/bin/zkelect" {
		t.Errorf("the default image's entrypoint is %v; want /usr/local/bin/zkelect", def.entrypoint)
	}
	if pg := stages["playground"]; pg.binaries["/usr/local/bin/zkelect-dev"] != "./cmd/zkelect/zkelect-dev" {
		t.Errorf("the playground image carries %v; want zkelect-dev beside zkelect", pg.binaries)
	}
}

// composeRun is how the test runs one service of the playground.
type composeRun struct {
	name string
	bin  string // the test's build of the image's binary
	args []string
	env  []string
}

// runsOf returns, for each service built from the Dockerfile, the command
// its container runs (entrypoint and command, the image's where the
// service sets none), with the image's binary replaced by the test's
// build of the same package. It fails for a binary the image lacks.
func runsOf(t *testing.T, services map[string]composeService, stages map[string]imageStage) []composeRun {
	t.Helper()
	var runs []composeRun
	for name, svc := range services {
		if svc.Build == nil {
			continue
		}
		st, ok := stages[svc.Build.Target]
		if !ok {
			t.Fatalf("service %s builds Dockerfile target %q, which the Dockerfile has not", name, svc.Build.Target)
		}
		argv := append(append([]string{}, st.entrypoint...), svc.Command...)
		if len(svc.Entrypoint) > 0 {
			argv = append(append([]string{}, svc.Entrypoint...), svc.Command...)
		}
		pkg, ok := st.binaries[argv[0]]
		if !ok {
			t.Fatalf("service %s runs %s, which image target %q does not carry (it has %v)", name, argv[0], svc.Build.Target, st.binaries)
		}
		bin, ok := testBinaries()[pkg]
		if !ok {
			t.Fatalf("service %s runs %s built from %s, which the tests do not build", name, argv[0], pkg)
		}
		var env []string
		for k, v := range svc.Environment {
			env = append(env, k+"="+v)
		}
		if svc.Hostname != "" {
			env = append(env, "ZKELECT_MEMBER="+svc.Hostname) // a member's id defaults to its host name
		}
		runs = append(runs, composeRun{name: name, bin: bin, args: argv[1:], env: env})
	}
	sort.Slice(runs, func(i, j int) bool {
		return len(services[runs[i].name].DependsOn) < len(services[runs[j].name].DependsOn)
	})
	return runs
}

// anyHostPort is an address a container listens on.
var anyHostPort = regexp.MustCompile(`^0\.0\.0\.0:([0-9]+)$`)

// TestComposePlaygroundRuns runs what docker-compose.yml runs, without
// Docker: every service built from the Dockerfile runs its command with the
// binary its image target carries (the test's build of the same package),
// against the test's ZooKeeper instead of zk1..zk3, each listening on a
// free loopback port instead of its container's, the other services' host
// names replaced by those addresses. The playground must work: the store
// serves, the three daemons balance the 64 shards and every shard's worker
// (`--exec`, run from PATH as in the image) writes to the store. Its
// daemons ran `zkelect demo worker`, which zkelect refuses, and the image
// carried no zkelect-dev.
func TestComposePlaygroundRuns(t *testing.T) {
	services := readCompose(t)
	runs := runsOf(t, services, readDockerfile(t))
	addrs := map[string]string{} // "service:port" as compose names it -> where the test runs it
	path := filepath.Dir(zkelectBin) + string(os.PathListSeparator) + os.Getenv("PATH")
	var members []string
	var root string
	var shards int
	for _, r := range runs {
		args := slices.Clone(r.args)
		port := ""
		for i, a := range args {
			if m := anyHostPort.FindStringSubmatch(a); m != nil {
				port, args[i] = m[1], "127.0.0.1:0"
			}
			for from, to := range addrs {
				args[i] = strings.ReplaceAll(args[i], from, to)
			}
			if i > 0 && args[i-1] == "--root" {
				root = a
			}
			if i > 0 && args[i-1] == "--shards" {
				fmt.Sscan(a, &shards)
			}
		}
		env := append(withoutEnv(r.env, envZK), envZK+"="+zkc.ConnectString(), "PATH="+path)
		p := startBinary(t, r.name, r.bin, args, env...)
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		addr := ""
		if slices.Contains(args, "shards") {
			p.waitStderr(ctx, "shards daemon started")
			addr = listenAddr(t, p.err.String())
			members = append(members, services[r.name].Hostname)
		} else {
			out := p.waitStdout(ctx, "\n")
			addr = regexp.MustCompile(`http://(\S+)`).FindStringSubmatch(out + " http://?")[1]
		}
		cancel()
		if port != "" {
			addrs[r.name+":"+port] = addr
		}
		t.Logf("service %s: %s %s (on %s)", r.name, filepath.Base(r.bin), strings.Join(args, " "), addr)
	}
	if len(members) != 3 || shards == 0 || root == "" {
		t.Fatalf("docker-compose.yml runs daemons %v over %d shards under %q; want three", members, shards, root)
	}
	s := testSession(t)
	eventually(t, 60*time.Second, fmt.Sprintf("%d shards balanced over %v", shards, members), func() bool {
		return balanced(owners(t, s, root), shards, members...)
	})
	store, ok := addrs["store:8080"]
	if !ok {
		t.Fatalf("no store service listening on 8080 (ran %v)", addrs)
	}
	eventually(t, 60*time.Second, "every shard's worker writing to the store", func() bool {
		return len(storeShards(t, store)) == shards
	})
	checkScrapeTargets(t, addrs)
}

// storeShards returns the shards the demo store holds a write of (its
// GET /v1/shards).
func storeShards(t *testing.T, store string) map[string]json.RawMessage {
	t.Helper()
	d := &daemon{url: "http://" + store}
	code, body := d.get(t, "/v1/shards")
	var out map[string]json.RawMessage
	if code != 200 || json.Unmarshal([]byte(body), &out) != nil {
		return nil
	}
	return out
}

// checkScrapeTargets: every target Prometheus scrapes in the playground
// is a service:port the test found listening.
func checkScrapeTargets(t *testing.T, addrs map[string]string) {
	t.Helper()
	b, err := os.ReadFile(promConfigFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`"([a-z0-9-]+:[0-9]+)"`).FindAllStringSubmatch(string(b), -1) {
		if _, ok := addrs[m[1]]; !ok {
			t.Errorf("Prometheus scrapes %s, where no service of docker-compose.yml listens (listening: %v)", m[1], addrs)
		}
	}
}

// TestZkelectDevHelpNamesItself: zkelect-dev's help and examples name
// zkelect-dev, whose commands they are. They said `zkelect demo worker`
// and `zkelect dev`, which the zkelect binary refuses.
func TestZkelectDevHelpNamesItself(t *testing.T) {
	wrong := regexp.MustCompile(`(^|[^-\w])zkelect (demo|dev|bench)\b|Usage:\s+zkelect\s`)
	for _, args := range [][]string{{"--help"}, {"demo", "--help"}, {"demo", "worker", "--help"}, {"demo", "store", "--help"}, {"dev", "--help"}, {"bench", "--help"}} {
		out, err := exec.CommandContext(t.Context(), zkelectDevBin, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("zkelect-dev %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		if !strings.Contains(string(out), "zkelect-dev") {
			t.Errorf("zkelect-dev %s does not name zkelect-dev:\n%s", strings.Join(args, " "), out)
		}
		if m := wrong.FindString(string(out)); m != "" {
			t.Errorf("zkelect-dev %s names another binary (%q):\n%s", strings.Join(args, " "), m, out)
		}
	}
}
