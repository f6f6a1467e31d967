package billing

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// Options shape a read.
type Options struct {
	// Version is the FOCUS version to read the export as; "" detects it
	// from the columns.
	Version string
	// Start and End bound the window (ChargePeriodStart in [Start, End));
	// a zero bound is open.
	Start, End time.Time
	// GPUs says whether a provider's instance type has GPUs and how many;
	// nil knows none, so only rows with SkuPriceDetails.GpuCount count. A
	// type it says has GPUs with a count of zero is a GPU type whose count
	// is unknown (a family of GPU types the catalog lacks): its rows count,
	// the resource's GPUCount stays zero, and Summary.Warnings says so.
	GPUs func(p fleet.Provider, instanceType string) (float64, bool)
	// Keep are join keys (see Key) of the fleet's instances: their Compute
	// rows count even when no instance type is named.
	Keep map[string]bool
}

// Resource is one GPU instance's charges in the window.
type Resource struct {
	// Key is the join key (provider and normalised id).
	Key          string         `json:"-"`
	ResourceID   string         `json:"resourceId"`
	Provider     fleet.Provider `json:"provider"`
	Account      string         `json:"account,omitempty"`
	Region       string         `json:"region,omitempty"`
	InstanceType string         `json:"instanceType,omitempty"`
	GPUCount     float64        `json:"gpuCount,omitempty"`
	// BilledCost, EffectiveCost, ListCost and ContractedCost are the sums
	// of the resource's rows, in the bill's currency.
	BilledCost     decimal.Decimal `json:"billedCost"`
	EffectiveCost  decimal.Decimal `json:"effectiveCost"`
	ListCost       decimal.Decimal `json:"listCost"`
	ContractedCost decimal.Decimal `json:"contractedCost"`
	// Hours are the consumed instance-hours (Usage rows in hours).
	Hours decimal.Decimal `json:"hours"`
	// CommittedHours, SpotHours and ReservedHours are the hours a
	// commitment covered, priced Dynamic (spot), and run on a capacity
	// reservation.
	CommittedHours decimal.Decimal `json:"committedHours"`
	SpotHours      decimal.Decimal `json:"spotHours"`
	ReservedHours  decimal.Decimal `json:"capacityReservationHours"`
	// Commitments are the commitment ids that covered the resource.
	Commitments []string  `json:"commitmentIds,omitempty"`
	Rows        int64     `json:"rows"`
	First       time.Time `json:"firstChargeStart"`
	Last        time.Time `json:"lastChargeEnd"`
}

// EffectiveHourly is EffectiveCost ÷ Hours, to eight places; false without
// hours.
func (r *Resource) EffectiveHourly() (decimal.Decimal, bool) {
	if !r.Hours.IsPositive() {
		return decimal.Zero, false
	}
	return r.EffectiveCost.DivRound(r.Hours, 8), true
}

// share is part ÷ whole to four places; 0 without a whole.
func share(part, whole decimal.Decimal) float64 {
	if !whole.IsPositive() {
		return 0
	}
	return part.DivRound(whole, 4).InexactFloat64()
}

// CommitmentShare is the share of the hours a commitment covered.
func (r *Resource) CommitmentShare() float64 { return share(r.CommittedHours, r.Hours) }

// SpotShare is the share of the hours priced Dynamic.
func (r *Resource) SpotShare() float64 { return share(r.SpotHours, r.Hours) }

// ReservationShare is the share of the hours on a capacity reservation.
func (r *Resource) ReservationShare() float64 { return share(r.ReservedHours, r.Hours) }

// Commitment is a commitment's unused part in the window: paid for, idle.
type Commitment struct {
	ID       string         `json:"commitmentDiscountId"`
	Provider fleet.Provider `json:"provider"`
	Type     string         `json:"type,omitempty"`
	// InstanceType is set when the unused rows name one.
	InstanceType string `json:"instanceType,omitempty"`
	// GPU says the unused rows name a GPU instance type.
	GPU bool `json:"gpu"`
	// UnusedEffectiveCost is the EffectiveCost of its Unused rows.
	UnusedEffectiveCost decimal.Decimal `json:"unusedEffectiveCost"`
	Rows                int64           `json:"rows"`
}

// Summary is a bill's GPU charges per resource.
type Summary struct {
	Files    []string `json:"files"`
	Versions []string `json:"focusVersions"`
	// Currency is the BillingCurrency of the GPU rows.
	Currency string `json:"currency"`
	// Rows are every row read; GPURows those counted to a resource.
	Rows    int64 `json:"rows"`
	GPURows int64 `json:"gpuRows"`
	// Start and End are the window asked for; zero when open.
	Start time.Time `json:"windowStart"`
	End   time.Time `json:"windowEnd"`
	// BilledCost, EffectiveCost, ListCost and Hours total the resources.
	BilledCost    decimal.Decimal `json:"billedCost"`
	EffectiveCost decimal.Decimal `json:"effectiveCost"`
	ListCost      decimal.Decimal `json:"listCost"`
	Hours         decimal.Decimal `json:"hours"`
	// Resources are sorted by provider and id.
	Resources []Resource `json:"resources"`
	// Unused are the commitments with unused rows, largest first.
	Unused []Commitment `json:"unusedCommitments"`
	// Warnings name the GPU instance types the bill counts without knowing
	// their GPUs (neither the catalog nor the bill's SkuPriceDetails gives
	// the count), one per provider and type.
	Warnings []string `json:"warnings,omitempty"`
}

