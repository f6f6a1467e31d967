package idlestop

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
)

// managedCand is cand as an item of a managed AI service.
func managedCand(id string, svc fleet.ManagedService, kind fleet.ManagedKind, mods ...func(*Candidate)) Candidate {
	return cand(id, append([]func(*Candidate){func(c *Candidate) {
		c.Instance.Managed = &fleet.Managed{Service: svc, Kind: kind, Replicas: &fleet.Replicas{Current: 1}}
		c.Instance.Provider = providerOf(svc)
		c.Scope.Provider = c.Instance.Provider
	}}, mods...)...)
}

func providerOf(svc fleet.ManagedService) fleet.Provider {
	switch svc {
	case fleet.VertexAI:
		return fleet.GCP
	case fleet.AzureML:
		return fleet.Azure
	}
	return fleet.AWS
}

func ownerOf(svc fleet.ManagedService) fleet.OwnerKind {
	switch svc {
	case fleet.VertexAI:
		return fleet.OwnerVertexAI
	case fleet.AzureML:
		return fleet.OwnerAzureML
	}
	return fleet.OwnerSageMaker
}

// Every kind of every service, in each situation: only an idle notebook
// that nothing else protects is stopped; every other kind is kept with the
// reason that names its kind, whatever its use or tags.
func TestDecideManagedKinds(t *testing.T) {
	type situation struct {
		name string
		mod  func(*Candidate)
		// want is the notebook's reason; the other kinds always get
		// ReasonManagedKind.
		want Reason
	}
	situations := []situation{
		{"idle", func(*Candidate) {}, ReasonIdle},
		{"in use", func(c *Candidate) { c.Instance.Utilization.Samples = samples(30, 64) }, ReasonBusy},
		{"recent activity", func(c *Candidate) {
			c.Instance.Utilization.Samples = samples(30, 1)
			c.Instance.Utilization.Samples[29].GPU = fleet.PerGPU{40}
		}, ReasonBusy},
		{"exempt tag", withTag("auto-shutdown-exempt", "yes"), ReasonExempt},
		{"production tag", withTag("environment", "production"), ReasonProduction},
		{"prod spelled otherwise", withTag("Env", "PRD"), ReasonProduction},
		{"no utilization", func(c *Candidate) { c.Instance.Utilization = nil }, ReasonNoMetrics},
		{"summary only", func(c *Candidate) {
			c.Instance.Utilization.Samples = nil
			c.Instance.Utilization.GPU = &fleet.Stats{Avg: 0, P95: 0, Max: 0}
		}, ReasonNoMetrics},
		{"partial coverage", func(c *Candidate) { c.Instance.Utilization.Samples = samples(10, 1) }, ReasonPartialMetrics},
		{"owned by a scheduler", withTag("slurm-cluster-name", "hpc"), ReasonManaged},
		{"owned by ray", withTag("ray-cluster-name", "rc"), ReasonManaged},
		{"owned by another controller", func(c *Candidate) {
			c.Instance.ManagedBy = &fleet.ManagedBy{Kind: fleet.OwnerDatabricks, Name: "ws"}
		}, ReasonManaged},
		{"stopped", func(c *Candidate) { c.Instance.State = fleet.Stopped }, ReasonAlreadyStopped},
	}
	for _, svc := range fleet.ManagedServices {
		// The service's own owner signal does not protect its notebook.
		situations := append(situations[:len(situations):len(situations)], situation{"owned by its own service", func(c *Candidate) {
			c.Instance.ManagedBy = &fleet.ManagedBy{Kind: ownerOf(svc)}
		}, ReasonIdle})
		for _, kind := range fleet.ManagedKinds {
			for _, s := range situations {
				t.Run(fmt.Sprintf("%s/%s/%s", svc, kind, s.name), func(t *testing.T) {
					c := managedCand("item", svc, kind, s.mod)
					d := Decide([]Candidate{c}, now, DefaultPolicy())[0]
					want := s.want
					if kind != fleet.KindNotebook {
						want = ReasonManagedKind
					}
					if d.Reason != want {
						t.Fatalf("%s %s: %s, want %s", d.Decision, d.Reason, d.Message, want)
					}
					if (d.Decision == Stop) != (want == ReasonIdle) {
						t.Fatalf("decision %s for reason %s", d.Decision, d.Reason)
					}
					if d.Service != svc || d.ManagedKind != kind {
						t.Fatalf("decision says %s %s", d.Service, d.ManagedKind)
					}
					if want == ReasonManagedKind && !strings.HasPrefix(d.Message, strings.ReplaceAll(string(kind), "-", " ")+":") {
						t.Fatalf("message %q does not name the kind", d.Message)
					}
					if d.Decision == Stop && !d.MonthlySavings.IsPositive() {
						t.Fatalf("an idle notebook stopped with no saving")
					}
				})
			}
		}
	}
}

