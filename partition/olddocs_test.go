package partition_test

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestOldNamesKeepTheirDocs: `go doc` of the names partition exported
// before the assignment, the root's data and the admin plane moved to
// their own packages still answers, with the deprecation and where the
// name lives now.
func TestOldNamesKeepTheirDocs(t *testing.T) {
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := exec.LookPath(goTool); err != nil {
		t.Skipf("no go tool at %s: %v", goTool, err)
	}
	for name, want := range map[string]string{
		"Operator":      "Deprecated: use operator.Operator",
		"NewOperator":   "Deprecated: use operator.New",
		"Prune":         "Deprecated: use operator.Prune",
		"ErrRefused":    "operator.ErrRefused",
		"OperatorState": "type OperatorState = ",
		"ValidateID":    "func ValidateID(id string) error",
		"Range":         "func Range(lo, hi int) []string",
		"LimitError":    "type LimitError = ",
		"LiveMembers":   "func LiveMembers(",
	} {
		out, err := exec.Command(goTool, "doc", "github.com/zkelect/zkelect/partition."+name).CombinedOutput()
		if err != nil || !strings.Contains(string(out), want) {
			t.Errorf("go doc partition.%s: %v\n%s\nwant it to say %q", name, err, out, want)
		}
	}
}
