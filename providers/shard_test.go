package providers

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// TestShardsPartition: for random scope sets and N, every scope falls in
// exactly one of the shards 1/N … N/N.
func TestShardsPartition(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	clouds := []fleet.Provider{fleet.AWS, fleet.Azure, fleet.GCP}
	for range 200 {
		n := 1 + r.IntN(12)
		var scopes []Scope
		for range r.IntN(300) {
			s := Scope{Provider: clouds[r.IntN(3)], Account: fmt.Sprintf("acct-%d", r.IntN(50))}
			if r.IntN(2) == 0 {
				s.Region = fmt.Sprintf("region-%d", r.IntN(20))
			}
			scopes = append(scopes, s)
		}
		for _, s := range scopes {
			owners := 0
			for i := 1; i <= n; i++ {
				if (Shard{Index: i, Count: n}).Owns(s) {
					owners++
				}
			}
			if owners != 1 {
				t.Fatalf("%s is in %d of %d shards", s, owners, n)
			}
		}
	}
	if !(Shard{}).Owns(Scope{Provider: fleet.AWS}) {
		t.Error("the zero shard owns nothing")
	}
}

func TestParseShard(t *testing.T) {
	for in, want := range map[string]Shard{"1/1": {1, 1}, "2/3": {2, 3}, " 4/4 ": {4, 4}} {
		if got, err := ParseShard(in); err != nil || got != want {
			t.Errorf("%q: %v, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "1", "0/3", "4/3", "1/0", "-1/3", "+1/3", "a/b", "1/2/3", "1 /3", "1/10001"} {
		if _, err := ParseShard(in); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}

// FuzzParseShard: a parsed shard prints back to a string that parses to it,
// and is always in range.
func FuzzParseShard(f *testing.F) {
	for _, s := range []string{"1/1", "3/8", "0/1", "1/0", "x", "9999999999999999999/1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sh, err := ParseShard(s)
		if err != nil {
			return
		}
		if sh.Index < 1 || sh.Index > sh.Count || sh.Count > MaxShards {
			t.Fatalf("%q parsed to %+v", s, sh)
		}
		back, err := ParseShard(sh.String())
		if err != nil || back != sh {
			t.Fatalf("%q → %v → %v, %v", s, sh, back, err)
		}
	})
}

// TestShardKeepsARegionsAccountsTogether: for random N, the scopes of every
// account in one provider's region fall in one shard, so the engine's
// cross-account plans (commitment pools) and a region's live prices are
// whole in one part, as in the whole scan.
func TestShardKeepsARegionsAccountsTogether(t *testing.T) {
	r := rand.New(rand.NewPCG(34, 7))
	clouds := []fleet.Provider{fleet.AWS, fleet.Azure, fleet.GCP}
	for range 200 {
		n := 2 + r.IntN(12)
		p, region := clouds[r.IntN(3)], fmt.Sprintf("region-%d", r.IntN(20))
		if r.IntN(5) == 0 {
			region = ""
		}
		shardOf := func(s Scope) int {
			for i := 1; i <= n; i++ {
				if (Shard{Index: i, Count: n}).Owns(s) {
					return i
				}
			}
			return 0
		}
		want := shardOf(Scope{Provider: p, Account: "acct-0", Region: region})
		for range 20 {
			s := Scope{Provider: p, Account: fmt.Sprintf("acct-%d", r.IntN(1000)), Region: region}
			if got := shardOf(s); got != want {
				t.Fatalf("%s is in shard %d/%d, acct-0's scope of the region in %d", s, got, n, want)
			}
		}
	}
}
