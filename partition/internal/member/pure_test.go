package member

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
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
