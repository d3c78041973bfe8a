package bench

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// Result is one row of the report: a scenario's figure, either a
// distribution of durations (Dist) or a single value with a unit.
type Result struct {
	// Scenario names the measurement, e.g. "failover/resign".
	Scenario string `json:"scenario"`
	// Dist is set for latency measurements.
	Dist *Dist `json:"dist,omitempty"`
	// Value and Unit are set for the other measurements (throughput,
	// counts, bytes).
	Value float64 `json:"value,omitempty"`
	Unit  string  `json:"unit,omitempty"`
	// Floor says which raw measurement bounds this one, with its value.
	Floor string `json:"floor,omitempty"`
	// Note adds context: trials, shard counts, expectations.
	Note string `json:"note,omitempty"`
}

// Report is the outcome of Run.
type Report struct {
	// Machine describes where the numbers were measured.
	Machine Machine `json:"machine"`
	// Config is what was run.
	Config Config `json:"config"`
	// SessionTimeout is the negotiated session timeout of the candidates.
	SessionTimeout time.Duration `json:"session_timeout_ns"`
	// Results in the order they were measured.
	Results []Result `json:"results"`
	// SideBySide is the peers scenario's table; nil when it did not run.
	SideBySide *SideBySide `json:"side_by_side,omitempty"`
	// Elapsed is the wall time of the whole run.
	Elapsed time.Duration `json:"elapsed_ns"`
}

// WriteTable prints the report as an aligned text table.
func (r *Report) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "machine: %s, %d CPUs, %s; ZooKeeper: %d servers, tick %s, session timeout %s\n",
		r.Machine.CPU, r.Machine.CPUs, r.Machine.OS, r.Config.Servers, r.Config.TickTime, r.SessionTimeout)
	if err := r.writeResults(w); err != nil {
		return err
	}
	if r.SideBySide != nil {
		if err := r.SideBySide.WriteTable(w); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "total time: %s\n", r.Elapsed.Round(time.Second))
	return err
}

// writeResults prints the results as an aligned table, if there are any.
func (r *Report) writeResults(w io.Writer) error {
	if len(r.Results) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "scenario\tp50\tp99\tmax\tvalue\tfloor (same run)\tnote")
	for _, res := range r.Results {
		p50, p99, mx, val := "", "", "", ""
		if res.Dist != nil {
			p50, p99, mx = ms(res.Dist.P50), ms(res.Dist.P99), ms(res.Dist.Max)
		} else {
			val = fmt.Sprintf("%s %s", trimFloat(res.Value), res.Unit)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", res.Scenario, p50, p99, mx, val, res.Floor, res.Note)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("bench: write table: %w", err)
	}
	return nil
}

// ms renders a duration in milliseconds with two decimals.
func ms(d time.Duration) string {
	return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
}

func trimFloat(v float64) string {
	s := fmt.Sprintf("%.1f", v)
	return strings.TrimSuffix(s, ".0")
}
