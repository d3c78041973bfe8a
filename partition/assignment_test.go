package partition_test

import (
	"encoding/json"
	"maps"
	"os"
	"testing"

	"github.com/zkelect/zkelect/partition"
)

// TestOldAssignNamesComputeTheGoldenVectors: code written against the
// names partition exported before the assignment moved to partition/assign
// (partition.Assign, partition.Input, partition.AssignmentFormat) still
// compiles and computes every golden vector byte for byte.
func TestOldAssignNamesComputeTheGoldenVectors(t *testing.T) {
	data, err := os.ReadFile("assign/testdata/assignment-v1.json")
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Format  int `json:"format"`
		Vectors []struct {
			Name   string            `json:"name"`
			Input  partition.Input   `json:"input"`
			Target map[string]string `json:"target"`
		} `json:"vectors"`
	}
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	if g.Format != partition.AssignmentFormat || len(g.Vectors) == 0 {
		t.Fatalf("format %d with %d vectors, want format %d", g.Format, len(g.Vectors), partition.AssignmentFormat)
	}
	for _, v := range g.Vectors {
		if got := partition.Assign(v.Input); !maps.Equal(got, v.Target) {
			t.Errorf("%s: partition.Assign differs from the golden target", v.Name)
		}
	}
}
