package cli

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/pflag"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// What the StatefulSet's memory request is checked against: bench/README.md's
// Measured section (7.4 KB of heap per shard, on every member, led or
// standby), twice that for GC headroom (GOGC=100), above the daemon's own
// heap with no shards.
const (
	measuredHeapPerShard = 7400     // bytes
	daemonBaseHeap       = 16 << 20 // bytes
)

// TestKubernetesManifests decodes deploy/kubernetes strictly into the
// k8s.io/api types, checks that its objects refer to one another and to
// the daemon correctly, and then runs the StatefulSet's container command
// as the kubelet would (its env filled in as the downward API and the
// ConfigMap would, ZooKeeper being the test's): the daemon accepts every
// flag, answers the liveness probe, becomes ready for the readiness probe,
// publishes the pod IP as its leaders' address and exits on SIGTERM within
// terminationGracePeriodSeconds.
func TestKubernetesManifests(t *testing.T) {
	m, err := decodeManifests(k8sDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.statefulSets) != 1 || len(m.services) != 1 || len(m.configMaps) != 1 || len(m.budgets) != 1 {
		t.Fatalf("want one StatefulSet, Service, ConfigMap and PodDisruptionBudget; have %d, %d, %d, %d",
			len(m.statefulSets), len(m.services), len(m.configMaps), len(m.budgets))
	}
	sts := m.statefulSets["zkelect"]
	if sts == nil {
		t.Fatal("no StatefulSet named zkelect")
	}
	c := podContainer(t, &sts.Spec.Template.Spec, "zkelect")
	checkSelectors(t, m, sts)
	checkPorts(t, m, sts, c)
	flags := checkDaemonFlags(t, m, c)
	checkTermination(t, sts, flags)
	checkResources(t, c, flags)
	runPodContainer(t, m, sts, c)
}

func podContainer(t *testing.T, spec *corev1.PodSpec, name string) *corev1.Container {
	t.Helper()
	for i := range spec.Containers {
		if spec.Containers[i].Name == name {
			return &spec.Containers[i]
		}
	}
	t.Fatalf("the pod has no container %q", name)
	return nil
}

// checkSelectors: the StatefulSet, the Service and the budget all select
// the pods the StatefulSet makes, and the StatefulSet governs the Service.
func checkSelectors(t *testing.T, m *manifests, sts *appsv1.StatefulSet) {
	t.Helper()
	pod := labels.Set(sts.Spec.Template.Labels)
	selects := func(what string, ls *metav1.LabelSelector) {
		sel, err := metav1.LabelSelectorAsSelector(ls)
		if err != nil || sel.Empty() || !sel.Matches(pod) {
			t.Errorf("%s's selector %v does not select the pod labels %v (%v)", what, ls, pod, err)
		}
	}
	selects("StatefulSet "+sts.Name, sts.Spec.Selector)
	svc := m.services[sts.Spec.ServiceName]
	switch {
	case svc == nil:
		t.Errorf("StatefulSet serviceName %q names no Service", sts.Spec.ServiceName)
	case svc.Spec.ClusterIP != corev1.ClusterIPNone:
		t.Errorf("Service %s is not headless (clusterIP %q)", svc.Name, svc.Spec.ClusterIP)
	default:
		selects("Service "+svc.Name, &metav1.LabelSelector{MatchLabels: svc.Spec.Selector})
	}
	replicas := int32(1)
	if sts.Spec.Replicas != nil {
		replicas = *sts.Spec.Replicas
	}
	for _, pdb := range m.budgets {
		selects("PodDisruptionBudget "+pdb.Name, pdb.Spec.Selector)
		if u := pdb.Spec.MaxUnavailable; u == nil || u.IntValue() < 1 || int32(u.IntValue()) >= replicas {
			t.Errorf("PodDisruptionBudget %s: maxUnavailable %v; want a count in 1..%d", pdb.Name, u, replicas-1)
		}
	}
}

