package cache

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
)

// The overlay file: the list prices `gpufinops catalog update` fetched,
// which every command lays over the embedded catalog (pricing.OverlayFrom).
const (
	// OverlayKind and OverlayVersion head the file.
	OverlayKind    = "CatalogOverlay"
	OverlayVersion = "1.0"
	// overlayDir and overlayName place it under the cache directory.
	overlayDir  = "catalog"
	overlayName = "overlay.json"
	// MaxOverlayBytes bounds the file read: a full three-cloud update is
	// about 4 MB.
	MaxOverlayBytes = 256 << 20
	// maxHourly bounds an overlay price as a fleet file's hourlyPrice is
	// bounded: far above any instance's list price.
	maxHourly = fleet.MaxHourlyPrice
)

var maxHourlyDec = decimal.NewFromInt(maxHourly)

// OverlayPath is where the overlay file lives under the cache directory dir.
func OverlayPath(dir string) string { return filepath.Join(dir, overlayDir, overlayName) }

// Overlay is the overlay file: the prices fetched from the clouds' price
// APIs and, for each provider and region read, when and how much.
type Overlay struct {
	// SchemaVersion is "major.minor"; readers take major 1.
	SchemaVersion string `json:"schemaVersion"`
	// Kind is CatalogOverlay.
	Kind string `json:"kind"`
	// UpdatedAt is when an update last wrote the file (UTC).
	UpdatedAt time.Time `json:"updatedAt"`
	// Fetches record each provider and region read, sorted by provider
	// and region; a region read again replaces its record.
	Fetches []Fetch `json:"fetches"`
	// Prices are the fetched prices, sorted by provider, region, type and
	// option; each keeps its source and date.
	Prices []pricing.Price `json:"prices"`
}

// Fetch records one provider and region read by an update.
type Fetch struct {
	Provider fleet.Provider `json:"provider"`
	Region   string         `json:"region"`
	// FetchedAt is when the region was read (UTC).
	FetchedAt time.Time `json:"fetchedAt"`
	// Types is how many instance types were asked for; Prices how many
	// prices the price APIs answered.
	Types  int `json:"types"`
	Prices int `json:"prices"`
}

// NewOverlay is an empty overlay file.
func NewOverlay() *Overlay {
	return &Overlay{SchemaVersion: OverlayVersion, Kind: OverlayKind, Fetches: []Fetch{}, Prices: []pricing.Price{}}
}

// ReadOverlay reads the overlay file at path. A missing file is (nil, nil);
// a file that cannot be read or is not a valid overlay is a one-line error
// naming the file.
func ReadOverlay(path string) (*Overlay, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("catalog overlay %s: %w", path, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxOverlayBytes+1))
	if err != nil {
		return nil, fmt.Errorf("catalog overlay %s: %w", path, err)
	}
	return ParseOverlay(path, b)
}

// ParseOverlay decodes and checks an overlay file's bytes; name is the file
// named in errors. Every price must be an hourly USD price above 0 and at
// most fleet.MaxHourlyPrice of a known provider and option, with a region, type and
// source of printable text and a YYYY-MM-DD date, and no two prices may
// share a provider, region, type and option.
func ParseOverlay(name string, b []byte) (*Overlay, error) {
	fail := func(format string, a ...any) error {
		return fmt.Errorf("catalog overlay %s: %s (run 'gpufinops catalog update' again, or delete the file)", name, fmt.Sprintf(format, a...))
	}
	if len(b) > MaxOverlayBytes {
		return nil, fail("larger than %d MiB", MaxOverlayBytes>>20)
	}
	var o Overlay
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		return nil, fail("not an overlay file: %s", oneLine(err.Error()))
	}
	if dec.More() {
		return nil, fail("not an overlay file: data after the document")
	}
	if o.Kind != OverlayKind {
		return nil, fail("kind is %q, want %q", clip(o.Kind), OverlayKind)
	}
	if major, _, _ := strings.Cut(o.SchemaVersion, "."); major != "1" {
		return nil, fail("schemaVersion %q is not one this gpufinops reads (1.x)", clip(o.SchemaVersion))
	}
	if o.Fetches == nil {
		o.Fetches = []Fetch{}
	}
	if o.Prices == nil {
		o.Prices = []pricing.Price{}
	}
	for i, f := range o.Fetches {
		if !f.Provider.Valid() {
			return nil, fail("fetch %d: unknown provider %q", i+1, clip(string(f.Provider)))
		}
		if !name1(f.Region) {
			return nil, fail("fetch %d: region %q is not a region name", i+1, clip(f.Region))
		}
		if f.Types < 0 || f.Prices < 0 {
			return nil, fail("fetch %d (%s %s): a negative count", i+1, f.Provider, f.Region)
		}
	}
	seen := map[string]int{}
	for i, p := range o.Prices {
		if err := checkPrice(p); err != nil {
			return nil, fail("price %d: %v", i+1, err)
		}
		k := priceKey(p)
		if j, dup := seen[k]; dup {
			return nil, fail("price %d (%s) repeats price %d", i+1, describe(p), j)
		}
		seen[k] = i + 1
	}
	return &o, nil
}

