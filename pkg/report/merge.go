package report

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/recommend"
)

// WarnShardCommitments was the warning of a merged report whose commitment
// recommendations were planned shard by shard. Shards now keep every account
// of a region together (providers.Shard.Owns), so the commitment pools are
// whole in one shard and merges no longer write it; the code stays known.
const WarnShardCommitments = "shard-commitments"

// Part is one partial report to merge and the file it was read from.
type Part struct {
	Name   string
	Report *Report
}

// MergeError is a set of parts that cannot be merged; Name is the file at
// fault ("" when the set as a whole is).
type MergeError struct {
	Name string
	Err  error
}

func (e *MergeError) Error() string {
	if e.Name == "" {
		return e.Err.Error()
	}
	return e.Name + ": " + e.Err.Error()
}

func (e *MergeError) Unwrap() error { return e.Err }

// Merge joins the partial reports of shards 1/N … N/N (analyze --shard) into
// one whole report: their instances, recommendations and warnings, the
// summary and allocation summed from them, so that it Verifies. It refuses
// parts that are not partial or do not Verify by themselves, of shards
// outside 1/N … N/N, of different shard counts, schema majors, currencies,
// policies or catalogs, a shard given twice or missing, and an instance or
// recommendation in two parts. The fleet-wide plans (sharing,
// commitments), the AI metrics, the tag audit summary and the billing
// reconciliation (each shard's is against the whole bill) cannot be summed
// from their parts and are left out; their recommendations are kept, and
// equal the whole scan's, as a shard holds every account of its regions.
func Merge(parts []Part) (*Report, error) {
	if len(parts) == 0 {
		return nil, &MergeError{Err: errors.New("no reports to merge")}
	}
	first := parts[0]
	seen := map[int]string{}
	for _, p := range parts {
		r := p.Report
		switch {
		case r.Shard == nil:
			return nil, &MergeError{p.Name, errors.New("not a partial report (no shard): make the parts with analyze --shard I/N")}
		case r.Shard.Count < 1 || r.Shard.Index < 1 || r.Shard.Index > r.Shard.Count:
			return nil, &MergeError{p.Name, fmt.Errorf("shard %d/%d is not a shard I/N with 1 ≤ I ≤ N", r.Shard.Index, r.Shard.Count)}
		case r.Shard.Count != first.Report.Shard.Count:
			return nil, &MergeError{p.Name, fmt.Errorf("shard %d/%d is of %d shards, %s's of %d", r.Shard.Index, r.Shard.Count, r.Shard.Count, first.Name, first.Report.Shard.Count)}
		case major(r.SchemaVersion) != major(first.Report.SchemaVersion):
			return nil, &MergeError{p.Name, fmt.Errorf("schema %s and %s's %s differ in major version", r.SchemaVersion, first.Name, first.Report.SchemaVersion)}
		case r.Currency != first.Report.Currency:
			return nil, &MergeError{p.Name, fmt.Errorf("currency %s differs from %s's %s", r.Currency, first.Name, first.Report.Currency)}
		case !reflect.DeepEqual(r.Policy, first.Report.Policy):
			return nil, &MergeError{p.Name, fmt.Errorf("policy differs from %s's: analyze every shard with the same policy", first.Name)}
		}
		if err := sameCatalog(r.Catalog, first.Report.Catalog); err != nil {
			return nil, &MergeError{p.Name, fmt.Errorf("%w, in %s: analyze every shard with the same catalog", err, first.Name)}
		}
		// A part is a report of its own: one that does not add up was
		// changed or cut after analyze wrote it, and would hide in the sums.
		if err := r.Verify(); err != nil {
			return nil, &MergeError{p.Name, err}
		}
		if prev, ok := seen[r.Shard.Index]; ok {
			return nil, &MergeError{p.Name, fmt.Errorf("shard %d/%d is also in %s", r.Shard.Index, r.Shard.Count, prev)}
		}
		seen[r.Shard.Index] = p.Name
	}
	n := first.Report.Shard.Count
	var missing []string
	for i := 1; i <= n; i++ {
		if _, ok := seen[i]; !ok {
			missing = append(missing, fmt.Sprintf("%d/%d", i, n))
		}
	}
	if len(missing) > 0 {
		return nil, &MergeError{Err: fmt.Errorf("missing shard %s: give every shard 1/%d … %d/%d", strings.Join(missing, ", "), n, n, n)}
	}
	sorted := slices.Clone(parts)
	slices.SortFunc(sorted, func(a, b Part) int { return cmp.Compare(a.Report.Shard.Index, b.Report.Shard.Index) })

	out := &Report{
		SchemaVersion:      first.Report.SchemaVersion,
		Currency:           first.Report.Currency,
		ExchangeRate:       first.Report.ExchangeRate,
		ExchangeRateSource: first.Report.ExchangeRateSource,
		Tool:               first.Report.Tool,
		Source:             first.Report.Source,
		Catalog:            slices.Clone(first.Report.Catalog),
		Policy:             first.Report.Policy,
		Recommendations:    []Recommendation{},
		Instances:          []Instance{},
		Warnings:           []Warning{},
	}
	instances, recs, warnings := map[string]string{}, map[string]string{}, map[string]bool{}
	alloc := map[string]map[string]*CostBucket{}
	allocOK := true
	var unused *Money
	for _, p := range sorted {
		r := p.Report
		if u := r.Summary.UnusedCommitmentMonthlyCost; u != nil {
			// A commitment belongs to the scope that holds it: each part
			// reports its own.
			sum := *u
			if unused != nil {
				sum = addMoney(*unused, *u)
			}
			unused = &sum
		}
		if r.GeneratedAt.After(out.GeneratedAt) {
			out.GeneratedAt = r.GeneratedAt
		}
		if major(r.SchemaVersion) == major(out.SchemaVersion) && minorLess(out.SchemaVersion, r.SchemaVersion) {
			out.SchemaVersion = r.SchemaVersion
		}
		for _, in := range r.Instances {
			key := in.Provider + "/" + in.Account + "/" + in.Region + "/" + in.ResourceID
			if prev, ok := instances[key]; ok {
				return nil, &MergeError{p.Name, fmt.Errorf("instance %s (%s) is also in %s: the parts overlap", in.ResourceID, in.Provider, prev)}
			}
			instances[key] = p.Name
			out.Instances = append(out.Instances, in)
		}
		for _, rec := range r.Recommendations {
			if prev, ok := recs[rec.ID]; ok {
				return nil, &MergeError{p.Name, fmt.Errorf("recommendation %s is also in %s: the parts overlap", rec.ID, prev)}
			}
			recs[rec.ID] = p.Name
			out.Recommendations = append(out.Recommendations, rec)
		}
		for _, w := range r.Warnings {
			k, err := json.Marshal(w)
			if err != nil {
				return nil, &MergeError{p.Name, err}
			}
			key := string(k)
			if w.ResourceID == "" && warnings[key] {
				continue // a fleet-wide note every part repeats
			}
			warnings[key] = true
			out.Warnings = append(out.Warnings, w)
		}
		for _, c := range r.Catalog {
			if !slices.Contains(out.Catalog, c) {
				out.Catalog = append(out.Catalog, c) // a live source of this shard's scopes
			}
		}
		out.CommitmentsHeld = mergeHeld(out.CommitmentsHeld, r.CommitmentsHeld)
		if r.Allocation == nil {
			allocOK = false
		} else {
			addAllocation(alloc, r.Allocation)
		}
	}
	out.Summary = sumSummary(out)
	if unused != nil {
		s := &out.Summary
		s.UnusedCommitmentMonthlyCost = unused
		s.CurrentMonthlyCost = addMoney(s.CurrentMonthlyCost, *unused)
		s.OptimizedMonthlyCost = Money{d: s.CurrentMonthlyCost.d.Sub(s.MonthlySavings.d), cur: s.CurrentMonthlyCost.cur}
		if !s.CurrentMonthlyCost.d.IsZero() {
			s.SavingsPercent = NewNumber(s.MonthlySavings.d.Mul(decimal.NewFromInt(100)).Div(s.CurrentMonthlyCost.d).Round(1))
		}
	}
	if allocOK {
		out.Allocation = buildAllocation(alloc, out.Summary)
	}
	return out, nil
}

