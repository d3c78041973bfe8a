package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// k8sDir holds the Kubernetes manifests, relative to this package.
const k8sDir = "../../../../deploy/kubernetes"

// manifests are the objects of deploy/kubernetes by name, each decoded
// strictly into its k8s.io/api type.
type manifests struct {
	statefulSets map[string]*appsv1.StatefulSet
	services     map[string]*corev1.Service
	configMaps   map[string]*corev1.ConfigMap
	budgets      map[string]*policyv1.PodDisruptionBudget
}

// yamlDocument separates the documents of a multi-document YAML file.
var yamlDocument = regexp.MustCompile(`(?m)^---[ \t]*$`)

// decodeManifests reads every *.yaml file in dir. A document whose
// apiVersion and kind are not among the types above, a field those types
// do not have, a field given twice or a name used twice is an error naming
// the file.
func decodeManifests(dir string) (*manifests, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no manifests in %s (%v)", dir, err)
	}
	m := &manifests{
		statefulSets: map[string]*appsv1.StatefulSet{},
		services:     map[string]*corev1.Service{},
		configMaps:   map[string]*corev1.ConfigMap{},
		budgets:      map[string]*policyv1.PodDisruptionBudget{},
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for i, doc := range yamlDocument.Split(string(b), -1) {
			if err := m.add([]byte(doc)); err != nil {
				return nil, fmt.Errorf("%s, document %d: %w", filepath.Base(f), i+1, err)
			}
		}
	}
	return m, nil
}

// add decodes one document into the type its apiVersion and kind name.
func (m *manifests) add(doc []byte) error {
	var fields map[string]any
	if err := yaml.Unmarshal(doc, &fields); err != nil {
		return err
	}
	if len(fields) == 0 {
		return nil // comments only
	}
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return err
	}
	switch tm.APIVersion + " " + tm.Kind {
	case "apps/v1 StatefulSet":
		return decodeStrict(doc, &appsv1.StatefulSet{}, m.statefulSets)
	case "v1 Service":
		return decodeStrict(doc, &corev1.Service{}, m.services)
	case "v1 ConfigMap":
		return decodeStrict(doc, &corev1.ConfigMap{}, m.configMaps)
	case "policy/v1 PodDisruptionBudget":
		return decodeStrict(doc, &policyv1.PodDisruptionBudget{}, m.budgets)
	}
	return fmt.Errorf("apiVersion %q kind %q: not a kind this test knows (add it to manifests)", tm.APIVersion, tm.Kind)
}

// decodeStrict decodes doc into obj, refusing unknown and duplicate fields,
// and files it under its name.
func decodeStrict[T metav1.Object](doc []byte, obj T, into map[string]T) error {
	if err := yaml.UnmarshalStrict(doc, obj); err != nil {
		return err
	}
	name := obj.GetName()
	switch {
	case name == "":
		return errors.New("metadata.name is empty")
	case obj.GetNamespace() != "":
		return fmt.Errorf("%s sets metadata.namespace %q: leave it to kubectl -n", name, obj.GetNamespace())
	}
	if _, dup := into[name]; dup {
		return fmt.Errorf("two objects of one kind named %q", name)
	}
	into[name] = obj
	return nil
}

// containerVar is a $(NAME) reference in a container's args, which the
// kubelet replaces with the variable from the container's env.
var containerVar = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// expandArgs replaces each $(NAME) in args with vars[NAME], as the kubelet
// does, and fails for a name the container does not define (the kubelet
// would pass it on literally).
func expandArgs(args []string, vars map[string]string) ([]string, error) {
	out := make([]string, len(args))
	var missing []string
	for i, a := range args {
		out[i] = containerVar.ReplaceAllStringFunc(a, func(ref string) string {
			name := containerVar.FindStringSubmatch(ref)[1]
			v, ok := vars[name]
			if !ok {
				missing = append(missing, name)
			}
			return v
		})
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("args refer to $(%s), which the container's env does not define", strings.Join(missing, "), $("))
	}
	return out, nil
}
