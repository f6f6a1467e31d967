package gcp

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"cloud.google.com/go/compute/apiv1/computepb"
	"google.golang.org/api/iterator"
	"google.golang.org/protobuf/proto"
)

// apiPolicies is the API a project's resource policies are read with, as
// scan notes and doctor name it.
const apiPolicies = "compute:resourcePolicies.aggregatedList"

// policyKinds are a project's resource policies by projects/… path: true
// for those that place their instances (a group placement or workload
// policy), false for the rest (instance and snapshot schedules, disk
// consistency groups).
type policyKinds map[string]bool

// projectPolicies reads a project's resource policies once per scan (one
// resourcePolicies.aggregatedList, paged), shared by its region scopes.
func (p *Provider) projectPolicies(ctx context.Context, project string) (policyKinds, error) {
	s := p.currentScan()
	for {
		s.mu.Lock()
		f := s.policies[project]
		mine := f == nil
		if mine {
			f = newFlight[policyKinds]()
			s.policies[project] = f
		}
		s.mu.Unlock()
		if mine {
			f.val, f.err = p.readPolicies(ctx, project)
			if f.err != nil && ctx.Err() == nil {
				p.note(fmt.Sprintf("%s: %s: %v; every resource policy attached to its VMs is taken as a placement (their hosts are kept together: idle hosts may be kept that a schedule policy merely shares)", project, apiPolicies, f.err))
			}
			close(f.done)
		}
		kinds, err := f.wait(ctx)
		if err != nil && !mine && endedElsewhere(ctx, err) {
			s.mu.Lock()
			if s.policies[project] == f {
				delete(s.policies, project)
			}
			s.mu.Unlock()
			continue
		}
		return kinds, err
	}
}

// readPolicies lists a project's resource policies, every region.
func (p *Provider) readPolicies(ctx context.Context, project string) (policyKinds, error) {
	ctx, done := p.withCall(ctx)
	defer done()
	it := p.policies.AggregatedList(ctx, &computepb.AggregatedListResourcePoliciesRequest{Project: project, MaxResults: proto.Uint32(pageSize)})
	out := policyKinds{}
	for {
		pair, err := it.Next()
		if errors.Is(err, iterator.Done) {
			return out, nil
		}
		if err != nil {
			return nil, callError(ctx, err)
		}
		for _, rp := range pair.Value.GetResourcePolicies() {
			for _, path := range policiesOf([]string{rp.GetSelfLink()}) {
				out[path] = rp.GetGroupPlacementPolicy() != nil || rp.GetWorkloadPolicy() != nil
			}
		}
	}
}

// placement sorts an instance's resource policies (projects/… paths) into
// those that place it (placement groups) and the rest. A policy whose kind
// is unknown (the read failed, or it does not list the policy) places it:
// grouping can only keep more machines running.
func (p *Provider) placement(ctx context.Context, project string, urls []string) (groups, other []string, err error) {
	paths := policiesOf(urls)
	if len(paths) == 0 {
		return nil, nil, nil
	}
	kinds, err := p.projectPolicies(ctx, project)
	if err != nil && ctx.Err() != nil {
		return nil, nil, err
	}
	for _, path := range paths {
		if places, known := kinds[path]; known && !places {
			other = append(other, path)
		} else {
			groups = append(groups, path)
		}
	}
	return groups, other, nil
}

// note keeps a note of the scan (TakeScanNotes).
func (p *Provider) note(s string) {
	p.noteMu.Lock()
	defer p.noteMu.Unlock()
	p.notes = append(p.notes, s)
}

// TakeScanNotes returns the scan's notes (providers.ScanNoter), once.
func (p *Provider) TakeScanNotes() []string {
	p.noteMu.Lock()
	defer p.noteMu.Unlock()
	out := p.notes
	p.notes = nil
	sort.Strings(out)
	return out
}