// sameCatalog checks that every data set both parts name is of one date;
// a part may name more (the live price sources of its scopes).
func sameCatalog(a, b []CatalogSource) error {
	for _, x := range a {
		for _, y := range b {
			if x.Name == y.Name && x.Provider == y.Provider && x.AsOf != y.AsOf {
				return fmt.Errorf("price catalog %q is of %s, %s", x.Name, x.AsOf, y.AsOf)
			}
		}
	}
	return nil
}

func major(v string) string { m, _, _ := strings.Cut(v, "."); return m }

// minorLess reports whether a's minor version is below b's.
func minorLess(a, b string) bool {
	var am, bm int
	_, _ = fmt.Sscanf(a[strings.IndexByte(a, '.')+1:], "%d", &am)
	_, _ = fmt.Sscanf(b[strings.IndexByte(b, '.')+1:], "%d", &bm)
	return am < bm
}

func addMoney(a, b Money) Money { return Money{d: a.d.Add(b.d), cur: b.cur} }

// sumSummary totals r's instances and recommendations as the engine does.
func sumSummary(r *Report) Summary {
	s := Summary{SavingsByKind: map[string]Money{}, InstanceCount: len(r.Instances)}
	for _, k := range recommend.Kinds {
		s.SavingsByKind[string(k)] = Money{}
	}
	for _, in := range r.Instances {
		s.GPUCount += in.billedGPUs()
		if !in.Priced || in.CurrentMonthlyCost == nil {
			s.UnpricedCount++
			continue
		}
		s.CurrentMonthlyCost = addMoney(s.CurrentMonthlyCost, *in.CurrentMonthlyCost)
	}
	for _, rec := range r.Recommendations {
		s.MonthlySavings = addMoney(s.MonthlySavings, rec.MonthlySavings)
		s.SavingsByKind[rec.Kind] = addMoney(s.SavingsByKind[rec.Kind], rec.MonthlySavings)
	}
	s.OptimizedMonthlyCost = Money{d: s.CurrentMonthlyCost.d.Sub(s.MonthlySavings.d), cur: s.CurrentMonthlyCost.cur}
	pct := decimal.Zero
	if !s.CurrentMonthlyCost.d.IsZero() {
		pct = s.MonthlySavings.d.Mul(decimal.NewFromInt(100)).Div(s.CurrentMonthlyCost.d).Round(1)
	}
	s.SavingsPercent = NewNumber(pct)
	return s
}

