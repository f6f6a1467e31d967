package cache

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func price(typ, hourly string) pricing.Price {
	return pricing.Price{
		Provider: fleet.AWS, Region: "us-east-1", InstanceType: typ, Option: pricing.OnDemand,
		Hourly: decimal.RequireFromString(hourly), Currency: pricing.Currency, Unit: pricing.UnitHour,
		Source: "AWS Price List API GetProducts, live", AsOf: "2026-12-01",
	}
}

var key = Key{Provider: fleet.AWS, Region: "us-east-1", Types: []string{"p5.48xlarge", "g5.xlarge"}, Kind: "on-demand"}

// fetcher counts its calls and returns prices or an error.
type fetcher struct {
	calls  atomic.Int32
	prices []pricing.Price
	err    error
	delay  time.Duration
}

func (f *fetcher) fetch(ctx context.Context) ([]pricing.Price, error) {
	f.calls.Add(1)
	time.Sleep(f.delay)
	return f.prices, f.err
}

func TestPutGetKeepsPricesExactly(t *testing.T) {
	c := New(t.TempDir(), time.Hour, func() time.Time { return t0 })
	in := []pricing.Price{price("g5.xlarge", "1.006"), price("p5.48xlarge", "98.32000000001")}
	in[1].Option, in[1].Zone = pricing.Spot, "us-east-1a"
	in[1].History = &pricing.PriceHistory{Min: decimal.RequireFromString("0.5"), Avg: decimal.RequireFromString("0.6"), Max: decimal.RequireFromString("0.7"), Since: "2026-11-01", Until: "2026-12-01", Points: 3}
	if err := c.Put(key, in); err != nil {
		t.Fatal(err)
	}
	// The key's type order does not matter.
	e, ok := c.Get(Key{Provider: fleet.AWS, Region: "us-east-1", Types: []string{"g5.xlarge", "p5.48xlarge", "g5.xlarge"}, Kind: "on-demand"})
	if !ok || !e.Fresh {
		t.Fatalf("Get = %+v, %v; want a fresh entry", e, ok)
	}
	if len(e.Prices) != 2 || !e.Prices[1].Hourly.Equal(in[1].Hourly) || e.Prices[1].Zone != "us-east-1a" ||
		e.Prices[1].AsOf != "2026-12-01" || e.Prices[1].Source != in[1].Source || e.Prices[1].History == nil || e.Prices[1].History.Points != 3 {
		t.Errorf("round trip changed the prices: %+v", e.Prices)
	}
	for _, other := range []Key{
		{Provider: fleet.AWS, Region: "us-east-1", Types: []string{"g5.xlarge"}, Kind: "on-demand"},
		{Provider: fleet.AWS, Region: "us-west-2", Types: key.Types, Kind: "on-demand"},
		{Provider: fleet.AWS, Region: "us-east-1", Types: key.Types, Kind: "spot"},
		{Provider: fleet.AWS, Region: "us-east-1", Types: key.Types, Kind: "on-demand", Origin: "http://127.0.0.1:1"},
	} {
		if _, ok := c.Get(other); ok {
			t.Errorf("Get(%+v) found the entry of another key", other)
		}
	}
}

func TestLoadHitDoesNotFetch(t *testing.T) {
	clk := &clock{t: t0}
	c := New(t.TempDir(), 24*time.Hour, clk.now)
	f := &fetcher{prices: []pricing.Price{price("g5.xlarge", "1.006")}}
	res, err := c.Load(context.Background(), key, f.fetch)
	if err != nil || res.Cached || len(res.Prices) != 1 || res.Prices[0].Source != "AWS Price List API GetProducts, live" {
		t.Fatalf("first Load = %+v, %v; want live prices", res, err)
	}
	clk.add(23 * time.Hour)
	res, err = c.Load(context.Background(), key, f.fetch)
	if err != nil {
		t.Fatal(err)
	}
	if n := f.calls.Load(); n != 1 {
		t.Errorf("fetch called %d times; want 1 (the second Load is a cache hit)", n)
	}
	if !res.Cached || res.Stale || res.Prices[0].Source != "AWS Price List API GetProducts, live (cached 2026-12-01)" || res.Prices[0].AsOf != "2026-12-01" {
		t.Errorf("hit = %+v; want the cached prices with their AsOf and a (cached date) source", res)
	}
}

