package cache

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
)

var day = time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)

func ovPrice(p fleet.Provider, region, typ string, opt pricing.Option, hourly string) pricing.Price {
	return pricing.Price{Provider: p, Region: region, InstanceType: typ, Option: opt, Hourly: decimal.RequireFromString(hourly),
		Currency: pricing.Currency, Unit: pricing.UnitHour, Source: "test API", AsOf: "2026-12-06"}
}

func TestOverlayWriteReadRoundTrip(t *testing.T) {
	path := OverlayPath(t.TempDir())
	read := map[Region]Fetch{{fleet.AWS, "us-east-1"}: {Provider: fleet.AWS, Region: "us-east-1", FetchedAt: day, Types: 2, Prices: 2}}
	asked := map[Region][]string{{fleet.AWS, "us-east-1"}: {"p5.48xlarge", "g5.xlarge"}}
	o, _ := (*Overlay)(nil).Merge(read, asked, []pricing.Price{
		ovPrice(fleet.AWS, "us-east-1", "p5.48xlarge", pricing.Spot, "30.1"),
		ovPrice(fleet.AWS, "us-east-1", "g5.xlarge", pricing.OnDemand, "1.006"),
	}, day)
	if err := o.Write(path); err != nil {
		t.Fatal(err)
	}
	got, err := ReadOverlay(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Prices) != 2 || got.Prices[0].InstanceType != "g5.xlarge" || !got.Prices[1].Hourly.Equal(decimal.RequireFromString("30.1")) {
		t.Fatalf("read back %+v", got.Prices)
	}
	if !got.UpdatedAt.Equal(day) || len(got.Fetches) != 1 || got.Fetches[0].Types != 2 {
		t.Fatalf("read back %+v", got)
	}
	// No temporary file is left beside it.
	ents, _ := os.ReadDir(filepath.Dir(path))
	if len(ents) != 1 {
		t.Fatalf("the folder holds %d files, want only the overlay", len(ents))
	}
	// Missing: no overlay, no error.
	if o, err := ReadOverlay(filepath.Join(t.TempDir(), "none.json")); o != nil || err != nil {
		t.Fatalf("missing file: %v, %v", o, err)
	}
}

func TestOverlayMergeReplacesOnlyWhatWasRead(t *testing.T) {
	east, west := Region{fleet.AWS, "us-east-1"}, Region{fleet.AWS, "us-west-2"}
	first, _ := (*Overlay)(nil).Merge(
		map[Region]Fetch{east: {Provider: fleet.AWS, Region: "us-east-1", FetchedAt: day}, west: {Provider: fleet.AWS, Region: "us-west-2", FetchedAt: day}},
		map[Region][]string{east: {"a", "b"}, west: {"a"}},
		[]pricing.Price{
			ovPrice(fleet.AWS, "us-east-1", "a", pricing.OnDemand, "1"),
			ovPrice(fleet.AWS, "us-east-1", "b", pricing.OnDemand, "2"),
			ovPrice(fleet.AWS, "us-west-2", "a", pricing.OnDemand, "3"),
		}, day)
	later := day.Add(48 * time.Hour)
	// The second update reads type a in us-east-1 only; a has no price any more.
	second, _ := first.Merge(map[Region]Fetch{east: {Provider: fleet.AWS, Region: "us-east-1", FetchedAt: later}},
		map[Region][]string{east: {"A"}}, nil, later)
	var got []string
	for _, p := range second.Prices {
		got = append(got, p.Region+"/"+p.InstanceType+"="+p.Hourly.String())
	}
	if strings.Join(got, " ") != "us-east-1/b=2 us-west-2/a=3" {
		t.Fatalf("merged prices %v", got)
	}
	if len(second.Fetches) != 2 || !second.Fetches[0].FetchedAt.Equal(later) || !second.Fetches[1].FetchedAt.Equal(day) {
		t.Fatalf("merged fetches %+v", second.Fetches)
	}
	// A price the file could not hold is left out, with a note.
	bad := ovPrice(fleet.AWS, "us-east-1", "c", pricing.OnDemand, "1e300")
	kept, notes := second.Merge(map[Region]Fetch{east: {Provider: fleet.AWS, Region: "us-east-1", FetchedAt: later}}, nil, []pricing.Price{bad}, later)
	if len(kept.Prices) != 2 || len(notes) != 1 || !strings.Contains(notes[0], "beyond $10000") {
		t.Fatalf("an absurd price: %d prices, notes %q", len(kept.Prices), notes)
	}
	// A price for a region that was not read is not taken.
	third, _ := second.Merge(map[Region]Fetch{east: {Provider: fleet.AWS, Region: "us-east-1", FetchedAt: later}}, nil,
		[]pricing.Price{ovPrice(fleet.GCP, "us-central1", "a2-highgpu-1g", pricing.OnDemand, "3")}, later)
	if len(third.Prices) != 2 {
		t.Fatalf("took a price of a region not read: %+v", third.Prices)
	}
}

