package gcp

import (
	"context"
	"errors"
	"fmt"
	"time"

	"cloud.google.com/go/billing/apiv1/billingpb"
	"cloud.google.com/go/compute/apiv1/computepb"
	"cloud.google.com/go/monitoring/apiv3/v2/monitoringpb"
	"google.golang.org/api/iterator"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/providers"
)

// CheckPermissions implements providers.Doctor with one cheap read each: a
// project scope (no region) checks the token, the aggregated listing, the
// project's regions, the commitments and reservations listings
// (commitmentChecks), the resource policies listing, Cloud Monitoring and the Billing Catalog; a regional
// scope checks the listing and Monitoring in the region.
func (p *Provider) CheckPermissions(ctx context.Context, scope providers.Scope) []providers.Check {
	var out []providers.Check
	if scope.Region == "" {
		if _, err := p.ts.Token(); err != nil {
			return []providers.Check{{Name: "credentials", Method: "access token", Status: providers.CheckMissing, Detail: err.Error(), Fix: missingCredentialsFix}}
		}
		out = append(out, providers.Check{Name: "credentials", Method: "access token", Status: providers.CheckOK})
	}
	out = append(out, check("compute.instances.list", func() error {
		ctx, done := p.withCall(ctx)
		defer done()
		it := p.instances.AggregatedList(ctx, &computepb.AggregatedListInstancesRequest{Project: scope.Account, MaxResults: proto.Uint32(1)})
		_, err := it.Next()
		return err
	}))
	if scope.Region == "" {
		out = append(out, check("compute.regions.list", func() error {
			ctx, done := p.withCall(ctx)
			defer done()
			_, err := p.regions.List(ctx, regionsRequest(scope.Account)).Next()
			return err
		}))
		out = append(out, p.commitmentChecks(ctx, scope.Account)...)
		out = append(out, check("compute.resourcePolicies.list", func() error {
			ctx, done := p.withCall(ctx)
			defer done()
			_, err := p.policies.AggregatedList(ctx, &computepb.AggregatedListResourcePoliciesRequest{Project: scope.Account, MaxResults: proto.Uint32(1)}).Next()
			return err
		}))
		out = append(out, check("cloudbilling services.skus.list", func() error {
			ctx, done := p.withCall(ctx)
			defer done()
			_, err := p.catalog.ListSkus(ctx, &billingpb.ListSkusRequest{Parent: ComputeService, PageSize: 1}).Next()
			return err
		}))
	}
	if scope.Region == "" && p.managedAI() {
		out = append(out, p.managedChecks(ctx, scope.Account)...)
	}
	region := scope.Region
	out = append(out, check("monitoring.timeSeries.list", func() error {
		end := p.opts.Now().UTC()
		filter := fmt.Sprintf(`metric.type = %q AND resource.type = %q`, MetricCPU, resourceType)
		if region != "" {
			filter = hostCPU.filter(region)
		}
		_, err := p.metrics.ListTimeSeries(ctx, &monitoringpb.ListTimeSeriesRequest{
			Name: "projects/" + scope.Account, Filter: filter,
			Interval: &monitoringpb.TimeInterval{StartTime: timestamppb.New(end.Add(-10 * time.Minute)), EndTime: timestamppb.New(end)},
			View:     monitoringpb.ListTimeSeriesRequest_HEADERS, PageSize: 1,
		}).Next()
		return err
	}))
	return out
}

// check runs one read and says what it found.
func check(action string, call func() error) providers.Check {
	c := providers.Check{Name: "permission", Action: action, Method: "one call", Status: providers.CheckOK}
	err := call()
	if err == nil || errors.Is(err, iterator.Done) {
		return c
	}
	err = classify(err)
	switch {
	case errors.Is(err, providers.ErrPermission), errors.Is(err, providers.ErrCredentials):
		c.Status = providers.CheckMissing
		c.Fix = "grant the role in 'gpufinops iam-policy gcp' (or roles/compute.viewer and roles/monitoring.viewer)"
	default:
		c.Status = providers.CheckError
	}
	c.Detail = err.Error()
	return c
}