// checkPorts: every port is named, the probes and the Service use the
// container's port by name, and the daemon listens on that port.
func checkPorts(t *testing.T, m *manifests, sts *appsv1.StatefulSet, c *corev1.Container) {
	t.Helper()
	byName := map[string]int32{}
	for _, p := range c.Ports {
		if p.Name == "" {
			t.Errorf("container port %d has no name", p.ContainerPort)
		}
		byName[p.Name] = p.ContainerPort
	}
	probes := map[string]*corev1.Probe{"/healthz": c.LivenessProbe, "/readyz": c.ReadinessProbe}
	for path, p := range probes {
		switch {
		case p == nil || p.HTTPGet == nil:
			t.Errorf("want an HTTP probe on %s", path)
		case p.HTTPGet.Path != path:
			t.Errorf("probe path %q; want %s", p.HTTPGet.Path, path)
		case byName[p.HTTPGet.Port.StrVal] == 0:
			t.Errorf("probe on %s uses port %q, not a named container port", path, p.HTTPGet.Port.String())
		}
	}
	for _, sp := range m.services[sts.Spec.ServiceName].Spec.Ports {
		if sp.Name == "" || byName[sp.TargetPort.StrVal] != sp.Port {
			t.Errorf("Service port %q targets %q: want a named container port equal to port %d", sp.Name, sp.TargetPort.String(), sp.Port)
		}
	}
	for _, flag := range []string{"listen", "advertise"} {
		addr := flagArg(c.Args, flag)
		if i := strings.LastIndexByte(addr, ':'); i < 0 || addr[:i] != "$(POD_IP)" || addr[i+1:] != strconv.Itoa(int(byName["http"])) {
			t.Errorf("--%s=%s; want $(POD_IP) and the container port named http (%d)", flag, addr, byName["http"])
		}
	}
	if a := sts.Spec.Template.Annotations["prometheus.io/port"]; a != strconv.Itoa(int(byName["http"])) {
		t.Errorf("prometheus.io/port annotation %q; want %d", a, byName["http"])
	}
}

// flagArg returns the value of --name=value in args, or "".
func flagArg(args []string, name string) string {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v
		}
	}
	return ""
}

// checkDaemonFlags parses the container's args with the daemon's own flag
// set (unknown flags and bad values fail) and checks the env it takes its
// member id and ensemble from. It returns the parsed flags.
func checkDaemonFlags(t *testing.T, m *manifests, c *corev1.Container) *pflag.FlagSet {
	t.Helper()
	cmd, rest, err := newRootCmd().Find(c.Args)
	if err != nil || cmd.Name() != "shards" {
		t.Fatalf("container args %v: want `zkelect shards ...` (%v)", c.Args, err)
	}
	args, err := expandArgs(rest, podVars(t, m, c))
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatalf("zkelect shards refuses the container's args: %v", err)
	}
	for _, required := range []string{"root", "shards", "listen", "advertise"} {
		if !cmd.Flags().Changed(required) {
			t.Errorf("container args set no --%s", required)
		}
	}
	env := map[string]*corev1.EnvVarSource{}
	for _, e := range c.Env {
		env[e.Name] = e.ValueFrom
	}
	if src := env["ZKELECT_MEMBER"]; src == nil || src.FieldRef == nil || src.FieldRef.FieldPath != "metadata.name" {
		t.Errorf("ZKELECT_MEMBER must come from the pod name (fieldRef metadata.name); got %+v", src)
	}
	if src := env["POD_IP"]; src == nil || src.FieldRef == nil || src.FieldRef.FieldPath != "status.podIP" {
		t.Errorf("POD_IP must come from the pod's IP (fieldRef status.podIP); got %+v", src)
	}
	if src := env[envZK]; src == nil || src.ConfigMapKeyRef == nil {
		t.Errorf("%s must come from a ConfigMap; got %+v", envZK, src)
	} else if cm := m.configMaps[src.ConfigMapKeyRef.Name]; cm == nil {
		t.Errorf("%s refers to ConfigMap %q, which the manifests do not define", envZK, src.ConfigMapKeyRef.Name)
	} else if _, err := (&commonFlags{zk: cm.Data[src.ConfigMapKeyRef.Key]}).servers(); err != nil {
		t.Errorf("ConfigMap %s key %s: %v", cm.Name, src.ConfigMapKeyRef.Key, err)
	}
	return cmd.Flags()
}

// podVars are the container's env as the kubelet would set it in the first
// pod, with the test's ZooKeeper standing in for the ConfigMap's.
func podVars(t *testing.T, m *manifests, c *corev1.Container) map[string]string {
	t.Helper()
	sts := m.statefulSets["zkelect"]
	vars := map[string]string{}
	for _, e := range c.Env {
		src := e.ValueFrom
		switch {
		case src == nil:
			vars[e.Name] = e.Value
		case src.FieldRef != nil && src.FieldRef.FieldPath == "metadata.name":
			vars[e.Name] = sts.Name + "-0"
		case src.FieldRef != nil && src.FieldRef.FieldPath == "status.podIP":
			vars[e.Name] = "127.0.0.1"
		case src.ConfigMapKeyRef != nil:
			vars[e.Name] = zkc.ConnectString()
		case src.ResourceFieldRef != nil && src.ResourceFieldRef.Resource == "limits.memory":
			vars[e.Name] = strconv.FormatInt(c.Resources.Limits.Memory().Value(), 10)
		default:
			t.Fatalf("env %s: a source this test cannot fill in: %+v", e.Name, src)
		}
	}
	return vars
}

