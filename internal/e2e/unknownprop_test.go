package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/internal/fleetgen"
	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
)

// unknownTypeName invents a type of cloud p that no catalog has: a new size
// of a family the catalog knows, or a new family.
func unknownTypeName(r *rand.Rand, p fleet.Provider, gpus float64) string {
	n := max(int(gpus), 1)
	switch p {
	case fleet.AWS:
		return []string{"g9z", "p9x", "g5zz", "trn9"}[r.IntN(4)] + fmt.Sprintf(".%dxlarge", 1<<r.IntN(5))
	case fleet.Azure:
		return fmt.Sprintf("Standard_NC%dzds_Z9_v9", 8*n)
	}
	return []string{fmt.Sprintf("a3-zgpu-%dg", n), fmt.Sprintf("g4-zstandard-%d", 8*n), fmt.Sprintf("n9-standard-%d", 4*n)}[r.IntN(3)]
}

// mutation is what became of one instance of a generated fleet.
type mutation struct {
	typ   string
	facts bool   // the fleet (and so the simulator) gives its GPUs and host
	price string // the fleet's hourlyPrice, "" for none
}

// unknownFleet is a generated three-cloud fleet (one account each, all of
// which a scan with plain credentials reaches) of catalog types (old and
// new generations) with about a third of its instances turned into types no
// catalog has: with their GPUs and a price, GPUs only, and (facts false,
// for fleet files only: a cloud always knows its hardware) neither.
func unknownFleet(t *testing.T, seed uint64, n int, live bool) (*fleet.Fleet, map[string]mutation) {
	t.Helper()
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	f, err := fleetgen.Mixed(fleetgen.MixedOptions{Instances: n, Seed: seed, RegionCount: 2, Accounts: 1, Now: demoEnd}, cat)
	if err != nil {
		t.Fatal(err)
	}
	if err := pricing.Complete(f, cat); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 31))
	muts := map[string]mutation{}
	for i := range f.Instances {
		in := &f.Instances[i]
		if r.IntN(3) != 0 {
			continue
		}
		if in.Managed != nil && in.Managed.PriceType != "" {
			continue // priced under its service's own type (Vertex AI), not its machine's
		}
		m := mutation{typ: unknownTypeName(r, in.Provider, in.GPU.Count), facts: live || r.IntN(3) != 0}
		if in.Managed != nil && in.Managed.Service == fleet.SageMaker {
			m.typ = "ml." + m.typ // a SageMaker type the catalog does not know yet
		}
		in.InstanceType = m.typ
		in.Commitment, in.HourlyPrice = nil, nil
		if in.Lifecycle == fleet.Committed {
			in.Lifecycle = fleet.OnDemand
		}
		if !m.facts {
			in.GPU, in.VCPUs, in.MemoryGiB = fleet.GPU{}, 0, 0
		}
		if r.IntN(2) == 0 {
			m.price = fmt.Sprintf("%d.%02d", 1+r.IntN(40), r.IntN(100))
			p := decimal.RequireFromString(m.price)
			in.HourlyPrice = &p
		}
		if _, known := cat.InstanceType(in.Provider, m.typ); known {
			t.Fatalf("the catalog knows %s %s", in.Provider, m.typ)
		}
		muts[in.ID] = m
	}
	if len(muts) == 0 {
		t.Fatal("no instance turned unknown: the generator tests nothing")
	}
	return f, muts
}

