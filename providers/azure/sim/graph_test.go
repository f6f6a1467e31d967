package sim_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sort"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	azfake "github.com/Azure/azure-sdk-for-go/sdk/azcore/fake"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resourcegraph/armresourcegraph"

	"github.com/gpufinops/gpufinops/providers/azure/sim"
)

// graphRows runs a Resource Graph query through the SDK's client and returns
// every row of every page.
func graphRows(t *testing.T, srv *httptest.Server, q string) ([]map[string]any, error) {
	t.Helper()
	c, err := armresourcegraph.NewClient(&azfake.TokenCredential{}, clientOptions(srv))
	if err != nil {
		t.Fatal(err)
	}
	req := armresourcegraph.QueryRequest{Query: to.Ptr(q), Subscriptions: []*string{to.Ptr(sub)},
		Options: &armresourcegraph.QueryRequestOptions{ResultFormat: to.Ptr(armresourcegraph.ResultFormatObjectArray)}}
	var out []map[string]any
	for {
		resp, err := c.Resources(context.Background(), req, nil)
		if err != nil {
			return nil, err
		}
		b, _ := json.Marshal(resp.Data)
		var rows []map[string]any
		if err := json.Unmarshal(b, &rows); err != nil {
			t.Fatal(err)
		}
		out = append(out, rows...)
		if resp.SkipToken == nil || *resp.SkipToken == "" {
			return out, nil
		}
		req.Options.SkipToken = resp.SkipToken
	}
}

// TestUniformScaleSetMembersOnlyInComputeResources holds the documented
// fact: Resource Graph keeps the VMs of Uniform scale sets (AKS node pools)
// in the ComputeResources table, type
// microsoft.compute/virtualmachinescalesets/virtualmachines, with their power
// state at properties.extended.instanceView.powerState.code; the Resources
// table has the scale set itself but not its members.
// Source: https://learn.microsoft.com/azure/governance/resource-graph/reference/supported-tables-resources#computeresources
// and the sample "Virtual Machine Scale Set Uniform orchestration" of
// https://learn.microsoft.com/azure/governance/resource-graph/samples/samples-by-table#computeresources
func TestUniformScaleSetMembersOnlyInComputeResources(t *testing.T) {
	f := fleetOf(6)
	for i := range 4 {
		f.Instances[i].Tags = map[string]string{"aks-managed-poolName": "gpu"}
	}
	srv, _ := start(t, f, sim.Options{})
	inResources, err := graphRows(t, srv, "Resources | where type =~ 'microsoft.compute/virtualmachinescalesets/virtualmachines' | project id")
	if err != nil {
		t.Fatal(err)
	}
	if len(inResources) != 0 {
		t.Errorf("Resources served %d scale-set members, Azure serves none there", len(inResources))
	}
	members, err := graphRows(t, srv, "ComputeResources | where type =~ 'microsoft.compute/virtualmachinescalesets/virtualmachines' | extend powerState = properties.extended.instanceView.powerState.code | project name, powerState, id")
	if err != nil {
		t.Fatal(err)
	}
	if len(members) != 4 {
		t.Fatalf("ComputeResources served %d members, want 4", len(members))
	}
	for _, m := range members {
		if m["powerState"] != "PowerState/running" {
			t.Errorf("member %v: power state %v, want PowerState/running", m["name"], m["powerState"])
		}
	}
	sets, err := graphRows(t, srv, "Resources | where type =~ 'microsoft.compute/virtualmachinescalesets' | project id, size = tostring(sku.name)")
	if err != nil {
		t.Fatal(err)
	}
	if len(sets) != 1 || sets[0]["size"] != "Standard_NC24ads_A100_v4" {
		t.Errorf("Resources served scale sets %v, want the one set with its size in sku.name", sets)
	}
	vms, err := graphRows(t, srv, "Resources | where type =~ 'microsoft.compute/virtualmachines' | project id")
	if err != nil {
		t.Fatal(err)
	}
	if len(vms) != 2 {
		t.Errorf("Resources served %d standalone VMs, want 2", len(vms))
	}
}

// TestGraphEvaluatesTheQuery: the simulator answers the columns the query
// projects, computes extended columns from the resource's own properties
// (a wrong property path is null, as in KQL), and refuses a column, table,
// operator or function it cannot resolve, so an adapter query it cannot run
// fails loudly.
func TestGraphEvaluatesTheQuery(t *testing.T) {
	f := fleetOf(3)
	srv, _ := start(t, f, sim.Options{})
	rows, err := graphRows(t, srv, "Resources | where type in~ ('microsoft.compute/virtualmachines') | extend size = tostring(properties.hardwareProfile.vmSize), wrong = tostring(properties.vmSize) | where size startswith 'standard_nc' | project id, size, wrong | order by id desc")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3", len(rows))
	}
	var ids []string
	for _, r := range rows {
		var cols []string
		for k := range r {
			cols = append(cols, k)
		}
		sort.Strings(cols)
		if len(cols) != 3 || r["size"] != "Standard_NC24ads_A100_v4" || r["wrong"] != "" {
			t.Errorf("row %v: want exactly id, size (the VM's) and wrong (empty)", r)
		}
		ids = append(ids, r["id"].(string))
	}
	if !sort.SliceIsSorted(ids, func(i, j int) bool { return ids[i] > ids[j] }) {
		t.Errorf("order by id desc gave %v", ids)
	}
	counts, err := graphRows(t, srv, "Resources | where type =~ 'microsoft.compute/virtualmachines' | summarize count() by subscriptionId, location")
	if err != nil {
		t.Fatal(err)
	}
	if len(counts) != 1 || counts[0]["count_"] != float64(3) || counts[0]["location"] != "eastus" {
		t.Errorf("summarize count() by subscriptionId, location gave %v", counts)
	}
	for _, q := range []string{
		"Resources | project id, nosuchcolumn",
		"Resources | project ID",
		"NoSuchTable | project id",
		"Resources | join (ResourceContainers) on subscriptionId",
		"Resources | extend x = toupper(name)",
	} {
		_, err := graphRows(t, srv, q)
		var re *azcore.ResponseError
		if !errors.As(err, &re) || re.StatusCode != http.StatusBadRequest || re.ErrorCode != "BadRequest" {
			t.Errorf("%q: %v, want 400 BadRequest", q, err)
		}
	}
}