// CheckCoverage implements providers.Doctor: how many of the scope's
// running GPU VMs published the Ops Agent's GPU utilization in the last
// day, for every GPU (a VM some of whose GPUs are missing is partial, not
// publishing); then compute.instances.stop, which idle-stop needs, with
// testIamPermissions on one of the listed VMs (a dry run).
func (p *Provider) CheckCoverage(ctx context.Context, scope providers.Scope) (checks []providers.Check) {
	c := providers.Check{Name: "metrics", Action: MetricGPUUtil, Method: "ListTimeSeries, last 24 h"}
	listed, err := p.ListGPUInstances(ctx, scope)
	if err != nil {
		c.Status, c.Detail = providers.CheckError, err.Error()
		return []providers.Check{c}
	}
	defer func() {
		cat, _ := catalog.Embedded()
		checks = append(checks, providers.UnknownTypesCheck(listed, cat)...)
	}()
	stop := providers.StopCheck(ctx, p, scope, listed, permStop, "testIamPermissions", "gpufinops iam-policy gcp --idle-stop")
	end := p.opts.Now().UTC().Truncate(time.Hour)
	if _, err := p.ReadUtilization(ctx, scope, listed, fleet.TimeRange{Start: end.Add(-24 * time.Hour), End: end}); err != nil {
		c.Status, c.Detail = providers.CheckError, err.Error()
		return []providers.Check{c, stop}
	}
	cov := providers.CoverageOf(listed, func(i int) int { return providers.SamplesReporting(&listed[i]) })
	c.Status, c.Detail = providers.CheckOK, cov.Detail("GPU VMs")
	if cov.OK() {
		return []providers.Check{c, stop}
	}
	c.Status = providers.CheckWarn
	c.Fix = `install the Ops Agent on each GPU VM; its default configuration collects the NVML GPU metrics:
  curl -sSO https://dl.google.com/cloudagents/add-google-cloud-ops-agent-repo.sh
  sudo bash add-google-cloud-ops-agent-repo.sh --also-install
(DCGM metrics: add the dcgm receiver to /etc/google-cloud-ops-agent/config.yaml; see ` + opsAgentDoc + `)`
	return []providers.Check{c, stop}
}

// managedChecks are the managed AI reads' permissions, one list call each
// (a page of one): Vertex AI endpoints and custom jobs in one location
// (the first of vertex_locations or --region, else us-central1) and
// Workbench instances in every zone. A missing one says how to turn the
// reads off.
func (p *Provider) managedChecks(ctx context.Context, project string) []providers.Check {
	loc := "us-central1"
	if l := append(p.opts.Adapter.Strings(OptVertexLocations), p.opts.Regions...); len(l) > 0 {
		loc = l[0]
	}
	parent := "projects/" + project + "/locations/" + loc
	checks := []providers.Check{
		check("aiplatform.endpoints.list", func() error {
			ctx, done := p.withCall(ctx)
			defer done()
			svc, err := p.aiService(ctx, loc)
			if err != nil {
				return err
			}
			_, err = svc.Projects.Locations.Endpoints.List(parent).PageSize(1).Context(ctx).Do()
			return err
		}),
		check("aiplatform.customJobs.list", func() error {
			ctx, done := p.withCall(ctx)
			defer done()
			svc, err := p.aiService(ctx, loc)
			if err != nil {
				return err
			}
			_, err = svc.Projects.Locations.CustomJobs.List(parent).PageSize(1).Context(ctx).Do()
			return err
		}),
		check("notebooks.instances.list", func() error {
			ctx, done := p.withCall(ctx)
			defer done()
			svc, err := p.nbService(ctx)
			if err != nil {
				return err
			}
			_, err = svc.Projects.Locations.Instances.List("projects/" + project + "/locations/-").PageSize(1).Context(ctx).Do()
			return err
		}),
	}
	for i := range checks {
		if checks[i].Status == providers.CheckMissing {
			checks[i].Fix += "; or turn the managed AI reads off: providers.gcp." + OptManagedAI + ": false"
		}
	}
	return checks
}
