package gcp

import (
	"context"
	"errors"
	"fmt"
	"path"
	"time"

	"cloud.google.com/go/compute/apiv1/computepb"
	"google.golang.org/protobuf/proto"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
)

// StopWait bounds the wait for a stop's zone operation.
const StopWait = 3 * time.Minute

// permStop is the permission a stop needs.
const permStop = "compute.instances.stop"

// Stop implements providers.Stopper: it finds the VM (by name) in the
// scope's region, refuses managed instance group and GKE members
// (providers.ErrNotStoppable: their controller would replace them), and
// stops it with instances.stop, waiting for the zone operation at most
// StopWait. Local SSD data is discarded (discardLocalSsd), as the
// instance-store rule of idle-stop warns or, with protect_instance_store,
// refuses. A dry run checks the permission with testIamPermissions and
// changes nothing. A VM not running is AlreadyStopped.
//
// A Workbench instance (projects/P/locations/ZONE/instances/NAME) is
// stopped through Workbench (stopWorkbench); a Vertex AI endpoint
// deployment or custom job is refused: the tool never stops them.
func (p *Provider) Stop(ctx context.Context, scope providers.Scope, instanceID string, dryRun bool) (providers.StopResult, error) {
	switch {
	case isWorkbenchName(instanceID):
		return p.stopWorkbench(ctx, instanceID, dryRun)
	case isVertexName(instanceID):
		return providers.StopResult{}, fmt.Errorf("%w: %s is a Vertex AI endpoint deployment or custom job: gpufinops never stops or deletes those (the report gives the command)", providers.ErrNotStoppable, instanceID)
	}
	inst, err := p.findInstance(ctx, scope, instanceID)
	if err != nil {
		return providers.StopResult{}, err
	}
	zone := path.Base(inst.GetZone())
	prev := inst.GetStatus()
	tags := map[string]string{}
	for k, v := range inst.GetLabels() {
		tags[k] = v
	}
	for _, item := range inst.GetMetadata().GetItems() {
		if item.GetKey() == "created-by" {
			tags["created-by"] = item.GetValue()
		}
	}
	if owner := fleet.DetectOwner(instanceID, tags); owner != nil && (owner.Kind == fleet.OwnerMIG || owner.Kind == fleet.OwnerGKENodePool) {
		return providers.StopResult{PreviousState: prev, CurrentState: prev}, fmt.Errorf("%w: %s is a member of a %s (%s), which would replace it: resize or stop the group instead", providers.ErrNotStoppable, instanceID, owner.Kind, owner.Name)
	}
	if prev != "RUNNING" && prev != "PROVISIONING" && prev != "STAGING" {
		return providers.StopResult{PreviousState: prev, CurrentState: prev, AlreadyStopped: true}, nil
	}
	if dryRun {
		res, err := p.instances.TestIamPermissions(ctx, &computepb.TestIamPermissionsInstanceRequest{
			Project: scope.Account, Zone: zone, Resource: instanceID,
			TestPermissionsRequestResource: &computepb.TestPermissionsRequest{Permissions: []string{permStop}},
		})
		if err != nil {
			return providers.StopResult{}, fmt.Errorf("instances.testIamPermissions %s: %w", instanceID, callError(ctx, err))
		}
		for _, granted := range res.GetPermissions() {
			if granted == permStop {
				return providers.StopResult{PreviousState: prev, CurrentState: prev}, nil
			}
		}
		return providers.StopResult{}, fmt.Errorf("%w: %s on %s", providers.ErrPermission, permStop, instanceID)
	}
	localSSD := false
	for _, d := range inst.GetDisks() {
		localSSD = localSSD || d.GetType() == "SCRATCH"
	}
	req := &computepb.StopInstanceRequest{Project: scope.Account, Zone: zone, Instance: instanceID, RequestId: proto.String(requestID(scope.Account, zone, instanceID, p.opts.Now()))}
	if localSSD {
		req.DiscardLocalSsd = proto.Bool(true)
	}
	op, err := p.instances.Stop(ctx, req)
	p.forget(scope.Account)
	if err != nil {
		return providers.StopResult{}, fmt.Errorf("instances.stop %s: %w", instanceID, callError(ctx, err))
	}
	wctx, cancel := context.WithTimeout(ctx, StopWait)
	defer cancel()
	if err := op.Wait(wctx); err != nil {
		if ctx.Err() != nil {
			return providers.StopResult{}, ctx.Err()
		}
		return providers.StopResult{PreviousState: prev, CurrentState: "STOPPING"}, fmt.Errorf("instances.stop %s: waiting for the operation %s: %w", instanceID, op.Name(), classify(err))
	}
	cur := "TERMINATED"
	if got, err := p.instances.Get(ctx, &computepb.GetInstanceRequest{Project: scope.Account, Zone: zone, Instance: instanceID}); err == nil {
		cur = got.GetStatus()
	}
	return providers.StopResult{PreviousState: prev, CurrentState: cur}, nil
}

// requestID makes retries of one stop idempotent: the same VM and minute
// give the same ID (a UUID in form).
func requestID(project, zone, name string, now time.Time) string {
	h := fmt.Sprintf("%x", hash(project+"/"+zone+"/"+name+"/"+now.UTC().Truncate(time.Minute).Format(time.RFC3339)))
	for len(h) < 32 {
		h += h
	}
	return h[0:8] + "-" + h[8:12] + "-4" + h[13:16] + "-8" + h[17:20] + "-" + h[20:32]
}

func hash(s string) uint64 {
	var x uint64 = 1469598103934665603
	for i := 0; i < len(s); i++ {
		x ^= uint64(s[i])
		x *= 1099511628211
	}
	return x
}

// findInstance reads a VM by name: the zone from this scan's listing, else
// an aggregated listing filtered by name, then instances.get.
func (p *Provider) findInstance(ctx context.Context, scope providers.Scope, name string) (*computepb.Instance, error) {
	zone := ""
	p.listMu.Lock()
	l := p.lists[scope.Account]
	p.listMu.Unlock()
	if l != nil {
		select {
		case <-l.done:
			for _, inst := range l.instances {
				if inst.GetName() == name && regionOf(path.Base(inst.GetZone())) == scope.Region {
					zone = path.Base(inst.GetZone())
				}
			}
		default:
		}
	}
	if zone == "" {
		found, _, err := p.aggregatedList(ctx, scope.Account, fmt.Sprintf("name = %q", name))
		if err != nil {
			return nil, fmt.Errorf("instances.aggregatedList: %w", err)
		}
		for _, inst := range found {
			if inst.GetName() == name && regionOf(path.Base(inst.GetZone())) == scope.Region {
				zone = path.Base(inst.GetZone())
			}
		}
	}
	if zone == "" {
		return nil, fmt.Errorf("%w: %s in %s", providers.ErrNotFound, name, scope)
	}
	inst, err := p.instances.Get(ctx, &computepb.GetInstanceRequest{Project: scope.Account, Zone: zone, Instance: name})
	if err != nil {
		err = callError(ctx, err)
		if errors.Is(err, providers.ErrNotFound) {
			return nil, fmt.Errorf("%w: %s in %s", providers.ErrNotFound, name, scope)
		}
		return nil, fmt.Errorf("instances.get %s: %w", name, err)
	}
	return inst, nil
}
