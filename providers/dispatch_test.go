package providers

import (
	"context"
	"fmt"
	"math/rand"
	"slices"
	"sync"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// TestDispatchOrderRoundRobin: on random scope lists (accounts
// interleaved or not, profiles and providers telling accounts apart), the
// order is a permutation that keeps each account's scopes in their order,
// and no account starts its (k+1)-th scope before every account with k+1
// scopes has started its k-th.
func TestDispatchOrderRoundRobin(t *testing.T) {
	rng := rand.New(rand.NewSource(16))
	for trial := 0; trial < 500; trial++ {
		var scopes []Scope
		for n := rng.Intn(40); n > 0; n-- {
			scopes = append(scopes, Scope{
				Provider: []fleet.Provider{fleet.AWS, fleet.GCP}[rng.Intn(2)],
				Account:  fmt.Sprint("acct-", rng.Intn(5)),
				Profile:  []string{"", "role-a"}[rng.Intn(2)],
				Region:   fmt.Sprint("region-", rng.Intn(100)),
			})
		}
		if rng.Intn(2) == 0 {
			slices.SortStableFunc(scopes, func(a, b Scope) int { return cmpStrings(a.Account, b.Account) })
		}
		key := func(s Scope) string { return string(s.Provider) + "/" + s.Account + "/" + s.Profile }
		total := map[string]int{}
		for _, s := range scopes {
			total[key(s)]++
		}
		order := dispatchOrder(scopes)
		if got := slices.Sorted(slices.Values(order)); !slices.Equal(got, seq(len(scopes))) {
			t.Fatalf("trial %d: order %v is not a permutation of %d scopes", trial, order, len(scopes))
		}
		started := map[string]int{}
		last := map[string]int{}
		for _, i := range order {
			k := key(scopes[i])
			if j, ok := last[k]; ok && j > i {
				t.Fatalf("trial %d: %s's scope %d started after its scope %d", trial, k, i, j)
			}
			last[k] = i
			for other, n := range total {
				if other != k && n >= started[k] && started[other] < started[k] {
					t.Fatalf("trial %d: %s started its scope #%d before %s started its #%d", trial, k, started[k]+1, other, started[k])
				}
			}
			started[k]++
		}
	}
}

func cmpStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// orderCloud records the order its scopes are listed in.
type orderCloud struct {
	fakeCloud
	mu     sync.Mutex
	listed []Scope
}

func (o *orderCloud) ListGPUInstances(ctx context.Context, s Scope) ([]fleet.Instance, error) {
	o.mu.Lock()
	o.listed = append(o.listed, s)
	o.mu.Unlock()
	return o.fakeCloud.ListGPUInstances(ctx, s)
}

// TestCollectStartsEveryAccountFirst: with one scope at a time, three
// accounts of four regions each, listed account by account, are scanned
// one region of each account in turn, so no account's shared reads wait
// behind another's regions; every scope is still scanned once.
func TestCollectStartsEveryAccountFirst(t *testing.T) {
	c := &orderCloud{fakeCloud: fakeCloud{instances: map[string][]fleet.Instance{}}}
	for _, a := range []string{"111111111111", "222222222222", "333333333333"} {
		for r := range 4 {
			c.scopes = append(c.scopes, Scope{Provider: fleet.AWS, Account: a, Region: fmt.Sprint("region-", r)})
		}
	}
	if _, err := Collect(context.Background(), c, CollectOptions{Concurrency: 1}); err != nil {
		t.Fatal(err)
	}
	if len(c.listed) != len(c.scopes) {
		t.Fatalf("listed %d scopes of %d", len(c.listed), len(c.scopes))
	}
	for i, s := range c.listed {
		want := c.scopes[(i%3)*4+i/3]
		if s != want {
			t.Fatalf("scope %d listed was %v, want %v (all: %v)", i, s, want, c.listed)
		}
	}
}