// checkPrice says what is wrong with one overlay price.
func checkPrice(p pricing.Price) error {
	switch {
	case !p.Provider.Valid():
		return fmt.Errorf("unknown provider %q", clip(string(p.Provider)))
	case !name1(p.Region):
		return fmt.Errorf("region %q is not a region name", clip(p.Region))
	case !name1(p.InstanceType):
		return fmt.Errorf("instance type %q is not a type name", clip(p.InstanceType))
	}
	switch p.Option {
	case pricing.OnDemand, pricing.Spot, pricing.SavingsPlan1y, pricing.SavingsPlan3y:
	default:
		return fmt.Errorf("%s: unknown option %q", describe(p), clip(string(p.Option)))
	}
	switch {
	case p.Currency != pricing.Currency:
		return fmt.Errorf("%s: currency %q, want %s", describe(p), clip(p.Currency), pricing.Currency)
	case p.Unit != pricing.UnitHour:
		return fmt.Errorf("%s: unit %q, want %s", describe(p), clip(p.Unit), pricing.UnitHour)
	case !p.Hourly.IsPositive():
		return fmt.Errorf("%s: hourly %s is not above 0", describe(p), p.Hourly.String())
	case p.Hourly.GreaterThan(maxHourlyDec):
		return fmt.Errorf("%s: hourly %s is beyond $%d an hour", describe(p), clip(p.Hourly.String()), maxHourly)
	case strings.TrimSpace(p.Source) == "" || !printable(p.Source):
		return fmt.Errorf("%s: no source, or one that is not printable text", describe(p))
	}
	if _, err := time.Parse(time.DateOnly, p.AsOf); err != nil || len(p.AsOf) != len(time.DateOnly) {
		return fmt.Errorf("%s: asOf %q is not a date (YYYY-MM-DD)", describe(p), clip(p.AsOf))
	}
	if p.Zone != "" && !name1(p.Zone) {
		return fmt.Errorf("%s: zone %q is not a zone name", describe(p), clip(p.Zone))
	}
	return nil
}

