package member

import (
	"context"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestCoreIsPure: the core's non-test files import no recipe, partition,
// operator or connection-layer package, and never call time.Now, time.Since,
// time.Until or a timer: the time is an argument, the session's facts are
// values.
func TestCoreIsPure(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	banned := []string{"/recipe", "/internal/zkconn", "zkelect/partition\"", "/partition/operator", "go-zookeeper", "zerolog"}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ast, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range ast.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			for _, b := range banned {
				if strings.Contains(p+"\"", b) {
					t.Errorf("%s imports %s: the core stays pure (events in, a plan out)", f, p)
				}
			}
		}
		for _, call := range []string{"time.Now(", "time.Since(", "time.Until(", "time.NewTimer(", "time.AfterFunc(", "time.Sleep(", "go func"} {
			if strings.Contains(string(src), call) {
				t.Errorf("%s calls %s: the core takes the time as an argument and runs no goroutine", f, call)
			}
		}
	}
}

// TestCoreDependsOnNoShell: nothing the core imports, directly or not,
// is recipe, the connection layer, partition, its operator plane or
// partition/internal/root (the before-stop hook's import rule): the core
// sees values, never a session. It skips when the go command is not on
// PATH.
func TestCoreDependsOnNoShell(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skipf("the go command is not on PATH (%v): listing the core's dependencies needs go list", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	const mod = "github.com/zkelect/zkelect/"
	banned := []string{mod + "recipe", mod + "internal/zkconn", mod + "partition", mod + "partition/operator",
		mod + "partition/internal/root", mod + "partition/internal/shard", "github.com/go-zookeeper/zk"}
	for _, dep := range strings.Fields(string(out)) {
		if slices.Contains(banned, dep) {
			t.Errorf("the core depends on %s: it stays pure (events in, a plan out)", dep)
		}
	}
}
