package recommend

import (
	"fmt"
	"maps"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
)

func round2(v float64) float64 { return math.Round(v*100) / 100 }

// pct formats a percentage or hour count with at most one decimal.
func pct(v float64) string { return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) }

// tightPercent is a number directly followed by its percent sign.
var tightPercent = regexp.MustCompile(`([0-9])%`)

// spacePercent writes a label from the data, such as the Spot Instance
// Advisor's interruption band "10-15%", with the space every output puts
// before the percent sign: "10-15 %".
func spacePercent(s string) string { return tightPercent.ReplaceAllString(s, "$1 %") }

// num formats a size or count with at most two decimals.
func num(v float64) string { return strconv.FormatFloat(round2(v), 'f', -1, 64) }

func windowText(sum *fleet.Summary) string {
	if sum.WindowHours <= 0 {
		return "an unstated window"
	}
	if d := sum.WindowHours / 24; d == math.Trunc(d) {
		return fmt.Sprintf("%s days", num(d))
	}
	return fmt.Sprintf("%s h", num(sum.WindowHours))
}

// utilMetrics lists the utilization figures a decision rests on.
func utilMetrics(sum *fleet.Summary) map[string]float64 {
	m := map[string]float64{"windowHours": round2(sum.WindowHours)}
	if sum.SampleCount > 0 {
		m["samples"] = float64(sum.SampleCount)
	}
	add := func(prefix string, st *fleet.Stats) {
		if st == nil {
			return
		}
		m[prefix+"Avg"] = st.Avg
		m[prefix+"P95"] = st.P95
		m[prefix+"Max"] = st.Max
	}
	add("gpuUtil", sum.GPU)
	add("gpuMemory", sum.GPUMemory)
	add("hostCpu", sum.CPU)
	add("hostMemory", sum.Memory)
	return m
}

func mergeMetrics(a, b map[string]float64) map[string]float64 {
	out := maps.Clone(a)
	maps.Copy(out, b)
	return out
}

func priceList(ps ...pricing.Price) []pricing.Price { return append([]pricing.Price(nil), ps...) }

func titleCase(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
