package providers

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
)

// MaxShards bounds the N of --shard I/N.
const MaxShards = 10000

// Shard is one of Count disjoint slices of the scopes a scan lists; Index
// counts from 1. The zero Shard is the whole scan.
type Shard struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

// ParseShard reads "I/N" with 1 ≤ I ≤ N ≤ MaxShards.
func ParseShard(s string) (Shard, error) {
	is, ns, ok := strings.Cut(strings.TrimSpace(s), "/")
	i, err1 := strconv.Atoi(is)
	n, err2 := strconv.Atoi(ns)
	if !ok || err1 != nil || err2 != nil || strings.ContainsAny(is+ns, "+- ") {
		return Shard{}, fmt.Errorf("%q is not I/N, e.g. 1/4", s)
	}
	if n < 1 || n > MaxShards {
		return Shard{}, fmt.Errorf("%q: N must be between 1 and %d", s, MaxShards)
	}
	if i < 1 || i > n {
		return Shard{}, fmt.Errorf("%q: I must be between 1 and %d", s, n)
	}
	return Shard{Index: i, Count: n}, nil
}

// IsZero reports whether sh is the whole scan.
func (sh Shard) IsZero() bool { return sh.Count == 0 }

// String is "I/N", "" for the whole scan.
func (sh Shard) String() string {
	if sh.IsZero() {
		return ""
	}
	return strconv.Itoa(sh.Index) + "/" + strconv.Itoa(sh.Count)
}

// Set implements pflag.Value.
func (sh *Shard) Set(s string) error {
	v, err := ParseShard(s)
	if err != nil {
		return err
	}
	*sh = v
	return nil
}

// Type implements pflag.Value.
func (sh *Shard) Type() string { return "I/N" }

// Owns reports whether the scope falls in sh: a stable hash of its provider
// and region, whatever order the scopes are listed in, so that the shards
// 1/N … N/N are disjoint and cover every scope. The account is left out of
// the hash: every account's scope of one region falls in one shard, because
// the engine plans across accounts within a region (a commitment pool, a
// Savings Plan over accounts, committed use discounts over a billing
// account's projects) and the scan reads a region's live prices for the types
// of all its scopes at once; a shard holding only some of a region's
// accounts would plan and price them otherwise than the whole scan. Scopes
// without a region (a whole account or subscription) fall in one shard per
// provider. The zero Shard owns every scope.
func (sh Shard) Owns(s Scope) bool {
	if sh.Count <= 1 {
		return true
	}
	h := fnv.New64a()
	h.Write([]byte(string(s.Provider) + "\x00" + strings.ToLower(s.Region)))
	return h.Sum64()%uint64(sh.Count) == uint64(sh.Index-1)
}
