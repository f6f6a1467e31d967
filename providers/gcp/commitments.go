package gcp

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	compute "cloud.google.com/go/compute/apiv1"
	"cloud.google.com/go/compute/apiv1/computepb"
	"google.golang.org/api/iterator"
	"google.golang.org/protobuf/proto"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/providers"
)

var _ providers.CommitmentLister = (*Provider)(nil)

// The APIs the commitments are read with, as scan warnings and doctor
// name them.
const (
	apiCommitments  = "compute:regionCommitments.aggregatedList"
	apiReservations = "compute:reservations.aggregatedList"
)

// Kinds of held commitment (fleet.Held.Kind) this adapter reads.
const (
	kindResourceCUD    = string(pricing.ResourceCUD)
	kindGCPReservation = "gcp-reservation"
)

// heldClients are the Compute Engine clients of the commitment reads,
// built on first use.
type heldClients struct {
	once         sync.Once
	err          error
	commitments  *compute.RegionCommitmentsClient
	reservations *compute.ReservationsClient
}

// heldPage is the page size of the two aggregated lists (Compute Engine
// allows up to 500); tests lower it.
var heldPage uint32 = pageSize

func (p *Provider) heldClients(ctx context.Context) (*heldClients, error) {
	h := &p.held
	h.once.Do(func() {
		rest := p.restOptions()
		if h.commitments, h.err = compute.NewRegionCommitmentsRESTClient(ctx, rest...); h.err != nil {
			return
		}
		h.reservations, h.err = compute.NewReservationsRESTClient(ctx, rest...)
	})
	return h, h.err
}

// ListCommitments implements providers.CommitmentLister. Per project of
// the scan, two calls: regionCommitments.aggregatedList (resource-based
// committed use discounts, status ACTIVE) and reservations.aggregatedList
// (specific reservations, status READY), both paged, kept to the regions
// the scan reads. Spend-based (flexible) CUDs belong to the Cloud Billing
// account, and no API of Compute Engine or of the Go libraries lists them
// (docs/gcp.md): they are not read.
func (p *Provider) ListCommitments(ctx context.Context, scopes []providers.Scope) ([]fleet.Held, []*providers.ScopeError) {
	regions := map[string]map[string]bool{} // project → regions scanned
	var projects []string
	for _, sc := range scopes {
		if regions[sc.Account] == nil {
			regions[sc.Account] = map[string]bool{}
			projects = append(projects, sc.Account)
		}
		regions[sc.Account][sc.Region] = true
	}
	var (
		mu     sync.Mutex
		held   []fleet.Held
		failed []*providers.ScopeError
		wg     sync.WaitGroup
	)
	sem := make(chan struct{}, max(p.opts.Concurrency, 1))
	for _, project := range projects {
		for _, api := range []string{apiCommitments, apiReservations} {
			wg.Go(func() {
				sem <- struct{}{}
				defer func() { <-sem }()
				var (
					got []fleet.Held
					err error
				)
				if api == apiCommitments {
					got, err = p.resourceCUDs(ctx, project)
				} else {
					got, err = p.reservations(ctx, project)
				}
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					failed = append(failed, &providers.ScopeError{Scope: providers.Scope{Provider: fleet.GCP, Account: project},
						Commitments: true, Source: api, Err: err})
					return
				}
				for _, h := range got {
					if regions[project][h.Scope.Region] || regions[project][""] {
						held = append(held, h)
					}
				}
			})
		}
	}
	wg.Wait()
	return held, failed
}

// resourceCUDs reads a project's active resource-based commitments.
func (p *Provider) resourceCUDs(ctx context.Context, project string) ([]fleet.Held, error) {
	c, err := p.heldClients(ctx)
	if err != nil {
		return nil, err
	}
	ctx, done := p.withCall(ctx)
	defer done()
	it := c.commitments.AggregatedList(ctx, &computepb.AggregatedListRegionCommitmentsRequest{Project: project, MaxResults: proto.Uint32(heldPage)})
	var out []fleet.Held
	for {
		pair, err := it.Next()
		if errors.Is(err, iterator.Done) {
			return out, nil
		}
		if err != nil {
			return nil, callError(ctx, err)
		}
		for _, cm := range pair.Value.GetCommitments() {
			if cm.GetStatus() != computepb.Commitment_ACTIVE.String() || cm.GetCategory() == computepb.Commitment_LICENSE.String() {
				continue
			}
			h, err := heldCUD(project, cm)
			if err != nil {
				return nil, err
			}
			out = append(out, h)
		}
	}
}

// heldCUD is a resource-based commitment as a held commitment: vCPUs,
// memory (Compute Engine's MB, here GiB: FACTS.md), GPUs by model, local
// SSD (GB, which Compute Engine means as GiB).
func heldCUD(project string, cm *computepb.Commitment) (fleet.Held, error) {
	h := fleet.Held{
		ID: cm.GetSelfLink(), Provider: fleet.GCP, Account: project, Kind: kindResourceCUD,
		Scope:   fleet.HeldScope{Level: "region", Region: path.Base(cm.GetRegion())},
		Payment: pricing.PayMonthly,
		Source:  apiCommitments,
	}
	switch cm.GetPlan() {
	case computepb.Commitment_TWELVE_MONTH.String():
		h.Term = "1y"
	case computepb.Commitment_THIRTY_SIX_MONTH.String():
		h.Term = "3y"
	}
	var err error
	if h.Start, err = rfc3339(cm.GetStartTimestamp()); err != nil {
		return h, fmt.Errorf("commitment %s: startTimestamp: %w", cm.GetName(), err)
	}
	if h.End, err = rfc3339(cm.GetEndTimestamp()); err != nil {
		return h, fmt.Errorf("commitment %s: endTimestamp: %w", cm.GetName(), err)
	}
	h.InstanceFamily = CommitmentSeries(cm.GetType())
	for _, r := range cm.GetResources() {
		amount := float64(r.GetAmount())
		switch r.GetType() {
		case computepb.ResourceCommitment_VCPU.String():
			h.Resources = append(h.Resources, fleet.HeldResource{Type: "vcpu", Amount: amount})
		case computepb.ResourceCommitment_MEMORY.String():
			h.Resources = append(h.Resources, fleet.HeldResource{Type: "memory", Amount: amount / 1024})
		case computepb.ResourceCommitment_ACCELERATOR.String():
			h.Resources = append(h.Resources, fleet.HeldResource{Type: "gpu", GPUModel: GPUModel(path.Base(r.GetAcceleratorType())), Amount: amount})
		case computepb.ResourceCommitment_LOCAL_SSD.String():
			h.Resources = append(h.Resources, fleet.HeldResource{Type: "local-ssd", Amount: amount})
		}
	}
	return h, nil
}