// TestParseOverlayRefuses: every broken file is one line that names the
// file and says what is wrong.
func TestParseOverlayRefuses(t *testing.T) {
	good := func(mod func(m map[string]any)) []byte {
		m := map[string]any{
			"schemaVersion": "1.0", "kind": "CatalogOverlay", "updatedAt": "2026-12-06T10:00:00Z", "fetches": []any{},
			"prices": []any{map[string]any{"provider": "aws", "region": "us-east-1", "instanceType": "g5.xlarge", "option": "on-demand",
				"hourly": "1.006", "currency": "USD", "unit": "hour", "source": "AWS Price List", "asOf": "2026-12-06"}},
		}
		if mod != nil {
			mod(m)
		}
		b, _ := json.Marshal(m)
		return b
	}
	setPrice := func(k string, v any) func(map[string]any) {
		return func(m map[string]any) { m["prices"].([]any)[0].(map[string]any)[k] = v }
	}
	if _, err := ParseOverlay("o.json", good(nil)); err != nil {
		t.Fatalf("the good file: %v", err)
	}
	cases := map[string]struct {
		b    []byte
		want string
	}{
		"not json":      {[]byte("{"), "not an overlay file"},
		"two documents": {append(good(nil), []byte(" {}")...), "data after the document"},
		"kind":          {good(func(m map[string]any) { m["kind"] = "PriceList" }), `kind is "PriceList"`},
		"version":       {good(func(m map[string]any) { m["schemaVersion"] = "2.0" }), `schemaVersion "2.0"`},
		"unknown field": {good(func(m map[string]any) { m["extra"] = 1 }), "unknown field"},
		"zero":          {good(setPrice("hourly", "0")), "is not above 0"},
		"negative":      {good(setPrice("hourly", -1)), "is not above 0"},
		"absurd":        {good(setPrice("hourly", "1e300")), "beyond $10000"},
		"nan":           {good(setPrice("hourly", "NaN")), "not an overlay file"},
		"inf":           {good(setPrice("hourly", "Infinity")), "not an overlay file"},
		"currency":      {good(setPrice("currency", "EUR")), `currency "EUR"`},
		"unit":          {good(setPrice("unit", "month")), `unit "month"`},
		"option":        {good(setPrice("option", "reserved")), `unknown option "reserved"`},
		"provider":      {good(setPrice("provider", "oracle")), `unknown provider "oracle"`},
		"region":        {good(setPrice("region", "us east\n1")), "is not a region name"},
		"type":          {good(setPrice("instanceType", "")), "is not a type name"},
		"date":          {good(setPrice("asOf", "2026-13-01")), "is not a date"},
		"source":        {good(setPrice("source", " ")), "no source"},
		"duplicate": {good(func(m map[string]any) {
			p := m["prices"].([]any)[0].(map[string]any)
			q := map[string]any{}
			for k, v := range p {
				q[k] = v
			}
			q["region"] = "US-EAST-1"
			m["prices"] = append(m["prices"].([]any), q)
		}), "price 2 (aws US-EAST-1 g5.xlarge on-demand) repeats price 1"},
	}
	for name, c := range cases {
		_, err := ParseOverlay("/cache/o.json", c.b)
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "catalog overlay /cache/o.json: ") || strings.Contains(msg, "\n") || !strings.Contains(msg, c.want) {
			t.Errorf("%s: error %q, want one line naming the file and saying %q", name, msg, c.want)
		}
	}
}