// The owner signals each service's machines carry: a notebook whose tags
// name its own service is stopped; one whose tags name another service or
// controller is kept.
func TestManagedNotebookOwnerTags(t *testing.T) {
	cases := []struct {
		svc      fleet.ManagedService
		tag, val string
		want     Reason
	}{
		{fleet.SageMaker, "sagemaker:domain-arn", "arn:aws:sagemaker:us-east-1:1:domain/d-1", ReasonIdle},
		{fleet.SageMaker, "aws:sagemaker:notebook-instance", "nb", ReasonIdle},
		{fleet.VertexAI, "goog-vertex-workbench", "true", ReasonIdle},
		{fleet.AzureML, "azureml.computeName", "ci-bob", ReasonIdle},
		{fleet.VertexAI, "sagemaker:domain-arn", "d", ReasonManaged},
		{fleet.AzureML, "goog-vertex-x", "y", ReasonManaged},
		{fleet.SageMaker, "azureml.x", "y", ReasonManaged},
		{fleet.SageMaker, "aws:autoscaling:groupName", "asg", ReasonManaged},
		{fleet.VertexAI, "goog-dataproc-cluster-name", "c", ReasonManaged},
	}
	for _, tc := range cases {
		t.Run(string(tc.svc)+"/"+tc.tag, func(t *testing.T) {
			c := managedCand("nb", tc.svc, fleet.KindNotebook, withTag(tc.tag, tc.val))
			d := Decide([]Candidate{c}, now, DefaultPolicy())[0]
			if d.Reason != tc.want {
				t.Fatalf("%s: %s, want %s", d.Reason, d.Message, tc.want)
			}
		})
	}
}

// recordingStopper records every Stop call, dry or real, in order.
type recordingStopper struct {
	mu    sync.Mutex
	calls []string
}

func (r *recordingStopper) Stop(_ context.Context, _ providers.Scope, id string, dry bool) (providers.StopResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, fmt.Sprintf("%s dry=%v", id, dry))
	if dry {
		return providers.StopResult{PreviousState: "running", CurrentState: "running"}, nil
	}
	return providers.StopResult{PreviousState: "running", CurrentState: "stopping"}, nil
}

// Seeded fleets of VMs and managed items of every kind and service, idle or
// not, protected or not: the stopper never hears of a managed item that is
// not a notebook (not even as a permission check), each stop has its intent
// synced before the call, and each managed service's stop API in a scope is
// checked for permission on its own.
func TestExecuteManagedProperties(t *testing.T) {
	seeds := 80
	if testing.Short() {
		seeds = 20
	}
	for seed := range seeds {
		rng := rand.New(rand.NewSource(int64(seed)))
		var cs []Candidate
		kinds := map[string]fleet.ManagedKind{}
		for i := range 1 + rng.Intn(12) {
			id := fmt.Sprintf("m-%d", i)
			var mods []func(*Candidate)
			switch rng.Intn(4) {
			case 1:
				mods = append(mods, func(c *Candidate) { c.Instance.Utilization.Samples = samples(30, 70) })
			case 2:
				mods = append(mods, withTag("Environment", "prod"))
			case 3:
				mods = append(mods, func(c *Candidate) { c.Instance.Utilization = nil })
			}
			if rng.Intn(3) == 0 {
				cs = append(cs, cand(id, mods...))
				continue
			}
			svc := fleet.ManagedServices[rng.Intn(len(fleet.ManagedServices))]
			kind := fleet.ManagedKinds[rng.Intn(len(fleet.ManagedKinds))]
			kinds[id] = kind
			cs = append(cs, managedCand(id, svc, kind, mods...))
		}
		st := &recordingStopper{}
		audit, path := openAudit(t)
		o := opts(st, cs, audit)
		o.Policy.MaxStops = 50
		ds := Decide(cs, now, o.Policy)
		for _, d := range ds {
			if k, ok := kinds[d.ResourceID]; ok && k != fleet.KindNotebook && d.Decision == Stop {
				t.Fatalf("seed %d: %s (%s) to stop", seed, d.ResourceID, k)
			}
		}
		if _, err := Execute(context.Background(), ds, o); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		audit.Close()
		for _, call := range st.calls {
			id, _, _ := strings.Cut(call, " ")
			if k, ok := kinds[id]; ok && k != fleet.KindNotebook {
				t.Fatalf("seed %d: the stopper was called for %s (%s): %s", seed, id, k, call)
			}
		}
		intent := map[string]bool{}
		for _, l := range readAudit(t, path) {
			id := fmt.Sprint(l["resourceId"])
			switch l["type"] {
			case LineIntent:
				intent[id] = true
			case LineOutcome:
				if !intent[id] {
					t.Fatalf("seed %d: outcome of %s without an intent before it", seed, id)
				}
			}
			if k, ok := kinds[id]; ok && l["type"] != LineSummary {
				if l["type"] == LineIntent && l["service"] == nil || l["type"] != LineIntent && l["managedKind"] != string(k) {
					t.Fatalf("seed %d: %s logged as kind %v, is %s", seed, id, l["managedKind"], k)
				}
			}
		}
		for _, call := range st.calls {
			if id, ok := strings.CutSuffix(call, " dry=false"); ok && !intent[id] {
				t.Fatalf("seed %d: %s stopped without an intent", seed, id)
			}
		}
	}
}