// aggregator folds rows into resources.
type aggregator struct {
	opts     Options
	res      map[string]*Resource
	commits  map[string]*Commitment
	sum      Summary
	versions map[string]bool
	// providers memoizes ProviderOf: a bill names few providers, in many rows.
	providers map[string]fleet.Provider
}

func newAggregator(o Options) *aggregator {
	return &aggregator{opts: o, res: map[string]*Resource{}, commits: map[string]*Commitment{}, versions: map[string]bool{},
		providers: map[string]fleet.Provider{}}
}

// providerOf is ProviderOf, memoized.
func (a *aggregator) providerOf(name string) fleet.Provider {
	p, ok := a.providers[name]
	if !ok {
		p = ProviderOf(name)
		a.providers[name] = p
	}
	return p
}

// gpuType is the row's GPU instance type and count; ok false when the row
// names none.
func (a *aggregator) gpuType(p fleet.Provider, r *Row) (string, float64, bool) {
	if r.InstanceType != "" {
		if r.GPUCount > 0 {
			return r.InstanceType, r.GPUCount, true
		}
		if a.opts.GPUs != nil {
			if n, ok := a.opts.GPUs(p, r.InstanceType); ok && n >= 0 {
				return r.InstanceType, n, true
			}
		}
		return r.InstanceType, 0, false
	}
	if a.opts.GPUs != nil {
		for _, t := range tokens(r.ChargeDescription) {
			if n, ok := a.opts.GPUs(p, t); ok && n >= 0 {
				return t, n, true
			}
		}
	}
	return "", r.GPUCount, r.GPUCount > 0
}

// add folds one row in; an error names the column.
func (a *aggregator) add(r *Row) error {
	n := max(r.Count, 1)
	a.sum.Rows += n
	if (!a.opts.Start.IsZero() && r.Start.Before(a.opts.Start)) || (!a.opts.End.IsZero() && !r.Start.Before(a.opts.End)) {
		return nil
	}
	p := a.providerOf(r.ProviderName)
	if strings.EqualFold(r.CommitmentStatus, "Unused") && r.CommitmentID != "" {
		typ, _, gpu := a.gpuType(p, r)
		c := a.commits[r.CommitmentID]
		if c == nil {
			c = &Commitment{ID: r.CommitmentID, Provider: p, Type: r.CommitmentType}
			a.commits[r.CommitmentID] = c
		}
		if gpu {
			c.GPU, c.InstanceType = true, typ
		}
		c.UnusedEffectiveCost = c.UnusedEffectiveCost.Add(r.Effective)
		c.Rows += n
		return nil
	}
	if r.ResourceID == "" || strings.EqualFold(r.ChargeCategory, "Purchase") {
		return nil
	}
	key := Key(p, r.ResourceID)
	typ, gpus, gpu := a.gpuType(p, r)
	if !gpu && !(a.opts.Keep[key] && strings.EqualFold(r.ServiceCategory, "Compute")) {
		return nil
	}
	if r.Currency != "" {
		switch {
		case a.sum.Currency == "":
			a.sum.Currency = r.Currency
		case !strings.EqualFold(a.sum.Currency, r.Currency):
			return &ColumnError{colBillingCurrency, fmt.Errorf("%s after %s: the GPU rows of one read must share a currency", r.Currency, a.sum.Currency)}
		}
	}
	res := a.res[key]
	if res == nil {
		res = &Resource{Key: key, ResourceID: r.ResourceID, Provider: p, First: r.Start}
		a.res[key] = res
	}
	if typ != "" && (res.InstanceType == "" || !r.Start.Before(res.Last)) {
		res.InstanceType = typ
		if gpus > 0 {
			res.GPUCount = gpus
		}
	}
	if r.Account != "" {
		res.Account = r.Account
	}
	if r.Region != "" {
		res.Region = r.Region
	}
	res.Rows += n
	a.sum.GPURows += n
	res.BilledCost = res.BilledCost.Add(r.Billed)
	res.EffectiveCost = res.EffectiveCost.Add(r.Effective)
	res.ListCost = res.ListCost.Add(r.List)
	res.ContractedCost = res.ContractedCost.Add(r.Contracted)
	if r.Start.Before(res.First) {
		res.First = r.Start
	}
	end := r.End
	if end.IsZero() {
		end = r.Start
	}
	if end.After(res.Last) {
		res.Last = end
	}
	if !strings.EqualFold(r.ChargeCategory, "Usage") || !r.HasConsumed || !hourly(r.ConsumedUnit) {
		return nil
	}
	h := r.Consumed
	res.Hours = res.Hours.Add(h)
	if strings.EqualFold(r.PricingCategory, "Dynamic") {
		res.SpotHours = res.SpotHours.Add(h)
	}
	if r.CommitmentID != "" {
		res.CommittedHours = res.CommittedHours.Add(h)
		if !slices.Contains(res.Commitments, r.CommitmentID) && len(res.Commitments) < 8 {
			res.Commitments = append(res.Commitments, r.CommitmentID)
		}
	}
	if r.CapacityID != "" && !strings.EqualFold(r.CapacityStatus, "Unused") {
		res.ReservedHours = res.ReservedHours.Add(h)
	}
	return nil
}