// TestOverlayProperties: for random updates, the file reads back as written,
// merging the same update twice gives the same bytes, and every price read
// is within the bounds ParseOverlay promises.
func TestOverlayProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 3))
	regions := []string{"us-east-1", "eu-west-1", "westeurope", "us-central1"}
	types := []string{"p5.48xlarge", "g5.xlarge", "Standard_NC24ads_A100_v4", "a2-highgpu-1g"}
	opts := []pricing.Option{pricing.OnDemand, pricing.Spot, pricing.SavingsPlan1y, pricing.SavingsPlan3y}
	for i := range 200 {
		read := map[Region]Fetch{}
		asked := map[Region][]string{}
		var fetched []pricing.Price
		for range 1 + rng.IntN(12) {
			p := fleet.Providers[rng.IntN(len(fleet.Providers))]
			r := Region{p, regions[rng.IntN(len(regions))]}
			typ := types[rng.IntN(len(types))]
			read[r] = Fetch{Provider: p, Region: r.Region, FetchedAt: day, Types: len(asked[r]) + 1}
			asked[r] = append(asked[r], typ)
			hourly := decimal.New(1+rng.Int64N(99999999), -4-int32(rng.IntN(4)))
			fetched = append(fetched, ovPrice(p, r.Region, typ, opts[rng.IntN(len(opts))], hourly.String()))
		}
		var base *Overlay
		if i%2 == 1 {
			base, _ = (*Overlay)(nil).Merge(read, asked, fetched[:len(fetched)/2], day.Add(-time.Hour))
		}
		a, _ := base.Merge(read, asked, fetched, day)
		b, _ := base.Merge(read, asked, fetched, day)
		var ab, bb bytes.Buffer
		_ = json.NewEncoder(&ab).Encode(a)
		_ = json.NewEncoder(&bb).Encode(b)
		if ab.String() != bb.String() {
			t.Fatalf("case %d: the same update merged twice differs", i)
		}
		path := filepath.Join(t.TempDir(), "o.json")
		if err := a.Write(path); err != nil {
			t.Fatal(err)
		}
		got, err := ReadOverlay(path)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if len(got.Prices) != len(a.Prices) || len(got.Prices) == 0 {
			t.Fatalf("case %d: read %d prices, wrote %d", i, len(got.Prices), len(a.Prices))
		}
		seen := map[string]bool{}
		for j, p := range got.Prices {
			if !p.Hourly.Equal(a.Prices[j].Hourly) || p.InstanceType != a.Prices[j].InstanceType {
				t.Fatalf("case %d: price %d read back as %+v, wrote %+v", i, j, p, a.Prices[j])
			}
			if seen[priceKey(p)] {
				t.Fatalf("case %d: two prices for %s", i, describe(p))
			}
			seen[priceKey(p)] = true
		}
	}
}

// TestOverlayCatalogNamesTheFile: the prices of the file win over the base
// catalog, and the catalog's sources name the file and its date.
func TestOverlayCatalogNamesTheFile(t *testing.T) {
	o, _ := (*Overlay)(nil).Merge(map[Region]Fetch{{fleet.AWS, "us-east-1"}: {Provider: fleet.AWS, Region: "us-east-1", FetchedAt: day}},
		map[Region][]string{{fleet.AWS, "us-east-1"}: {"g5.xlarge"}},
		[]pricing.Price{ovPrice(fleet.AWS, "us-east-1", "g5.xlarge", pricing.OnDemand, "2.5")}, day)
	base := pricing.Overlay(nil, nil)
	cat := o.Catalog(base, "/cache/gpufinops/catalog/overlay.json")
	srcs := cat.Sources()
	if len(srcs) != 1 || srcs[0].Name != "AWS prices from catalog update" || srcs[0].AsOf != "2026-12-06" ||
		!strings.Contains(srcs[0].Origin, "/cache/gpufinops/catalog/overlay.json") || !strings.Contains(srcs[0].Origin, "2026-12-06") {
		t.Fatalf("sources %+v", srcs)
	}
	if (*Overlay)(nil).Catalog(base, "x") != base {
		t.Fatal("a nil overlay changed the catalog")
	}
}

func FuzzParseOverlay(f *testing.F) {
	f.Add([]byte(`{"schemaVersion":"1.0","kind":"CatalogOverlay","updatedAt":"2026-12-06T10:00:00Z","fetches":[{"provider":"aws","region":"us-east-1","fetchedAt":"2026-12-06T10:00:00Z","types":1,"prices":1}],"prices":[{"provider":"aws","region":"us-east-1","instanceType":"g5.xlarge","option":"on-demand","hourly":"1.006","currency":"USD","unit":"hour","source":"AWS Price List","asOf":"2026-12-06"}]}`))
	f.Add([]byte(`{"schemaVersion":"1.0","kind":"CatalogOverlay","prices":[{"provider":"gcp","region":"us-central1","instanceType":"a2-highgpu-1g","option":"spot","hourly":1e400,"currency":"USD","unit":"hour","source":"s","asOf":"2026-02-30"}]}`))
	f.Add([]byte(`{"schemaVersion":"1.9","kind":"CatalogOverlay","fetches":null,"prices":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := ParseOverlay("f.json", b)
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, "catalog overlay f.json: ") || strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("error %q is not one line naming the file", msg)
			}
			return
		}
		seen := map[string]bool{}
		for _, p := range o.Prices {
			if !p.Hourly.IsPositive() || p.Hourly.GreaterThan(maxHourlyDec) || p.Currency != pricing.Currency || p.Unit != pricing.UnitHour || seen[priceKey(p)] {
				t.Fatalf("accepted %+v", p)
			}
			seen[priceKey(p)] = true
		}
		// What was read writes and reads back the same.
		path := filepath.Join(t.TempDir(), "o.json")
		if err := o.Write(path); err != nil {
			t.Fatal(err)
		}
		again, err := ReadOverlay(path)
		if err != nil {
			t.Fatalf("wrote a file it refuses: %v", err)
		}
		if fmt.Sprint(len(again.Prices)) != fmt.Sprint(len(o.Prices)) {
			t.Fatalf("read back %d prices, wrote %d", len(again.Prices), len(o.Prices))
		}
	})
}