// dimensions are the allocation's splits by name.
func dimensions(a *Allocation) map[string]*[]CostBucket {
	return map[string]*[]CostBucket{"team": &a.ByTeam, "project": &a.ByProject, "workloadType": &a.ByWorkloadType,
		"environment": &a.ByEnvironment, "provider": &a.ByProvider}
}

func addAllocation(acc map[string]map[string]*CostBucket, a *Allocation) {
	for dim, buckets := range dimensions(a) {
		if acc[dim] == nil {
			acc[dim] = map[string]*CostBucket{}
		}
		for _, b := range *buckets {
			sum := acc[dim][b.Key]
			if sum == nil {
				sum = &CostBucket{Key: b.Key}
				acc[dim][b.Key] = sum
			}
			sum.Instances += b.Instances
			sum.CurrentMonthlyCost = addMoney(sum.CurrentMonthlyCost, b.CurrentMonthlyCost)
			sum.OptimizedMonthlyCost = addMoney(sum.OptimizedMonthlyCost, b.OptimizedMonthlyCost)
		}
	}
}

// buildAllocation is the summed buckets, the largest current cost first,
// with their shares of the whole.
func buildAllocation(acc map[string]map[string]*CostBucket, s Summary) *Allocation {
	a := &Allocation{CurrentMonthlyCost: s.CurrentMonthlyCost, OptimizedMonthlyCost: s.OptimizedMonthlyCost}
	for dim, buckets := range dimensions(a) {
		list := []CostBucket{}
		for _, b := range acc[dim] {
			if !s.CurrentMonthlyCost.d.IsZero() {
				b.SharePercent = b.CurrentMonthlyCost.d.Mul(decimal.NewFromInt(100)).Div(s.CurrentMonthlyCost.d).Round(1).InexactFloat64()
			}
			list = append(list, *b)
		}
		slices.SortFunc(list, func(x, y CostBucket) int {
			if c := y.CurrentMonthlyCost.d.Cmp(x.CurrentMonthlyCost.d); c != 0 {
				return c
			}
			return strings.Compare(x.Key, y.Key)
		})
		*buckets = list
	}
	return a
}