// finish sorts and totals.
func (a *aggregator) finish() *Summary {
	s := a.sum
	s.Start, s.End = a.opts.Start, a.opts.End
	s.Resources = make([]Resource, 0, len(a.res))
	for _, r := range a.res {
		slices.Sort(r.Commitments)
		s.Resources = append(s.Resources, *r)
		s.BilledCost = s.BilledCost.Add(r.BilledCost)
		s.EffectiveCost = s.EffectiveCost.Add(r.EffectiveCost)
		s.ListCost = s.ListCost.Add(r.ListCost)
		s.Hours = s.Hours.Add(r.Hours)
	}
	slices.SortFunc(s.Resources, func(x, y Resource) int { return strings.Compare(x.Key, y.Key) })
	s.Unused = make([]Commitment, 0, len(a.commits))
	for _, c := range a.commits {
		s.Unused = append(s.Unused, *c)
	}
	slices.SortFunc(s.Unused, func(x, y Commitment) int {
		if c := y.UnusedEffectiveCost.Cmp(x.UnusedEffectiveCost); c != 0 {
			return c
		}
		return strings.Compare(x.ID, y.ID)
	})
	s.Warnings = unknownGPUs(s.Resources)
	for v := range a.versions {
		s.Versions = append(s.Versions, v)
	}
	slices.Sort(s.Versions)
	if s.Currency == "" {
		s.Currency = "USD"
	}
	return &s
}

// Read aggregates the export at path (a file or a folder of files).
func Read(ctx context.Context, path string, o Options) (*Summary, error) {
	files, err := Files(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, &Error{File: path, Err: err}
	}
	a := newAggregator(o)
	for _, f := range files {
		t, err := open(f)
		if err != nil {
			return nil, &Error{File: f, Err: err}
		}
		err = a.readTable(ctx, f, t)
		if cerr := t.close(); err == nil && cerr != nil {
			err = &Error{File: f, Err: cerr}
		}
		if err != nil {
			return nil, err
		}
		a.sum.Files = append(a.sum.Files, f)
	}
	return a.finish(), nil
}

// ReadCSV aggregates one CSV export read from r, named name in errors.
func ReadCSV(ctx context.Context, name string, r io.Reader, o Options) (*Summary, error) {
	t, err := newCSV(r, func() error { return nil })
	if err != nil {
		return nil, &Error{File: name, Err: err}
	}
	a := newAggregator(o)
	if err := a.readTable(ctx, name, t); err != nil {
		return nil, err
	}
	a.sum.Files = []string{name}
	return a.finish(), nil
}

func (a *aggregator) readTable(ctx context.Context, name string, t table) error {
	s, err := newSchema(t.header(), a.opts.Version)
	if err != nil {
		return &Error{File: name, Err: err}
	}
	a.versions[s.version] = true
	var n int64
	for {
		rec, err := t.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		n++
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return &Error{File: name, Row: n, Err: fmt.Errorf("line %d: %v", pe.Line, pe.Err)}
			}
			return &Error{File: name, Row: n, Err: err}
		}
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		row, err := s.parseRow(rec)
		if err == nil {
			if row.Version != "" {
				a.versions[strings.TrimPrefix(row.Version, "v")] = true
			}
			err = a.add(&row)
		}
		if err != nil {
			var ce *ColumnError
			if errors.As(err, &ce) {
				return &Error{File: name, Row: n, Column: ce.Column, Err: ce.Err}
			}
			return &Error{File: name, Row: n, Err: err}
		}
	}
}

// unknownGPUs words a warning per provider and instance type of the
// resources counted as GPU instances without a GPU count.
func unknownGPUs(res []Resource) []string {
	type key struct {
		p   fleet.Provider
		typ string
	}
	n := map[key]int{}
	var keys []key
	for i := range res {
		r := &res[i]
		if r.GPUCount > 0 || r.InstanceType == "" {
			continue
		}
		k := key{r.Provider, r.InstanceType}
		if n[k] == 0 {
			keys = append(keys, k)
		}
		n[k]++
	}
	slices.SortFunc(keys, func(a, b key) int {
		if c := strings.Compare(string(a.p), string(b.p)); c != 0 {
			return c
		}
		return strings.Compare(a.typ, b.typ)
	})
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		res := "resources"
		if n[k] == 1 {
			res = "resource"
		}
		out = append(out, fmt.Sprintf("%s %s is a GPU instance type the catalog lacks and the bill gives no GpuCount for: %d %s counted with their GPUs unknown",
			k.p, k.typ, n[k], res))
	}
	return out
}
