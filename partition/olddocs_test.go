package partition_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// goDoc returns `go doc` of partition.name and whether it answered; it
// skips t when the go tool is missing.
func goDoc(t *testing.T, name string) (string, bool) {
	t.Helper()
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := exec.LookPath(goTool); err != nil {
		t.Skipf("no go tool at %s: %v", goTool, err)
	}
	out, err := exec.Command(goTool, "doc", "github.com/zkelect/zkelect/partition."+name).CombinedOutput()
	return string(out), err == nil
}

// TestOldNamesKeepTheirDocs: `go doc` of the names partition exported
// before the root's data moved to partition/internal/root still answers
// (partition is their public home: the internal package is not
// importable).
func TestOldNamesKeepTheirDocs(t *testing.T) {
	for name, want := range map[string]string{
		"ValidateID":  "func ValidateID(id string) error",
		"Range":       "func Range(lo, hi int) []string",
		"LimitError":  "type LimitError = ",
		"LiveMembers": "func LiveMembers(",
	} {
		if out, ok := goDoc(t, name); !ok || !strings.Contains(out, want) {
			t.Errorf("go doc partition.%s:\n%s\nwant it to say %q", name, out, want)
		}
	}
}

// TestRemovedNamesAreListedInTheREADME: the aliases partition dropped
// (no release shipped them) are gone from `go doc`, and partition/README.md
// names each under "Removed names" with the name to use: a public name
// changes only on purpose and documented.
func TestRemovedNamesAreListedInTheREADME(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, removed, ok := strings.Cut(string(readme), "\n## Removed names\n")
	if !ok {
		t.Fatal(`partition/README.md has no "## Removed names" section`)
	}
	removed, _, _ = strings.Cut(removed, "\n## ")
	for name, use := range map[string]string{
		"Assign":           "assign.Assign",
		"Input":            "assign.Input",
		"AssignmentFormat": "assign.Format",
		"Operator":         "operator.Operator",
		"NewOperator":      "operator.New",
		"Prune":            "operator.Prune",
		"ErrRefused":       "operator.ErrRefused",
		"ErrPruneRefused":  "operator.ErrPruneRefused",
		"OperatorState":    "operator.State",
		"Note":             "operator.Note",
		"Freeze":           "operator.Freeze",
	} {
		if out, ok := goDoc(t, name); ok {
			t.Errorf("go doc partition.%s still answers:\n%s", name, out)
		}
		if !strings.Contains(removed, "`partition."+name+"`") || !strings.Contains(removed, "`"+use+"`") {
			t.Errorf(`README "Removed names" does not list partition.%s with %s`, name, use)
		}
	}
}
