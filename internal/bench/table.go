package bench

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// Target is one of issue 16's targets, checked on the measured rows.
type Target struct {
	Name string
	// Measured is the figure and its limit, in words.
	Measured string
	// Pass is false when the figure misses the target; Checked false when
	// the rows it needs were not measured.
	Pass, Checked bool
}

func find(rows []Row, name string, n int) (Row, bool) {
	for _, r := range rows {
		if r.Name == name && r.N == n && r.Err == nil {
			return r, true
		}
	}
	return Row{}, false
}

func largest(rows []Row, name string) (Row, bool) {
	var best Row
	ok := false
	for _, r := range rows {
		if r.Name == name && r.Err == nil && (!ok || r.N > best.N) {
			best, ok = r, true
		}
	}
	return best, ok
}

const gib = 1 << 30

// Targets checks the targets on the rows: at size target for the
// scan targets, on the largest engine row for the engine's.
func Targets(rows []Row, target int) []Target {
	var out []Target
	add := func(t Target) { out = append(out, t) }
	scan, haveScan := find(rows, "scan", target)
	zero, haveZero := find(rows, "scan 0 ms", target)
	var thr Row
	haveThr := false
	for _, r := range rows {
		if r.N == target && r.Throttle > 0 && r.Err == nil {
			thr, haveThr = r, true
		}
	}
	base, haveBase := find(rows, "baseline", target)
	n := fmtInt(target)

	t := Target{Name: "wall ≤ 1.5 × max(critical path, CPU floor) at " + n}
	if haveScan {
		limit := max(scan.CriticalPath(), scan.CPUFloor())
		t.Checked, t.Pass = true, float64(scan.Client.Wall) <= 1.5*float64(limit)
		t.Measured = fmt.Sprintf("%s vs 1.5 × %s = %s (%.2f×)", secs(scan.Client.Wall), secs(limit), secs(time.Duration(1.5*float64(limit))), ratio(scan.Client.Wall, limit))
	}
	add(t)

	t = Target{Name: "wall(latency) ≤ 1.3 × wall(0 ms) at " + n}
	if haveScan && haveZero {
		t.Checked, t.Pass = true, float64(scan.Client.Wall) <= 1.3*float64(zero.Client.Wall)
		t.Measured = fmt.Sprintf("%s vs 1.3 × %s (%.2f×)", secs(scan.Client.Wall), secs(zero.Client.Wall), ratio(scan.Client.Wall, zero.Client.Wall))
	}
	add(t)

	t = Target{Name: "requests ≤ 1.2 × physical bound at " + n}
	if haveScan {
		got, bound := scan.Requests.Total(), scan.BoundTotal()
		t.Checked, t.Pass = true, float64(got) <= 1.2*float64(bound)
		var per []string
		for _, b := range scan.Bounds {
			per = append(per, fmt.Sprintf("%s %s/%s", b.Cloud, fmtInt(scan.Requests.Cloud(b.Cloud)), fmtInt(b.Total())))
		}
		t.Measured = fmt.Sprintf("%s vs %s (%.2f×; %s)", fmtInt(got), fmtInt(bound), float64(got)/float64(max(bound, 1)), strings.Join(per, ", "))
	}
	add(t)

	// The baseline reads the AWS part: against gpufinops's scan of that same
	// part when measured, else of the whole fleet.
	awsScan, haveAWS := find(rows, "scan aws", target)
	what := "gpufinops (AWS part)"
	if !haveAWS {
		awsScan, haveAWS, what = scan, haveScan, "gpufinops (all three clouds)"
	}
	t = Target{Name: "≥ 20× less wall than the per-instance baseline at " + n}
	if haveAWS && haveBase {
		r := ratio(base.Client.Wall, awsScan.Client.Wall)
		t.Checked, t.Pass = true, r >= 20
		t.Measured = fmt.Sprintf("baseline (AWS part) %s, %s %s: %.1f×", secs(base.Client.Wall), what, secs(awsScan.Client.Wall), r)
		if what != "gpufinops (all three clouds)" && haveScan {
			t.Measured += fmt.Sprintf("; all three clouds %s: %.1f×", secs(scan.Client.Wall), ratio(base.Client.Wall, scan.Client.Wall))
		}
	}
	add(t)

	t = Target{Name: "≥ 30× fewer requests than the per-instance baseline at " + n}
	if haveAWS && haveBase {
		b, g := base.Requests.Cloud(fleet.AWS), awsScan.Requests.Cloud(fleet.AWS)
		r := float64(b) / float64(max(g, 1))
		t.Checked, t.Pass = true, r >= 30
		t.Measured = fmt.Sprintf("AWS requests: baseline %s, gpufinops %s: %.1f×", fmtInt(b), fmtInt(g), r)
		for _, bd := range base.Bounds {
			t.Measured += fmt.Sprintf(" (the AWS bound %s allows at most %.1f×)", fmtInt(bd.Total()), float64(b)/float64(max(bd.Total(), 1)))
		}
	}
	add(t)

	t = Target{Name: "engine on 100,000 from a file: < 5 s CPU, < 1 GiB peak"}
	if e, ok := largest(rows, "engine"); ok {
		t.Name = "engine on " + fmtInt(e.N) + " from a file: < 5 s CPU, < 1 GiB peak"
		t.Checked, t.Pass = e.N >= 100000, e.Client.CPU < 5*time.Second && e.Client.PeakRSS < gib
		if !t.Checked {
			t.Name += " (100,000 not measured)"
		}
		t.Checked = true
		t.Measured = fmt.Sprintf("%s CPU, %s peak", secs(e.Client.CPU), mib(e.Client.PeakRSS))
	}
	add(t)

	t = Target{Name: "live scan of " + n + " under 1 GiB peak"}
	if haveScan {
		t.Checked, t.Pass = true, scan.Client.PeakRSS < gib
		t.Measured = mib(scan.Client.PeakRSS) + " peak"
	}
	add(t)

	t = Target{Name: "throttled: same results, wall ≤ 1.5 × the clean run at " + n}
	if haveThr && haveScan && thr.Same != nil {
		t.Checked, t.Pass = true, *thr.Same && float64(thr.Client.Wall) <= 1.5*float64(scan.Client.Wall)
		same := "same report"
		if !*thr.Same {
			same = fmt.Sprintf("DIFFERENT report (%d instances, %d recommendations, saving %s vs %d, %d, %s)",
				thr.Outcome.Instances, thr.Outcome.Recommendations, thr.Outcome.Savings, scan.Outcome.Instances, scan.Outcome.Recommendations, scan.Outcome.Savings)
		}
		t.Measured = fmt.Sprintf("%s; %s vs 1.5 × %s (%.2f×)", same, secs(thr.Client.Wall), secs(scan.Client.Wall), ratio(thr.Client.Wall, scan.Client.Wall))
	}
	add(t)
	return out
}

