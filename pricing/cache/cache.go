// Package cache keeps live price lists on disk so that a scan reads a cloud's
// price APIs at most once per TTL. Each entry is one JSON file per key
// (provider, region, instance types, kind), written atomically (a temporary
// file renamed into place), so concurrent scans, even in separate processes,
// never see a half-written entry. A file that cannot be read or parsed is
// ignored and replaced on the next write.
//
// Prices served from the cache keep their original AsOf date and gain
// " (cached YYYY-MM-DD)" in their Source, so a report says where each price
// came from. When the price API fails and only a stale entry exists, the stale
// prices are returned with a note instead of the error.
package cache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
)

// DefaultTTL is how long cached prices are used when no TTL is configured.
const DefaultTTL = 24 * time.Hour

// formatVersion is written into every entry; other versions are ignored.
const formatVersion = 1

// subdir is where price entries live under the cache directory.
const subdir = "prices"

// DefaultDir is the cache directory used when none is configured:
// $XDG_CACHE_HOME/gpufinops when XDG_CACHE_HOME is set to an absolute path,
// else os.UserCacheDir()/gpufinops.
func DefaultDir() (string, error) {
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "gpufinops"), nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("price cache: no user cache directory: %w", err)
	}
	return filepath.Join(d, "gpufinops"), nil
}

// Key names one cached price list.
type Key struct {
	Provider fleet.Provider `json:"provider"`
	Region   string         `json:"region"`
	// Types are the instance types asked for; the order and duplicates do
	// not matter.
	Types []string `json:"types"`
	// Kind is what was read, e.g. "on-demand", "spot" or "savings-plans".
	Kind string `json:"kind"`
	// Origin separates prices read from somewhere other than the cloud's
	// own endpoints (a simulator URL); empty for the real cloud.
	Origin string `json:"origin,omitempty"`
}

// normalized returns k with its types sorted and deduplicated.
func (k Key) normalized() Key {
	types := slices.Clone(k.Types)
	slices.Sort(types)
	k.Types = slices.Compact(types)
	if k.Types == nil {
		k.Types = []string{}
	}
	return k
}

func (k Key) equal(o Key) bool {
	k, o = k.normalized(), o.normalized()
	return k.Provider == o.Provider && k.Region == o.Region && k.Kind == o.Kind &&
		k.Origin == o.Origin && slices.Equal(k.Types, o.Types)
}

// String is a short label for notes, e.g. "aws us-east-1 spot (3 types)".
func (k Key) String() string {
	return fmt.Sprintf("%s %s %s (%d types)", k.Provider, k.Region, k.Kind, len(k.normalized().Types))
}

// fileName is readable in its prefix and unique by a hash of the whole key.
func (k Key) fileName() string {
	k = k.normalized()
	b, _ := json.Marshal(k) // a struct of strings always marshals
	sum := sha256.Sum256(b)
	return safeName(string(k.Provider)) + "-" + safeName(k.Region) + "-" + safeName(k.Kind) + "-" +
		hex.EncodeToString(sum[:8]) + ".json"
}

// safeName keeps letters, digits, '-' and '.', replacing anything else.
func safeName(s string) string {
	if s == "" {
		return "none"
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.':
			return r
		}
		return '_'
	}, s)
}

// entryFile is the on-disk form of one entry.
type entryFile struct {
	Version  int             `json:"version"`
	Key      Key             `json:"key"`
	StoredAt time.Time       `json:"storedAt"`
	Prices   []pricing.Price `json:"prices"`
}

// Cache is a directory of price entries with a TTL. A nil *Cache caches
// nothing: Load just fetches. Cache is safe for concurrent use; values over
// the same directory share their per-key locks.
type Cache struct {
	dir string
	ttl time.Duration
	now func() time.Time
}

// New returns a cache in dir (created on the first write). A ttl of zero or
// less means DefaultTTL; a nil now means time.Now.
func New(dir string, ttl time.Duration, now func() time.Time) *Cache {
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	if now == nil {
		now = time.Now
	}
	return &Cache{dir: dir, ttl: ttl, now: now}
}

// Dir is the cache directory.
func (c *Cache) Dir() string { return c.dir }

// TTL is how long an entry stays fresh.
func (c *Cache) TTL() time.Duration { return c.ttl }

func (c *Cache) path(k Key) string { return filepath.Join(c.dir, subdir, k.fileName()) }