func TestLoadRefreshesAfterTTL(t *testing.T) {
	clk := &clock{t: t0}
	c := New(t.TempDir(), 24*time.Hour, clk.now)
	f := &fetcher{prices: []pricing.Price{price("g5.xlarge", "1.006")}}
	if _, err := c.Load(context.Background(), key, f.fetch); err != nil {
		t.Fatal(err)
	}
	clk.add(24 * time.Hour)
	f.prices = []pricing.Price{price("g5.xlarge", "0.9")}
	res, err := c.Load(context.Background(), key, f.fetch)
	if err != nil {
		t.Fatal(err)
	}
	if n := f.calls.Load(); n != 2 || res.Cached || !res.Prices[0].Hourly.Equal(decimal.RequireFromString("0.9")) {
		t.Fatalf("after the TTL: %d fetches, %+v; want a refresh", n, res)
	}
	e, ok := c.Get(key)
	if !ok || !e.Fresh || !e.StoredAt.Equal(t0.Add(24*time.Hour)) || !e.Prices[0].Hourly.Equal(decimal.RequireFromString("0.9")) {
		t.Errorf("entry after refresh = %+v, %v; want the new prices, stored now", e, ok)
	}
}

func TestLoadStaleOnError(t *testing.T) {
	clk := &clock{t: t0}
	c := New(t.TempDir(), time.Hour, clk.now)
	f := &fetcher{prices: []pricing.Price{price("g5.xlarge", "1.006")}}
	if _, err := c.Load(context.Background(), key, f.fetch); err != nil {
		t.Fatal(err)
	}
	clk.add(48 * time.Hour)
	f.err = errors.New("throttled by the cloud: Rate exceeded")
	res, err := c.Load(context.Background(), key, f.fetch)
	if err != nil {
		t.Fatalf("Load with a stale entry failed: %v", err)
	}
	if !res.Cached || !res.Stale || len(res.Prices) != 1 || !res.Prices[0].Hourly.Equal(decimal.RequireFromString("1.006")) {
		t.Fatalf("stale fallback = %+v", res)
	}
	if got, want := res.Prices[0].Source, "AWS Price List API GetProducts, live (cached 2026-12-01, stale, refresh failed)"; got != want {
		t.Errorf("source = %q; want %q", got, want)
	}
	if len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "refresh failed (throttled by the cloud: Rate exceeded); using prices cached 2026-12-01") {
		t.Errorf("notes = %q", res.Notes)
	}
	// The failed refresh left the entry alone.
	if e, ok := c.Get(key); !ok || !e.StoredAt.Equal(t0) {
		t.Errorf("entry after a failed refresh = %+v, %v", e, ok)
	}
}

func TestLoadErrorWithoutEntryFails(t *testing.T) {
	c := New(t.TempDir(), time.Hour, nil)
	boom := errors.New("permission denied")
	if _, err := c.Load(context.Background(), key, (&fetcher{err: boom}).fetch); !errors.Is(err, boom) {
		t.Fatalf("err = %v; want the fetch error", err)
	}
	if _, ok := c.Get(key); ok {
		t.Error("a failed fetch left an entry")
	}
}

func TestEmptyListIsCached(t *testing.T) {
	c := New(t.TempDir(), time.Hour, func() time.Time { return t0 })
	f := &fetcher{}
	for range 2 {
		res, err := c.Load(context.Background(), key, f.fetch)
		if err != nil || len(res.Prices) != 0 {
			t.Fatalf("Load = %+v, %v", res, err)
		}
	}
	if n := f.calls.Load(); n != 1 {
		t.Errorf("fetch called %d times; want 1", n)
	}
}