// name1 is a region, zone or type name: 1 to 80 characters, no space or
// control character.
func name1(s string) bool {
	if s == "" || len(s) > 80 {
		return false
	}
	for _, r := range s {
		if unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

func printable(s string) bool {
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return len(s) <= 300
}

// clip keeps a quoted value in an error short.
func clip(s string) string {
	if r := []rune(s); len(r) > 40 {
		return string(r[:40]) + "…"
	}
	return s
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func describe(p pricing.Price) string {
	return fmt.Sprintf("%s %s %s %s", p.Provider, clip(p.Region), clip(p.InstanceType), clip(string(p.Option)))
}

func priceKey(p pricing.Price) string {
	return string(p.Provider) + "\x00" + strings.ToLower(p.Region) + "\x00" + strings.ToLower(p.InstanceType) + "\x00" + string(p.Option)
}

// Region names one provider's region, the unit an update reads and
// replaces.
type Region struct {
	Provider fleet.Provider
	Region   string
}

// Merge lays one update's results over o (nil: an empty file) and returns
// the new file: every region in read (each with its record) loses its old
// prices of the types asked there and takes the fetched ones; other
// regions and types keep theirs. A fetched price the file could not hold
// (one ParseOverlay refuses) is left out, with a note saying why. Prices
// are sorted, so the same update merged twice gives the same file.
func (o *Overlay) Merge(read map[Region]Fetch, asked map[Region][]string, fetched []pricing.Price, now time.Time) (*Overlay, []string) {
	var notes []string
	out := NewOverlay()
	out.UpdatedAt = now.UTC().Truncate(time.Second)
	if o != nil {
		for _, f := range o.Fetches {
			if _, again := read[Region{f.Provider, f.Region}]; !again {
				out.Fetches = append(out.Fetches, f)
			}
		}
		for _, p := range o.Prices {
			r := Region{p.Provider, p.Region}
			if _, again := read[r]; again && slices.ContainsFunc(asked[r], func(t string) bool { return strings.EqualFold(t, p.InstanceType) }) {
				continue
			}
			out.Prices = append(out.Prices, p)
		}
	}
	for _, f := range read {
		f.FetchedAt = f.FetchedAt.UTC().Truncate(time.Second)
		out.Fetches = append(out.Fetches, f)
	}
	for _, p := range fetched {
		if _, ok := read[Region{p.Provider, p.Region}]; !ok {
			continue
		}
		if err := checkPrice(p); err != nil {
			notes = append(notes, "left out a fetched price: "+err.Error())
			continue
		}
		out.Prices = append(out.Prices, p)
	}
	slices.SortFunc(out.Fetches, func(a, b Fetch) int {
		return cmp.Or(cmp.Compare(a.Provider, b.Provider), cmp.Compare(a.Region, b.Region))
	})
	out.Prices = SortPrices(out.Prices)
	return out, notes
}

var optionRank = map[pricing.Option]int{pricing.OnDemand: 0, pricing.Spot: 1, pricing.SavingsPlan1y: 2, pricing.SavingsPlan3y: 3}

// SortPrices sorts prices by provider, region, type, option and zone, and
// keeps one price per provider, region, type and option: the newest, then
// the cheapest.
func SortPrices(ps []pricing.Price) []pricing.Price {
	slices.SortStableFunc(ps, func(a, b pricing.Price) int {
		return cmp.Or(
			cmp.Compare(a.Provider, b.Provider),
			cmp.Compare(strings.ToLower(a.Region), strings.ToLower(b.Region)),
			cmp.Compare(strings.ToLower(a.InstanceType), strings.ToLower(b.InstanceType)),
			cmp.Compare(optionRank[a.Option], optionRank[b.Option]),
			cmp.Compare(b.AsOf, a.AsOf),
			a.Hourly.Cmp(b.Hourly),
			cmp.Compare(a.Zone, b.Zone),
		)
	})
	return slices.CompactFunc(ps, func(a, b pricing.Price) bool { return priceKey(a) == priceKey(b) })
}

// Write stores the overlay at path atomically (a temporary file in the same
// folder renamed into place), creating the folder.
func (o *Overlay) Write(path string) error {
	b, err := json.MarshalIndent(o, "", "  ")
	if err != nil {
		return fmt.Errorf("catalog overlay %s: %w", path, err)
	}
	if err := writeAtomic(path, append(b, '\n')); err != nil {
		return fmt.Errorf("catalog overlay %s: %w", path, err)
	}
	return nil
}

// writeAtomic writes b to path through a temporary file renamed into place.
func writeAtomic(path string, b []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".tmp-*.json")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	return nil
}

// Catalog lays the overlay's prices over base, its Sources naming the file
// and the date of its last update, each price's Source gaining
// " (catalog update YYYY-MM-DD)" with the date it was fetched. A nil
// overlay returns base.
func (o *Overlay) Catalog(base pricing.Catalog, path string) pricing.Catalog {
	return o.CatalogAs(base, pricing.OverlaySource{
		Label:  "prices from catalog update",
		Origin: fmt.Sprintf("the cloud's price APIs, read by 'gpufinops catalog update' (last run %s), kept in %s", o.updated(), path),
	}, "catalog update")
}

// CatalogAs is Catalog with the Sources entries named by src and each
// price's Source gaining " (tag YYYY-MM-DD)".
func (o *Overlay) CatalogAs(base pricing.Catalog, src pricing.OverlaySource, tag string) pricing.Catalog {
	if o == nil || len(o.Prices) == 0 {
		return base
	}
	prices := make([]pricing.Price, len(o.Prices))
	for i, p := range o.Prices {
		p.Source += " (" + tag + " " + p.AsOf + ")"
		prices[i] = p
	}
	return pricing.OverlayFrom(base, prices, src)
}

func (o *Overlay) updated() string {
	if o == nil {
		return ""
	}
	return o.UpdatedAt.UTC().Format(time.DateOnly)
}