// Entry is a cached price list as stored: the prices are unannotated.
type Entry struct {
	Prices   []pricing.Price
	StoredAt time.Time
	// Fresh is true while the entry is younger than the TTL.
	Fresh bool
}

// Get reads an entry. A missing, unreadable or corrupt file, or one written
// for another key or format, is reported as absent.
func (c *Cache) Get(k Key) (Entry, bool) {
	if c == nil {
		return Entry{}, false
	}
	b, err := os.ReadFile(c.path(k))
	if err != nil {
		return Entry{}, false
	}
	var f entryFile
	if err := json.Unmarshal(b, &f); err != nil || f.Version != formatVersion || !f.Key.equal(k) || f.StoredAt.IsZero() {
		return Entry{}, false
	}
	age := c.now().Sub(f.StoredAt)
	return Entry{Prices: f.Prices, StoredAt: f.StoredAt, Fresh: age >= 0 && age < c.ttl}, true
}

// Put stores prices under k, replacing any entry atomically. An empty list is
// stored too: "no prices" is an answer worth remembering.
func (c *Cache) Put(k Key, prices []pricing.Price) error {
	if c == nil {
		return nil
	}
	if prices == nil {
		prices = []pricing.Price{}
	}
	b, err := json.MarshalIndent(entryFile{Version: formatVersion, Key: k.normalized(), StoredAt: c.now().UTC(), Prices: prices}, "", "  ")
	if err != nil {
		return fmt.Errorf("price cache: encoding %s: %w", k, err)
	}
	if err := writeAtomic(c.path(k), append(b, '\n')); err != nil {
		return fmt.Errorf("price cache: writing %s: %w", k, err)
	}
	return nil
}

// Result is what Load returns: the prices and where they came from.
type Result struct {
	Prices []pricing.Price
	// Cached is true when the prices come from the cache (fresh or stale).
	Cached bool
	// Stale is true when a refresh failed and expired prices were used.
	Stale bool
	// Notes say what went wrong that the caller should pass on: a refresh
	// that failed, an entry that could not be saved.
	Notes []string
}

// Load returns the prices for k: a fresh entry as it is; otherwise it calls
// fetch and stores what it returns. When fetch fails and an expired entry
// exists, the expired prices are returned (Stale, with a note) instead of
// the error. Concurrent loads of one key in this process wait for each other,
// so the prices are fetched once.
func (c *Cache) Load(ctx context.Context, k Key, fetch func(context.Context) ([]pricing.Price, error)) (Result, error) {
	if c == nil {
		prices, err := fetch(ctx)
		return Result{Prices: prices}, err
	}
	unlock, err := lockKey(ctx, c.path(k))
	if err != nil {
		return Result{}, err
	}
	defer unlock()

	old, found := c.Get(k)
	if found && old.Fresh {
		return Result{Prices: annotate(old.Prices, old.StoredAt, ""), Cached: true}, nil
	}
	prices, err := fetch(ctx)
	if err != nil {
		if found && ctx.Err() == nil {
			date := old.StoredAt.UTC().Format(time.DateOnly)
			return Result{
				Prices: annotate(old.Prices, old.StoredAt, "stale, refresh failed"),
				Cached: true,
				Stale:  true,
				Notes:  []string{fmt.Sprintf("%s: refresh failed (%v); using prices cached %s", k, firstLine(err), date)},
			}, nil
		}
		return Result{}, err
	}
	res := Result{Prices: prices}
	if err := c.Put(k, prices); err != nil {
		res.Notes = append(res.Notes, err.Error())
	}
	return res, nil
}

// annotate copies prices with " (cached DATE)" or " (cached DATE, note)"
// appended to each Source.
func annotate(prices []pricing.Price, storedAt time.Time, note string) []pricing.Price {
	tag := " (cached " + storedAt.UTC().Format(time.DateOnly)
	if note != "" {
		tag += ", " + note
	}
	tag += ")"
	out := make([]pricing.Price, len(prices))
	for i, p := range prices {
		p.Source += tag
		if p.History != nil {
			h := *p.History
			p.History = &h
		}
		out[i] = p
	}
	return out
}

func firstLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// locks holds one lock per entry path for the whole process.
var locks sync.Map // path → chan struct{} (capacity 1)

// lockKey takes the path's lock, giving up when ctx ends.
func lockKey(ctx context.Context, path string) (unlock func(), err error) {
	v, _ := locks.LoadOrStore(path, make(chan struct{}, 1))
	ch := v.(chan struct{})
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