func TestCorruptFileIgnored(t *testing.T) {
	dir := t.TempDir()
	c := New(dir, time.Hour, func() time.Time { return t0 })
	for _, junk := range []string{"", "{not json", `{"version":99,"prices":[]}`, `{"version":1,"key":{"provider":"aws","region":"eu-west-1","types":[],"kind":"spot"},"storedAt":"2026-12-01T10:00:00Z","prices":[]}`} {
		if err := os.MkdirAll(filepath.Dir(c.path(key)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(c.path(key), []byte(junk), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, ok := c.Get(key); ok {
			t.Errorf("Get read %q as an entry", junk)
		}
		f := &fetcher{prices: []pricing.Price{price("g5.xlarge", "1.006")}}
		res, err := c.Load(context.Background(), key, f.fetch)
		if err != nil || res.Cached || f.calls.Load() != 1 {
			t.Fatalf("Load over %q = %+v, %v; want a fetch", junk, res, err)
		}
		if e, ok := c.Get(key); !ok || len(e.Prices) != 1 {
			t.Errorf("the corrupt file %q was not replaced", junk)
		}
	}
}

func TestUnwritableDirStillReturnsPrices(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(dir, nil, 0o644); err != nil { // a file where the directory should be
		t.Fatal(err)
	}
	c := New(dir, time.Hour, nil)
	res, err := c.Load(context.Background(), key, (&fetcher{prices: []pricing.Price{price("g5.xlarge", "1")}}).fetch)
	if err != nil || len(res.Prices) != 1 || len(res.Notes) != 1 || !strings.HasPrefix(res.Notes[0], "price cache: ") {
		t.Fatalf("Load = %+v, %v; want the prices and a note", res, err)
	}
}

func TestConcurrentLoadsFetchOnce(t *testing.T) {
	dir := t.TempDir()
	f := &fetcher{prices: []pricing.Price{price("g5.xlarge", "1.006")}, delay: 20 * time.Millisecond}
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Separate Cache values over one directory, as separate scopes use.
			res, err := New(dir, time.Hour, nil).Load(context.Background(), key, f.fetch)
			if err == nil && len(res.Prices) != 1 {
				err = fmt.Errorf("got %d prices", len(res.Prices))
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := f.calls.Load(); n != 1 {
		t.Errorf("fetch called %d times; want 1", n)
	}
}

func TestConcurrentWritersNeverTearAnEntry(t *testing.T) {
	dir := t.TempDir()
	c := New(dir, time.Hour, nil)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var reads, bad atomic.Int32
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if e, ok := c.Get(key); ok {
					reads.Add(1)
					// Every writer writes n prices all equal to n.
					n := len(e.Prices)
					for _, p := range e.Prices {
						if !p.Hourly.Equal(decimal.NewFromInt(int64(n))) {
							bad.Add(1)
						}
					}
				}
			}
		}()
	}
	var writers sync.WaitGroup
	for w := 1; w <= 16; w++ {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for range 20 {
				ps := make([]pricing.Price, w)
				for i := range ps {
					ps[i] = price(fmt.Sprintf("t%d", i), fmt.Sprint(w))
				}
				if err := New(dir, time.Hour, nil).Put(key, ps); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	writers.Wait()
	close(stop)
	wg.Wait()
	if bad.Load() > 0 {
		t.Errorf("%d torn reads", bad.Load())
	}
	if _, ok := c.Get(key); !ok {
		t.Error("no entry after the writes")
	}
	left, _ := filepath.Glob(filepath.Join(dir, subdir, ".tmp-*"))
	if len(left) > 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}

func TestLoadHonoursCancellationWhileWaiting(t *testing.T) {
	c := New(t.TempDir(), time.Hour, nil)
	unlock, err := lockKey(context.Background(), c.path(key))
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := c.Load(ctx, key, (&fetcher{}).fetch); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v; want the deadline", err)
	}
}

func TestNilCacheFetches(t *testing.T) {
	var c *Cache
	f := &fetcher{prices: []pricing.Price{price("g5.xlarge", "1")}}
	for range 2 {
		if res, err := c.Load(context.Background(), key, f.fetch); err != nil || len(res.Prices) != 1 || res.Cached {
			t.Fatalf("Load = %+v, %v", res, err)
		}
	}
	if f.calls.Load() != 2 {
		t.Errorf("a nil cache cached")
	}
	if _, ok := c.Get(key); ok {
		t.Error("a nil cache found an entry")
	}
}

func TestDefaultDir(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", "/tmp/xdg-test")
	if d, err := DefaultDir(); err != nil || d != "/tmp/xdg-test/gpufinops" {
		t.Errorf("DefaultDir = %q, %v", d, err)
	}
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "/home/someone")
	d, err := DefaultDir()
	if err != nil || filepath.Base(d) != "gpufinops" {
		t.Errorf("DefaultDir without XDG_CACHE_HOME = %q, %v", d, err)
	}
}

func TestNewDefaults(t *testing.T) {
	c := New("/x", 0, nil)
	if c.TTL() != DefaultTTL || c.Dir() != "/x" || c.now == nil {
		t.Errorf("New defaults = %+v", c)
	}
}
