package bench

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteTable prints the side-by-side table: a row of p50 / p99 per step,
// then each cell's ratios to the floor and to the other libraries, then
// why any library is missing.
func (sb *SideBySide) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "side by side: separate processes, each candidate on its own session, timed from the instruction\n"+
		"to step down to the successor's own report; %d failovers per library after resign and exit, %d after kill\n",
		sb.Trials, sb.KillTrials)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	head := []string{"step (p50 / p99)"}
	for _, p := range sb.Peers {
		head = append(head, strings.TrimSpace(p.Name+" "+p.Version))
	}
	fmt.Fprintln(tw, strings.Join(append(head, "floor (same run)"), "\t"))
	for _, r := range sb.Rows {
		cols := []string{r.Step}
		for _, c := range r.Cells {
			if c.Dist == nil {
				cols = append(cols, "missing")
			} else {
				cols = append(cols, pair(c.Dist.P50, c.Dist.P99))
			}
		}
		fmt.Fprintln(tw, strings.Join(append(cols, r.Floor.Name+" "+pair(r.Floor.Dist.P50, r.Floor.Dist.P99)), "\t"))
		fmt.Fprintln(tw, strings.Join(ratioRow(r, "  ×floor", func(c Cell) string {
			return fmt.Sprintf("%s / %s", times(c.P50ToFloor), times(c.P99ToFloor))
		}), "\t"))
		for _, o := range sb.Peers {
			fmt.Fprintln(tw, strings.Join(ratioRow(r, "  ×"+o.Name+" p50", func(c Cell) string {
				if v, ok := c.P50ToPeer[o.Name]; ok {
					return times(v)
				}
				return ""
			}), "\t"))
		}
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("bench: write table: %w", err)
	}
	for _, p := range sb.Peers {
		if p.Missing != "" {
			fmt.Fprintf(w, "%s missing: %s\n", p.Name, p.Missing)
		}
		if p.Note != "" {
			fmt.Fprintf(w, "%s: %s\n", p.Name, p.Note)
		}
	}
	_, err := fmt.Fprintf(w, "create floor (same run): %s ephemeral sequential creates/s from one session\n",
		trimFloat(sb.CreateThroughput))
	return err
}

// ratioRow is one line of ratios under a row: label, then one cell per
// library (empty where it is missing), then an empty floor column.
func ratioRow(r StepRow, label string, cell func(Cell) string) []string {
	cols := []string{label}
	for _, c := range r.Cells {
		if c.Dist == nil {
			cols = append(cols, "")
			continue
		}
		cols = append(cols, cell(c))
	}
	return append(cols, "")
}

// pair renders p50 / p99 in milliseconds.
func pair(p50, p99 time.Duration) string {
	return fmt.Sprintf("%s / %s", strings.TrimSuffix(ms(p50), "ms"), ms(p99))
}

// times renders a ratio such as 2.95x.
func times(v float64) string {
	if v < 0.1 {
		return fmt.Sprintf("%.3fx", v)
	}
	return fmt.Sprintf("%.2fx", v)
}

// ratio is a / b, or 0 when b is 0.
func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