// checkUnknownReport checks a report of a fleet with unknown types: every
// instance present, unpriced ones never costed (nor priced at 0), the
// summary the sum of the parts, an unknown-type warning for every unknown
// instance left without a price, and the exit code 3 exactly when the
// report warns of unknown types.
func checkUnknownReport(t *testing.T, f *fleet.Fleet, muts map[string]mutation, code cmdutil.ExitCode, doc, stderr string) {
	t.Helper()
	var r struct {
		Summary struct {
			Current  decimal.Decimal `json:"currentMonthlyCost"`
			Savings  decimal.Decimal `json:"monthlySavings"`
			Unpriced int             `json:"unpricedCount"`
		} `json:"summary"`
		Instances []struct {
			ResourceID string           `json:"resourceId"`
			Priced     bool             `json:"priced"`
			Monthly    *decimal.Decimal `json:"currentMonthlyCost"`
			Savings    *decimal.Decimal `json:"monthlySavings"`
			Hourly     *struct {
				Hourly decimal.Decimal `json:"hourly"`
			} `json:"hourlyPrice"`
		} `json:"instances"`
		Recommendations []struct {
			ResourceID string          `json:"resourceId"`
			Savings    decimal.Decimal `json:"monthlySavings"`
		} `json:"recommendations"`
		Warnings []struct {
			Code, Message string
		} `json:"warnings"`
	}
	if code != cmdutil.ExitOK && code != cmdutil.ExitPartial {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if err := json.Unmarshal([]byte(doc), &r); err != nil {
		t.Fatalf("report does not parse: %v\n%s", err, stderr)
	}
	checkFinite(t, []byte(doc))
	got := map[string]int{}
	for i, in := range r.Instances {
		got[in.ResourceID] = i
	}
	for _, in := range f.Instances {
		if _, ok := got[in.ID]; !ok {
			t.Errorf("%s %s (%s) is missing from the report", in.Provider, in.ID, in.InstanceType)
		}
	}
	var sum, saved decimal.Decimal
	unpriced := 0
	for _, in := range r.Instances {
		if !in.Priced {
			unpriced++
			if in.Monthly != nil || in.Hourly != nil {
				t.Errorf("%s: unpriced, yet costed %v", in.ResourceID, in.Monthly)
			}
			continue
		}
		if in.Hourly == nil || !in.Hourly.Hourly.IsPositive() || in.Monthly == nil {
			t.Errorf("%s: priced at %+v, %v", in.ResourceID, in.Hourly, in.Monthly)
			continue
		}
		sum = sum.Add(*in.Monthly)
		if in.Savings != nil {
			saved = saved.Add(*in.Savings)
		}
	}
	var recSaved decimal.Decimal
	for _, rec := range r.Recommendations {
		recSaved = recSaved.Add(rec.Savings)
	}
	if !sum.Equal(r.Summary.Current) || unpriced != r.Summary.Unpriced || !saved.Equal(r.Summary.Savings) || !recSaved.Equal(r.Summary.Savings) {
		t.Errorf("summary current %s savings %s unpriced %d; parts: current %s, instance savings %s, recommendation savings %s, unpriced %d",
			r.Summary.Current, r.Summary.Savings, r.Summary.Unpriced, sum, saved, recSaved, unpriced)
	}
	unknownWarned := 0
	for _, w := range r.Warnings {
		if w.Code == fleet.ScanUnknownType {
			unknownWarned++
		}
	}
	for id, m := range muts {
		i, ok := got[id]
		if !ok || r.Instances[i].Priced {
			continue
		}
		named := false
		for _, w := range r.Warnings {
			named = named || (w.Code == fleet.ScanUnknownType && strings.Contains(w.Message, `"`+m.typ+`"`) && strings.Contains(w.Message, "price"))
		}
		if !named {
			t.Errorf("%s (%s) is unpriced, and no unknown-type warning says its price is missing", id, m.typ)
		}
	}
	if (unknownWarned > 0) != (code == cmdutil.ExitPartial) {
		t.Errorf("exit %d with %d unknown-type warnings", code, unknownWarned)
	}
}

// TestUnknownTypesPropertyFiles: generated fleet files with random old, new
// and unknown types (with facts and price, facts only, price only, neither)
// are analysed whole: no abort, no instance dropped, unpriced never priced
// at 0, the summary the sum of its parts.
func TestUnknownTypesPropertyFiles(t *testing.T) {
	rounds, _ := propertyRounds()
	for seed := range uint64(rounds) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			f, muts := unknownFleet(t, seed, 60, false)
			path := filepath.Join(t.TempDir(), "fleet.json")
			b, err := json.Marshal(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			code, doc, stderr := gpufinops(t, "analyze", "--fleet", path, "-o", "json")
			checkUnknownReport(t, f, muts, code, doc, stderr)
			for id, m := range muts {
				if m.price != "" && m.facts && strings.Contains(stderr, id) {
					t.Errorf("%s (%s) describes itself and has a price, yet stderr names it: %s", id, m.typ, stderr)
				}
			}
		})
	}
}

// TestUnknownTypesPropertyLive: the same fleets, served by the three
// simulators (which describe the unknown types from the fleet's figures
// and price them where the fleet does, as the clouds' APIs would), scanned
// live: the same properties hold, and an AWS or Azure type the fleet prices
// is priced from the live answer.
func TestUnknownTypesPropertyLive(t *testing.T) {
	rounds := 2
	if testing.Short() {
		rounds = 1
	}
	for seed := range uint64(rounds) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			f, muts := unknownFleet(t, 100+seed, 45, true)
			allCloudsServing(t, f)
			code, doc, stderr := gpufinops(t, "analyze", "--provider", "aws,azure,gcp", "-o", "json")
			checkUnknownReport(t, f, muts, code, doc, stderr)
			var r struct {
				Instances []struct {
					ResourceID string `json:"resourceId"`
					Hourly     *struct {
						Hourly decimal.Decimal `json:"hourly"`
						Source string          `json:"source"`
					} `json:"hourlyPrice"`
				} `json:"instances"`
			}
			if err := json.Unmarshal([]byte(doc), &r); err != nil {
				t.Fatal(err)
			}
			// The simulators price a type in a region as its first on-demand
			// instance there does.
			first := map[string]string{}
			want := map[string]string{}
			for _, in := range f.Instances {
				m, ok := muts[in.ID]
				if !ok || in.Provider == fleet.GCP || in.Lifecycle != fleet.OnDemand {
					continue
				}
				k := string(in.Provider) + "/" + in.Region + "/" + m.typ
				if _, seen := first[k]; !seen && m.price != "" {
					first[k] = m.price
				}
				want[in.ID] = k
			}
			for _, in := range r.Instances {
				k, ok := want[in.ResourceID]
				if !ok || first[k] == "" {
					continue
				}
				if in.Hourly == nil || !in.Hourly.Hourly.Equal(decimal.RequireFromString(first[k])) || strings.Contains(in.Hourly.Source, "fleet") {
					t.Errorf("%s (%s): want the live price %s, got %+v", in.ResourceID, k, first[k], in.Hourly)
				}
			}
		})
	}
}