// CommitmentSeries is the machine series whose vCPUs and memory a
// commitment of type typ covers (Commitment.type: GRAPHICS_OPTIMIZED is g2,
// ACCELERATOR_OPTIMIZED_A3_MEGA a3-mega, GENERAL_PURPOSE_N2 n2), or "" for a
// type that names no single series (MEMORY_OPTIMIZED is M1 and M2, the X4
// and M4N buckets are sizes of a series) or that this build does not know.
func CommitmentSeries(typ string) string {
	switch typ {
	case "ACCELERATOR_OPTIMIZED":
		return "a2"
	case "GRAPHICS_OPTIMIZED":
		return "g2"
	case "GENERAL_PURPOSE":
		return "n1"
	case "COMPUTE_OPTIMIZED":
		return "c2"
	case "ACCELERATOR_OPTIMIZED_A3_MEGA":
		return "a3-mega"
	case "ACCELERATOR_OPTIMIZED_A3_ULTRA":
		return "a3-ultra"
	}
	for _, class := range []string{"ACCELERATOR_OPTIMIZED_", "GRAPHICS_OPTIMIZED_", "GENERAL_PURPOSE_", "COMPUTE_OPTIMIZED_", "MEMORY_OPTIMIZED_", "STORAGE_OPTIMIZED_"} {
		if rest, ok := strings.CutPrefix(typ, class); ok && rest != "" && !strings.Contains(rest, "_") {
			return strings.ToLower(rest)
		}
	}
	return ""
}

// reservations reads a project's ready specific reservations.
func (p *Provider) reservations(ctx context.Context, project string) ([]fleet.Held, error) {
	c, err := p.heldClients(ctx)
	if err != nil {
		return nil, err
	}
	ctx, done := p.withCall(ctx)
	defer done()
	it := c.reservations.AggregatedList(ctx, &computepb.AggregatedListReservationsRequest{Project: project, MaxResults: proto.Uint32(heldPage)})
	var out []fleet.Held
	for {
		pair, err := it.Next()
		if errors.Is(err, iterator.Done) {
			return out, nil
		}
		if err != nil {
			return nil, callError(ctx, err)
		}
		for _, r := range pair.Value.GetReservations() {
			sr := r.GetSpecificReservation()
			if r.GetStatus() != computepb.Reservation_READY.String() || sr == nil {
				continue
			}
			zone := path.Base(r.GetZone())
			h := fleet.Held{
				ID: r.GetSelfLink(), Provider: fleet.GCP, Account: project, Kind: kindGCPReservation,
				Scope:        fleet.HeldScope{Level: "zone", Region: regionOf(zone), Zone: zone},
				InstanceType: path.Base(sr.GetInstanceProperties().GetMachineType()),
				Count:        float64(sr.GetCount()),
				Source:       apiReservations,
			}
			// A reservation set to be deleted ends then (deleteAtTime).
			if h.End, err = rfc3339(r.GetDeleteAtTime()); err != nil {
				return nil, fmt.Errorf("reservation %s: deleteAtTime: %w", r.GetName(), err)
			}
			if ss := r.GetShareSettings(); ss.GetShareType() == computepb.ShareSettings_SPECIFIC_PROJECTS.String() {
				for proj := range ss.GetProjectMap() {
					h.Scope.Accounts = append(h.Scope.Accounts, proj)
				}
				slices.Sort(h.Scope.Accounts)
			}
			out = append(out, h)
		}
	}
}

func rfc3339(s string) (*time.Time, error) {
	if s == "" {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return nil, err
	}
	t = t.UTC()
	return &t, nil
}

// commitmentChecks are doctor's checks of the two commitment listings of
// a project: one page of one result each.
func (p *Provider) commitmentChecks(ctx context.Context, project string) []providers.Check {
	c, err := p.heldClients(ctx)
	if err != nil {
		return []providers.Check{{Name: "permission", Action: "compute.commitments.list", Status: providers.CheckError, Detail: err.Error()}}
	}
	return []providers.Check{
		check("compute.commitments.list", func() error {
			ctx, done := p.withCall(ctx)
			defer done()
			_, err := c.commitments.AggregatedList(ctx, &computepb.AggregatedListRegionCommitmentsRequest{Project: project, MaxResults: proto.Uint32(1)}).Next()
			return err
		}),
		check("compute.reservations.list", func() error {
			ctx, done := p.withCall(ctx)
			defer done()
			_, err := c.reservations.AggregatedList(ctx, &computepb.AggregatedListReservationsRequest{Project: project, MaxResults: proto.Uint32(1)}).Next()
			return err
		}),
	}
}
