package providers

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
)

// accountsCloud has scopes of several accounts in shared regions and records
// every ReadPrices call.
type accountsCloud struct {
	scopes    []Scope
	types     map[Scope][]string // instance types listed per scope
	listErr   map[Scope]error
	priceErr  map[string]error // by region
	waitPrice bool             // ReadUtilization waits for its region's prices

	mu     sync.Mutex
	calls  []priceCall
	priced map[string]chan struct{} // region → closed once its prices are read
}

type priceCall struct {
	scope Scope
	types []string
}

func (c *accountsCloud) Name() fleet.Provider                    { return fleet.AWS }
func (c *accountsCloud) Scopes(context.Context) ([]Scope, error) { return c.scopes, nil }
func (c *accountsCloud) ListGPUInstances(_ context.Context, s Scope) ([]fleet.Instance, error) {
	if err := c.listErr[s]; err != nil {
		return nil, err
	}
	var out []fleet.Instance
	for i, t := range c.types[s] {
		out = append(out, fleet.Instance{ID: s.Account + "-" + s.Region + "-" + string(rune('a'+i)), Provider: fleet.AWS, Account: s.Account, Region: s.Region, InstanceType: t})
	}
	return out, nil
}

func (c *accountsCloud) ReadUtilization(ctx context.Context, s Scope, _ []fleet.Instance, _ fleet.TimeRange) ([]string, error) {
	if c.waitPrice {
		select {
		case <-c.priceDone(s.Region):
		case <-time.After(5 * time.Second):
			return nil, errors.New("the region's prices were not read while its utilization was")
		}
	}
	return nil, nil
}

func (c *accountsCloud) priceDone(region string) chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.priced == nil {
		c.priced = map[string]chan struct{}{}
	}
	ch, ok := c.priced[region]
	if !ok {
		ch = make(chan struct{})
		c.priced[region] = ch
	}
	return ch
}

func (c *accountsCloud) ReadPrices(_ context.Context, s Scope, types []string) ([]pricing.Price, error) {
	c.mu.Lock()
	c.calls = append(c.calls, priceCall{s, slices.Clone(types)})
	c.mu.Unlock()
	ch := c.priceDone(s.Region)
	defer func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		select {
		case <-ch: // read before: the test fails on the calls
		default:
			close(ch)
		}
	}()
	if err := c.priceErr[s.Region]; err != nil {
		return nil, err
	}
	var out []pricing.Price
	for _, t := range types {
		out = append(out, pricing.Price{Provider: fleet.AWS, Region: s.Region, InstanceType: t, Option: pricing.OnDemand})
	}
	return out, nil
}

func newAccountsCloud() *accountsCloud {
	sc := func(a, r string) Scope { return Scope{Provider: fleet.AWS, Account: a, Region: r} }
	return &accountsCloud{
		scopes: []Scope{sc("A", "r1"), sc("A", "r2"), sc("B", "r1"), sc("B", "r2"), sc("C", "r1"), sc("C", "r2")},
		types: map[Scope][]string{
			sc("A", "r1"): {"a", "b"}, sc("B", "r1"): {"c", "b"}, sc("C", "r1"): {"z"},
			sc("B", "r2"): {"d"}, sc("C", "r2"): {"e", "d"},
		},
		listErr: map[Scope]error{sc("C", "r1"): ErrPermission},
	}
}

// TestCollectReadsPricesOncePerRegion: one read per region, with the union
// of the types its listed scopes have (a scope that failed to list adds
// none), through the region's first scope with instances; every price once.
func TestCollectReadsPricesOncePerRegion(t *testing.T) {
	for _, conc := range []int{1, 2, 8} {
		c := newAccountsCloud()
		res, err := Collect(context.Background(), c, CollectOptions{Concurrency: conc})
		if err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(c.calls, func(a, b priceCall) int { return strings.Compare(a.scope.Region, b.scope.Region) })
		want := []priceCall{
			{Scope{Provider: fleet.AWS, Account: "A", Region: "r1"}, []string{"a", "b", "c"}},
			{Scope{Provider: fleet.AWS, Account: "B", Region: "r2"}, []string{"d", "e"}},
		}
		if len(c.calls) != len(want) {
			t.Fatalf("concurrency %d: ReadPrices calls %+v, want %+v", conc, c.calls, want)
		}
		for i := range want {
			if c.calls[i].scope != want[i].scope || !slices.Equal(c.calls[i].types, want[i].types) {
				t.Errorf("concurrency %d: ReadPrices call %+v, want %+v", conc, c.calls[i], want[i])
			}
		}
		var got []string
		for _, p := range res.Prices {
			got = append(got, p.Region+"/"+p.InstanceType)
		}
		if !slices.Equal(got, []string{"r1/a", "r1/b", "r1/c", "r2/d", "r2/e"}) {
			t.Errorf("concurrency %d: prices %v", conc, got)
		}
		if len(res.Fleet.Instances) != 7 || len(res.Failures) != 1 || len(res.Notes) != 0 {
			t.Errorf("concurrency %d: %d instances, failures %v, notes %q", conc, len(res.Fleet.Instances), res.Failures, res.Notes)
		}
	}
}

