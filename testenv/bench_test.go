package testenv_test

import (
	"testing"

	"github.com/zkelect/zkelect/testenv"
)

// BenchmarkStart measures the time from Start to serving clients (for the
// ensemble: a quorum leader elected) plus Close.
//
//	go test -run '^$' -bench Start -benchtime 5x ./testenv/
func BenchmarkStart(b *testing.B) {
	for _, bc := range []struct {
		name    string
		servers int
	}{{"standalone", 1}, {"ensemble3", 3}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				c, err := testenv.Start(b.Context(), testenv.Options{Servers: bc.servers})
				if err != nil {
					b.Fatal(err)
				}
				if err := c.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