// Print writes the table of rows, the requests per operation of the scan
// rows beside their bounds, and the targets.
func Print(w io.Writer, rows []Row, target int) {
	fmt.Fprintln(w, "Measured runs (gpufinops analyze -o json as a subprocess; cloudsim serving the fleet)")
	tw := tabwriter.NewWriter(w, 2, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "run\tN\tlatency\treport inst.\trequests\treq/1k inst.\tbound\treq/bound\twall s\tcrit. path s\tCPU floor s\twall/max(cp,floor)\tCPU s\tsim CPU s\tpeak RSS MiB\t")
	for _, r := range rows {
		if r.Err != nil {
			fmt.Fprintf(tw, "%s\t%s\t%s\tFAILED\t\t\t\t\t\t\t\t\t\t\t\t\n", r.Name, fmtInt(r.N), latency(r))
			continue
		}
		cols := []string{r.Name, fmtInt(r.N), latency(r), fmtInt(r.Outcome.Instances)}
		if r.Live {
			got, bound := r.Requests.Total(), r.BoundTotal()
			if r.Name == "baseline" {
				got = r.Requests.Cloud(fleet.AWS)
			}
			cp, floor := r.CriticalPath(), r.CPUFloor()
			cols = append(cols, fmtInt(got), fmt.Sprintf("%.1f", 1000*float64(got)/float64(max(r.N, 1))), fmtInt(bound),
				fmt.Sprintf("%.2f", float64(got)/float64(max(bound, 1))), secs(r.Client.Wall), secs(cp), secs(floor),
				fmt.Sprintf("%.2f", ratio(r.Client.Wall, max(cp, floor))))
		} else {
			cols = append(cols, "–", "–", "–", "–", secs(r.Client.Wall), "–", "–", "–")
		}
		if r.Name == "baseline" {
			cols = append(cols, "–", secs(r.Sim.CPU), "–")
		} else {
			cols = append(cols, secs(r.Client.CPU), simCPU(r), mibNum(r.Client.PeakRSS))
		}
		fmt.Fprintln(tw, strings.Join(cols, "\t")+"\t")
	}
	tw.Flush()
	for _, r := range rows {
		switch {
		case r.Err != nil:
			fmt.Fprintf(w, "  %s %s: %v\n", r.Name, fmtInt(r.N), r.Err)
		case r.Partial != "":
			fmt.Fprintf(w, "  %s %s: %s\n", r.Name, fmtInt(r.N), r.Partial)
		case r.Note != "":
			fmt.Fprintf(w, "  %s %s: %s\n", r.Name, fmtInt(r.N), r.Note)
		case r.Same != nil && !*r.Same:
			fmt.Fprintf(w, "  %s %s: the report differs from the clean scan's\n", r.Name, fmtInt(r.N))
		case r.Same != nil:
			fmt.Fprintf(w, "  %s %s: the same report as the clean scan (instance costs, recommendations, totals)\n", r.Name, fmtInt(r.N))
		}
	}

	var scans []Row
	for _, r := range rows {
		if r.Err == nil && (r.Name == "scan" || r.Name == "scan aws" || r.Name == "baseline") {
			scans = append(scans, r)
		}
	}
	if len(scans) > 0 {
		fmt.Fprintln(w, "\nRequests per operation: measured / physical bound")
		tw = tabwriter.NewWriter(w, 2, 0, 2, ' ', tabwriter.AlignRight)
		head := []string{"cloud", "operation"}
		for _, r := range scans {
			head = append(head, r.Name+" "+fmtInt(r.N))
		}
		fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
		type key struct {
			cloud fleet.Provider
			op    string
		}
		seen := map[key]bool{}
		var keys []key
		for _, r := range scans {
			for _, o := range r.Requests {
				if k := (key{o.Cloud, o.Op}); !seen[k] {
					seen[k] = true
					keys = append(keys, k)
				}
			}
			for _, b := range r.Bounds {
				for op := range b.Requests {
					if k := (key{b.Cloud, op}); !seen[k] {
						seen[k] = true
						keys = append(keys, k)
					}
				}
			}
		}
		sort.Slice(keys, func(i, j int) bool {
			if keys[i].cloud != keys[j].cloud {
				return keys[i].cloud < keys[j].cloud
			}
			return keys[i].op < keys[j].op
		})
		for _, k := range keys {
			cols := []string{string(k.cloud), k.op}
			for _, r := range scans {
				b := 0
				for _, bd := range r.Bounds {
					if bd.Cloud == k.cloud {
						b = bd.Requests[k.op]
					}
				}
				cols = append(cols, fmtInt(r.Requests.Op(k.op))+" / "+fmtInt(b))
			}
			fmt.Fprintln(tw, strings.Join(cols, "\t")+"\t")
		}
		cols := []string{"", "critical path (requests)"}
		for _, r := range scans {
			var per []string
			for _, b := range r.Bounds {
				per = append(per, fmt.Sprintf("%s %d", b.Cloud, b.Chain))
			}
			cols = append(cols, strings.Join(per, ", "))
		}
		fmt.Fprintln(tw, strings.Join(cols, "\t")+"\t")
		tw.Flush()
	}

	fmt.Fprintln(w, "\nTargets (issue 16)")
	partial := false
	for _, r := range rows {
		partial = partial || (r.N == target && r.Partial != "")
	}
	for _, t := range Targets(rows, target) {
		if partial && t.Checked && t.Pass && !strings.HasPrefix(t.Name, "engine") {
			t.Pass, t.Measured = false, t.Measured+" — but a scan at this size was partial (exit 3)"
		}
		mark := "PASS"
		switch {
		case !t.Checked:
			mark, t.Measured = "----", "not measured"
		case !t.Pass:
			mark = "FAIL"
		}
		fmt.Fprintf(w, "  %s  %s: %s\n", mark, t.Name, t.Measured)
	}
}

func latency(r Row) string {
	if !r.Live {
		return "file"
	}
	return r.Latency.String()
}

func simCPU(r Row) string {
	if !r.Live {
		return "–"
	}
	return secs(r.Sim.CPU)
}

func ratio(a, b time.Duration) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2f", d.Seconds()) }

func mib(b int64) string { return mibNum(b) + " MiB" }

func mibNum(b int64) string { return fmt.Sprintf("%.0f", float64(b)/(1<<20)) }

// fmtInt writes n with thousands separators.
func fmtInt(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + fmtInt(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