// checkTermination: the kubelet's SIGKILL comes after a SIGTERM'd daemon
// has handed its shards off and stopped their children.
func checkTermination(t *testing.T, sts *appsv1.StatefulSet, fs *pflag.FlagSet) {
	t.Helper()
	handoff, _ := fs.GetDuration("handoff-timeout")
	grace, _ := fs.GetDuration("grace")
	tgp := sts.Spec.Template.Spec.TerminationGracePeriodSeconds
	if tgp == nil || time.Duration(*tgp)*time.Second <= handoff+grace {
		t.Errorf("terminationGracePeriodSeconds %v; want above --handoff-timeout %s + --grace %s", tgp, handoff, grace)
	}
}

// checkResources: requests are set, and the memory request covers the
// measured heap of the shards the daemon runs.
func checkResources(t *testing.T, c *corev1.Container, fs *pflag.FlagSet) {
	t.Helper()
	req, lim := c.Resources.Requests, c.Resources.Limits
	if req.Cpu().IsZero() || req.Memory().IsZero() {
		t.Fatalf("container requests cpu %s, memory %s: want both set", req.Cpu(), req.Memory())
	}
	if lim.Memory().Cmp(*req.Memory()) < 0 {
		t.Errorf("memory limit %s is below the request %s", lim.Memory(), req.Memory())
	}
	shardFlag, _ := fs.GetString("shards")
	shards, err := parseShards(shardFlag)
	if err != nil {
		t.Fatal(err)
	}
	if need := int64(daemonBaseHeap + 2*measuredHeapPerShard*len(shards)); req.Memory().Value() < need {
		t.Errorf("memory request %s for %d shards; want at least %d bytes", req.Memory(), len(shards), need)
	}
}

// runPodContainer runs the container's command as the first pod would and
// probes it as the kubelet would, then stops it as a pod deletion does.
func runPodContainer(t *testing.T, m *manifests, sts *appsv1.StatefulSet, c *corev1.Container) {
	t.Helper()
	vars := podVars(t, m, c)
	_, rest, _ := newRootCmd().Find(c.Args)
	args, err := expandArgs(rest, vars)
	if err != nil {
		t.Fatal(err)
	}
	// The manifest's port may be taken on this machine, and its root is
	// another test's business.
	root := testPath(t)
	args = append(args, "--root="+root, "--listen=127.0.0.1:0")
	var env []string
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	p := startProc(t, "pod "+vars["ZKELECT_MEMBER"], append([]string{"shards"}, args...), env...)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	p.waitStderr(ctx, "shards daemon started")
	d := &daemon{proc: p, member: vars["ZKELECT_MEMBER"], url: "http://" + listenAddr(t, p.err.String())}
	if code, body := d.get(t, c.LivenessProbe.HTTPGet.Path); code != http.StatusOK {
		t.Errorf("liveness probe %s: %d %s", c.LivenessProbe.HTTPGet.Path, code, body)
	}
	eventually(t, 30*time.Second, "the readiness probe to pass", func() bool {
		code, _ := d.get(t, c.ReadinessProbe.HTTPGet.Path)
		return code == http.StatusOK
	})
	advertised, _ := expandArgs([]string{flagArg(c.Args, "advertise")}, vars)
	led := owners(t, testSession(t), root)
	if len(led) == 0 {
		t.Error("the ready daemon leads no shard in ZooKeeper")
	}
	for shard, o := range led {
		if o.Address != advertised[0] {
			t.Errorf("shard %s's leader publishes address %q; want the pod IP's %q", shard, o.Address, advertised[0])
		}
	}
	_, metrics := d.get(t, "/metrics")
	t.Logf("pod daemon at readiness: %s, %s", metricLine(metrics, "go_memstats_heap_inuse_bytes"), metricLine(metrics, "process_resident_memory_bytes"))
	p.signal(syscall.SIGTERM)
	if code := p.wait(time.Duration(*sts.Spec.Template.Spec.TerminationGracePeriodSeconds) * time.Second); code != 0 {
		t.Errorf("the daemon exited %d after SIGTERM; want 0", code)
	}
}

// metricLine returns the sample line of an unlabelled metric, or name alone.
func metricLine(exposition, name string) string {
	for l := range strings.Lines(exposition) {
		if strings.HasPrefix(l, name+" ") {
			return strings.TrimSpace(l)
		}
	}
	return name
}

// TestKubernetesManifestsDecodeStrictly shows that the decoding the test
// above relies on refuses what the API server would: a misspelt field, a
// field given twice and an unknown kind.
func TestKubernetesManifestsDecodeStrictly(t *testing.T) {
	for doc, want := range map[string]string{
		"apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: x}\nspec: {replica: 3}\n":              `unknown field "replica"`,
		"apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec: {clusterIP: None, clusterIP: None}\n": "already set",
		"apiVersion: v1\nkind: Secret\nmetadata: {name: x}\n":                                            "not a kind this test knows",
	} {
		m := &manifests{statefulSets: map[string]*appsv1.StatefulSet{}, services: map[string]*corev1.Service{}}
		if err := m.add([]byte(doc)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("decoding %q: %v; want an error containing %q", doc, err, want)
		}
	}
}