// A scope where VMs and notebooks stop: each stop API is checked for
// permission, so a missing notebook permission stops nothing.
func TestPermissionCheckedPerStopAPI(t *testing.T) {
	cs := []Candidate{cand("i-vm"), managedCand("nb", fleet.SageMaker, fleet.KindNotebook)}
	cs[1].Scope = cs[0].Scope
	st := &denyingStopper{deny: "nb"}
	audit, _ := openAudit(t)
	o := opts(st, cs, audit)
	_, err := Execute(context.Background(), Decide(cs, now, o.Policy), o)
	if !errors.Is(err, providers.ErrPermission) {
		t.Fatalf("err %v, want the notebook's permission error", err)
	}
	if st.real > 0 {
		t.Fatalf("%d real stops after a failed permission check", st.real)
	}
}

type denyingStopper struct {
	mu   sync.Mutex
	deny string
	real int
}

func (d *denyingStopper) Stop(_ context.Context, _ providers.Scope, id string, dry bool) (providers.StopResult, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if dry && id == d.deny {
		return providers.StopResult{}, fmt.Errorf("sagemaker:StopNotebookInstance denied: %w", providers.ErrPermission)
	}
	if !dry {
		d.real++
	}
	return providers.StopResult{PreviousState: "running", CurrentState: "stopping"}, nil
}

// FuzzManagedNeverStopped: whatever the kind, service, tags, owner and
// samples, an item of a managed service other than a notebook is never
// stopped, and a notebook is stopped only when the same machine as a VM
// would be (the service adds no way to stop, and takes none away but its
// own owner signal).
func FuzzManagedNeverStopped(f *testing.F) {
	f.Add(uint8(0), uint8(0), "team", "ml", "", 2.0, 30)
	f.Add(uint8(1), uint8(1), "environment", "production", "", 1.0, 30)
	f.Add(uint8(2), uint8(2), "goog-vertex-x", "y", "vertex-ai", 0.0, 30)
	f.Add(uint8(5), uint8(0), "sagemaker:x", "y", "sagemaker", 90.0, 5)
	f.Add(uint8(3), uint8(2), "azureml.compute", "c", "azure-ml", 3.0, 0)
	f.Fuzz(func(t *testing.T, kind, svc uint8, k, v, owner string, gpu float64, n int) {
		n = max(0, min(n, 40))
		s := fleet.ManagedServices[int(svc)%len(fleet.ManagedServices)]
		kd := fleet.ManagedKinds[int(kind)%len(fleet.ManagedKinds)]
		mod := func(c *Candidate) {
			c.Instance.Tags[k] = v
			c.Instance.Utilization.Samples = samples(n, gpu)
			if owner != "" {
				c.Instance.ManagedBy = &fleet.ManagedBy{Kind: fleet.OwnerKind(owner)}
			}
		}
		item := managedCand("x", s, kd, mod)
		vm := cand("x", mod, func(c *Candidate) { c.Instance.Provider = item.Instance.Provider; c.Scope = item.Scope })
		p := DefaultPolicy()
		d := Decide([]Candidate{item}, now, p)[0]
		if kd != fleet.KindNotebook {
			if d.Decision == Stop || d.Reason != ReasonManagedKind {
				t.Fatalf("%s %s: %s %s", s, kd, d.Decision, d.Reason)
			}
			return
		}
		vd := Decide([]Candidate{vm}, now, p)[0]
		ownService := vd.Reason == ReasonManaged && vd.ManagedBy != nil && string(vd.ManagedBy.Kind) == string(s)
		if d.Decision == Stop && vd.Decision != Stop && !ownService {
			t.Fatalf("notebook stopped (%s) where the VM is kept: %s %s", d.Reason, vd.Reason, vd.Message)
		}
		if d.Decision != Stop && vd.Decision == Stop {
			t.Fatalf("notebook kept (%s: %s) where the VM stops", d.Reason, d.Message)
		}
	})
}
