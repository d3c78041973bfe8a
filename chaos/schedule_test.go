package chaos

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestPlanIsReproducibleAndCoversEveryKind(t *testing.T) {
	cfg := ScheduleConfig{Seed: 42, Length: 10 * time.Minute, SessionTimeout: 2 * time.Second, Members: 5, Servers: 3}
	a, b := Plan(cfg), Plan(cfg)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed gave two plans")
	}
	cfg.Seed = 43
	if reflect.DeepEqual(a, Plan(cfg)) {
		t.Fatal("another seed gave the same plan")
	}
	seen := map[FaultKind]int{}
	var prevEnd time.Duration
	for _, f := range a {
		seen[f.Kind]++
		if f.At < prevEnd {
			t.Fatalf("%v starts before the previous fault ended (%s)", f, prevEnd)
		}
		prevEnd = f.At + f.Duration
		limit := 5
		if !f.Kind.ClientFault() {
			limit = 3
		}
		if f.Target < 0 || f.Target >= limit {
			t.Fatalf("%v: target out of range", f)
		}
		long := strings.HasSuffix(string(f.Kind), "-long")
		if long && f.Duration <= cfg.SessionTimeout || !long && f.Duration >= cfg.SessionTimeout {
			t.Fatalf("%v: duration on the wrong side of the session timeout", f)
		}
	}
	for _, k := range AllFaults {
		if seen[k] < 5 {
			t.Errorf("%s planned %d times in 10 minutes, want at least 5", k, seen[k])
		}
	}
}

func TestLeading(t *testing.T) {
	recs := []Record{acquire(0, "m1", "a", 1), acquire(0, "m2", "b", 2), release(10, "m1", "a", 1),
		acquire(20, "m3", "c", 3), {Time: at(30), Kind: KindCrash, Member: "m3"}}
	got := Leading(recs)
	if !reflect.DeepEqual(got, map[string]int{"b": 1}) {
		t.Fatalf("Leading = %v, want only b", got)
	}
}
