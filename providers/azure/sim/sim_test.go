package sim_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	azfake "github.com/Azure/azure-sdk-for-go/sdk/azcore/fake"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resourcegraph/armresourcegraph"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers/azure/sim"
)

// The simulator's own tests use the SDK's clients directly, never the
// adapter.

const sub = "11111111-1111-1111-1111-111111111111"

var now = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)

func fleetOf(n int) *fleet.Fleet {
	f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind}
	for i := range n {
		f.Instances = append(f.Instances, fleet.Instance{ID: fmt.Sprintf("vm-%03d", i), Provider: fleet.Azure, Account: sub, Region: "eastus",
			InstanceType: "Standard_NC24ads_A100_v4", Lifecycle: fleet.OnDemand, State: fleet.Running, GPU: fleet.GPU{Model: "A100-80GB", Count: 1}})
	}
	return f
}

func clientOptions(srv *httptest.Server) *arm.ClientOptions {
	return &arm.ClientOptions{ClientOptions: policy.ClientOptions{
		Cloud: cloud.Configuration{ActiveDirectoryAuthorityHost: srv.URL, Services: map[cloud.ServiceName]cloud.ServiceConfiguration{
			cloud.ResourceManager: {Endpoint: srv.URL, Audience: "https://management.azure.com"}}},
		InsecureAllowCredentialWithHTTP: true,
		Retry:                           policy.RetryOptions{MaxRetries: -1},
	}, DisableRPRegistration: true}
}

func start(t *testing.T, f *fleet.Fleet, o sim.Options) (*httptest.Server, *sim.Server) {
	o.Now = func() time.Time { return now }
	o.Subscription = sub
	s := sim.New(f, o)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv, s
}

func TestVMListPagesAndDeallocates(t *testing.T) {
	srv, s := start(t, fleetOf(120), sim.Options{})
	vms, err := armcompute.NewVirtualMachinesClient(sub, &azfake.TokenCredential{}, clientOptions(srv))
	if err != nil {
		t.Fatal(err)
	}
	pager := vms.NewListAllPager(&armcompute.VirtualMachinesClientListAllOptions{StatusOnly: to.Ptr("true")})
	n, pages := 0, 0
	for pager.More() {
		page, err := pager.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, vm := range page.Value {
			n++
			if vm.Properties.InstanceView == nil || len(vm.Properties.InstanceView.Statuses) != 2 {
				t.Fatalf("%s: no power state with statusOnly=true", *vm.Name)
			}
		}
	}
	if n != 120 || pages != 3 {
		t.Errorf("%d VMs in %d pages, want 120 in 3 (nextLink)", n, pages)
	}
	poller, err := vms.BeginDeallocate(context.Background(), "rg-gpu-eastus", "vm-007", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := poller.PollUntilDone(context.Background(), &runtime.PollUntilDoneOptions{Frequency: time.Second}); err != nil {
		t.Fatal(err)
	}
	for _, st := range s.State() {
		if want := map[bool]string{true: "stopped", false: "running"}[st.ID == "vm-007"]; st.State != want {
			t.Errorf("%s is %s, want %s", st.ID, st.State, want)
		}
	}
	if _, err := vms.BeginDeallocate(context.Background(), "rg-gpu-eastus", "no-such-vm", nil); err == nil {
		t.Error("deallocating an unknown VM worked")
	}
}

func TestGraphPagesWithSkipToken(t *testing.T) {
	srv, _ := start(t, fleetOf(25), sim.Options{})
	c, err := armresourcegraph.NewClient(&azfake.TokenCredential{}, clientOptions(srv))
	if err != nil {
		t.Fatal(err)
	}
	req := armresourcegraph.QueryRequest{Query: to.Ptr("Resources | where type =~ 'microsoft.compute/virtualmachines' | where location =~ 'eastus'"),
		Subscriptions: []*string{to.Ptr(sub)}, Options: &armresourcegraph.QueryRequestOptions{Top: to.Ptr(int32(10)), ResultFormat: to.Ptr(armresourcegraph.ResultFormatObjectArray)}}
	rows, pages := 0, 0
	for {
		var raw *http.Response
		resp, err := c.Resources(runtime.WithCaptureResponse(context.Background(), &raw), req, nil)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		rows += int(*resp.Count)
		if raw.Header.Get("x-ms-user-quota-remaining") == "" {
			t.Error("no quota header")
		}
		if resp.SkipToken == nil {
			break
		}
		req.Options.SkipToken = resp.SkipToken
	}
	if rows != 25 || pages != 3 {
		t.Errorf("%d rows in %d pages, want 25 in 3", rows, pages)
	}
}

func TestThrottleAnswerHasRetryAfter(t *testing.T) {
	srv, _ := start(t, fleetOf(1), sim.Options{ThrottleRate: 1, RetryAfter: 2 * time.Second})
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/subscriptions/"+sub+"?api-version=2022-12-01", nil)
	req.Header.Set("Authorization", "Bearer x")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct{ Error struct{ Code string } }
	_ = json.NewDecoder(resp.Body).Decode(&body)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "2" || body.Error.Code != "TooManyRequests" {
		t.Errorf("%d Retry-After %q code %q", resp.StatusCode, resp.Header.Get("Retry-After"), body.Error.Code)
	}
}

func TestRetailPricesPageWithNextPageLink(t *testing.T) {
	var rows []sim.PriceRow
	for i := range 40 {
		rows = append(rows, sim.PriceRow{Region: "eastus", Size: fmt.Sprintf("Standard_NC%d", i), OnDemand: "1.5", Spot: "0.3", Reservation1y: "8760"})
	}
	srv, _ := start(t, fleetOf(1), sim.Options{Prices: rows})
	next := srv.URL + "/api/retail/prices?$filter=" + "serviceName%20eq%20%27Virtual%20Machines%27%20and%20armRegionName%20eq%20%27eastus%27"
	items, pages := 0, 0
	for next != "" {
		resp, err := http.Get(next)
		if err != nil {
			t.Fatal(err)
		}
		var page struct {
			Items        []map[string]any
			NextPageLink *string
		}
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		pages++
		items += len(page.Items)
		next = ""
		if page.NextPageLink != nil {
			next = *page.NextPageLink
		}
	}
	// Per size: Linux, Windows, DevTest, Spot and a 1-year reservation.
	if items != 200 || pages != 2 {
		t.Errorf("%d items in %d pages, want 200 in 2", items, pages)
	}
}