// TestCollectPriceFailureNamesTheRegion: a region's failed read is one note
// naming the region and the scope it was read through; the other region's
// prices stay.
func TestCollectPriceFailureNamesTheRegion(t *testing.T) {
	c := newAccountsCloud()
	c.priceErr = map[string]error{"r2": errors.New("pricing down")}
	res, err := Collect(context.Background(), c, CollectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"aws r2: live prices unavailable for its 2 scopes (read through aws:B/r2), using the embedded catalog: pricing down"}
	if !slices.Equal(res.Notes, want) {
		t.Errorf("notes %q, want %q", res.Notes, want)
	}
	if len(res.Prices) != 3 || res.Prices[0].Region != "r1" {
		t.Errorf("prices %+v, want r1's three", res.Prices)
	}
	// A region of one scope keeps the scope's own wording.
	one := newAccountsCloud()
	one.scopes = one.scopes[:2]
	one.priceErr = map[string]error{"r1": errors.New("pricing down")}
	res, err = Collect(context.Background(), one, CollectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"aws:A/r1: live prices unavailable, using the embedded catalog: pricing down"}; !slices.Equal(res.Notes, want) {
		t.Errorf("notes %q, want %q", res.Notes, want)
	}
}

// TestCollectReadsPricesWithTheUtilization: a region's prices are read as
// soon as its scopes are listed, not after their utilization.
func TestCollectReadsPricesWithTheUtilization(t *testing.T) {
	c := newAccountsCloud()
	c.waitPrice = true
	end := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	res, err := Collect(context.Background(), c, CollectOptions{Concurrency: len(c.scopes), Window: fleet.TimeRange{Start: end.Add(-time.Hour), End: end}})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range res.Failures {
		if f.Metrics {
			t.Errorf("%v", f)
		}
	}
}

// TestCollectPricesScopesWithoutRegionAlone: scopes without a region share
// no read.
func TestCollectPricesScopesWithoutRegionAlone(t *testing.T) {
	a, b := Scope{Provider: fleet.AWS, Account: "A"}, Scope{Provider: fleet.AWS, Account: "B"}
	c := &accountsCloud{scopes: []Scope{a, b}, types: map[Scope][]string{a: {"x"}, b: {"x"}}}
	if _, err := Collect(context.Background(), c, CollectOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(c.calls) != 2 {
		t.Errorf("ReadPrices calls %+v, want one per scope", c.calls)
	}
}

// notingCloud notes, from its last price read, something about the whole
// scan, as an adapter that fell back to another query form does.
type notingCloud struct {
	*accountsCloud
	mu    sync.Mutex
	notes []string
}

func (c *notingCloud) ReadPrices(ctx context.Context, s Scope, types []string) ([]pricing.Price, error) {
	c.mu.Lock()
	c.notes = append(c.notes, "prices for "+s.Region+" read the slow way")
	c.mu.Unlock()
	return c.accountsCloud.ReadPrices(ctx, s, types)
}

func (c *notingCloud) TakeScanNotes() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.notes
	c.notes = nil
	return out
}

// TestCollectTakesScanNotes: the notes a ScanNoter gathers during a scan,
// price reads included (they may end after every utilization read), are in
// the result, once each.
func TestCollectTakesScanNotes(t *testing.T) {
	for _, conc := range []int{1, 8} {
		c := &notingCloud{accountsCloud: newAccountsCloud()}
		res, err := Collect(context.Background(), c, CollectOptions{Concurrency: conc, Window: fleet.TimeRange{End: time.Now()}})
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(res.Notes)
		if want := []string{"prices for r1 read the slow way", "prices for r2 read the slow way"}; !slices.Equal(res.Notes, want) {
			t.Errorf("concurrency %d: notes %q, want %q", conc, res.Notes, want)
		}
		if left := c.TakeScanNotes(); len(left) != 0 {
			t.Errorf("concurrency %d: notes left behind %q", conc, left)
		}
	}
}
