package simkit

import (
	"fmt"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

func TestPageTokens(t *testing.T) {
	q := Fingerprint("DescribeInstances", "Filter.1.Name=instance-type")
	tok := EncodeToken(40, q)
	if off, ok := DecodeToken(tok, q); !ok || off != 40 {
		t.Errorf("round trip: %d %v", off, ok)
	}
	if off, ok := DecodeToken("", q); !ok || off != 0 {
		t.Errorf("no token: %d %v", off, ok)
	}
	other := Fingerprint("DescribeInstances", "Filter.1.Name=tag:team")
	if _, ok := DecodeToken(tok, other); ok {
		t.Error("a token continued another query")
	}
	for _, bad := range []string{"%%%", "bm90IGpzb24", EncodeToken(-1, q)} {
		if _, ok := DecodeToken(bad, q); ok {
			t.Errorf("token %q accepted", bad)
		}
	}
	if Fingerprint("a", "b") == Fingerprint("ab") || Fingerprint("a", "b") != Fingerprint("a", "b") {
		t.Error("fingerprints do not keep parts apart, or are not stable")
	}
}

func TestPageWalksEveryItemOnce(t *testing.T) {
	for _, c := range []struct{ n, size int }{{0, 5}, {1, 5}, {5, 5}, {6, 5}, {1001, 100}, {17, 1}} {
		q := Fingerprint("list", "x")
		seen := make([]int, c.n)
		tok, pages := "", 0
		for {
			off, ok := DecodeToken(tok, q)
			if !ok {
				t.Fatalf("n=%d: own token refused", c.n)
			}
			from, to, next := Page(c.n, off, c.size)
			pages++
			if to-from > c.size {
				t.Fatalf("n=%d: page of %d", c.n, to-from)
			}
			for i := from; i < to; i++ {
				seen[i]++
			}
			if next < 0 {
				break
			}
			tok = EncodeToken(next, q)
		}
		for i, k := range seen {
			if k != 1 {
				t.Fatalf("n=%d size=%d: item %d seen %d times", c.n, c.size, i, k)
			}
		}
		if want := max((c.n+c.size-1)/c.size, 1); pages != want {
			t.Errorf("n=%d size=%d: %d pages, want %d", c.n, c.size, pages, want)
		}
	}
	if from, to, next := Page(10, 50, 5); from != 10 || to != 10 || next != -1 {
		t.Errorf("offset past the end: %d %d %d", from, to, next)
	}
}

func TestInventoryScopesAndState(t *testing.T) {
	f := &fleet.Fleet{Instances: []fleet.Instance{
		{ID: "a", Provider: fleet.AWS, Region: "us-east-1", State: fleet.Running},
		{ID: "b", Provider: fleet.AWS, Region: "eu-west-1", Account: "222", State: fleet.Stopped},
		{ID: "vm", Provider: fleet.Azure, Region: "eastus", State: fleet.Running},
		{ID: "c", Provider: fleet.AWS, Region: "us-east-1", Account: "222", State: fleet.Running,
			Tags: map[string]string{"team": "x"}, Workload: &fleet.Workload{Type: fleet.Training}},
	}}
	v := NewInventory(f, fleet.AWS, "111")
	if got := v.Scopes(); len(got) != 2 || got[0] != "eu-west-1" || got[1] != "us-east-1" {
		t.Errorf("scopes %v", got)
	}
	if n := len(v.Instances()); n != 3 {
		t.Errorf("%d AWS instances", n)
	}
	east := v.InScope("us-east-1", "111")
	if len(east) != 1 || east[0].ID != "a" || east[0].Account != "111" || east[0].State != "running" {
		t.Errorf("us-east-1 for 111: %+v", east)
	}
	if all := v.InScope("us-east-1", ""); len(all) != 2 || all[1].ID != "c" {
		t.Errorf("us-east-1 for every account: %+v", all)
	}
	if c := v.InScope("us-east-1", "222"); len(c) != 1 || c[0].Tags["team"] != "x" || c[0].Tags[fleet.TagWorkloadType] == "" {
		t.Errorf("workload travels as tags: %+v", c[0].Tags)
	}
	if f.Instances[3].Tags[fleet.TagWorkloadType] != "" {
		t.Error("the fleet's own tags were changed")
	}
	if prev, ok := v.SetState("a", "stopped"); !ok || prev != "running" || v.StateOf("a") != "stopped" {
		t.Errorf("SetState: %q %v, now %q", prev, ok, v.StateOf("a"))
	}
	if _, ok := v.SetState("vm", "stopped"); ok {
		t.Error("another cloud's instance was stopped")
	}
	st := v.State()
	if len(st) != 3 || st[0] != (InstanceState{"aws", "a", "stopped"}) || st[1].State != "stopped" {
		t.Errorf("state %+v", st)
	}
	if got := v.InScope("us-east-1", "111"); got[0].State != "stopped" {
		t.Errorf("scope view after the stop: %+v", got)
	}
}

// FuzzDecodeToken: any token decodes without panicking, only to an offset a
// token of that query carries, and every encoded offset comes back.
func FuzzDecodeToken(f *testing.F) {
	q := Fingerprint("q")
	f.Add(EncodeToken(5, q), 5)
	f.Add("", 0)
	f.Add("eyJvIjotMSwicSI6IngifQ", 1)
	f.Fuzz(func(t *testing.T, tok string, off int) {
		if got, ok := DecodeToken(tok, q); ok && got < 0 {
			t.Fatalf("token %q decoded to %d", tok, got)
		}
		if off < 0 {
			return
		}
		if got, ok := DecodeToken(EncodeToken(off, q), q); !ok || got != off {
			t.Fatalf("offset %d came back as %d, %v", off, got, ok)
		}
		if _, ok := DecodeToken(EncodeToken(off, q), Fingerprint("other")); ok {
			t.Fatalf("offset %d's token continued another query", off)
		}
	})
}

func TestPageProblemsCatchBrokenTokens(t *testing.T) {
	same := "same"
	if _, _, p := PageProblems(func(*string) (int, *string, error) { return 1, &same, nil }, 10); len(p) == 0 {
		t.Error("a token that repeats passes")
	}
	empty := ""
	if _, _, p := PageProblems(func(*string) (int, *string, error) { return 1, &empty, nil }, 10); len(p) == 0 {
		t.Error("an empty token passes")
	}
	n := 0
	endless := func(*string) (int, *string, error) {
		n++
		tok := fmt.Sprint(n)
		return 1, &tok, nil
	}
	if _, _, p := PageProblems(endless, 10); len(p) == 0 {
		t.Error("endless pages pass")
	}
	pages := []string{"a", "b"}
	i := 0
	sound := func(*string) (int, *string, error) {
		if i == len(pages) {
			return 2, nil, nil
		}
		i++
		return 2, &pages[i-1], nil
	}
	if items, np, p := PageProblems(sound, 10); len(p) > 0 || items != 6 || np != 3 {
		t.Errorf("sound pages: %d items, %d pages, %v", items, np, p)
	}
}
