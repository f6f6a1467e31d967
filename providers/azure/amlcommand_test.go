package azure

import (
	"os/exec"
	"strings"
	"testing"
	"testing/quick"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
)

func amlItem(id string, kind fleet.ManagedKind) *fleet.Instance {
	return &fleet.Instance{ID: id, Provider: fleet.Azure, Managed: &fleet.Managed{Service: fleet.AzureML, Kind: kind}}
}

// TestManagedCommandEachAction: every change Azure ML has a command for,
// with its workspace, resource group and subscription, and "" for those it
// has none for.
func TestManagedCommandEachAction(t *testing.T) {
	const ws = "/subscriptions/3f2c9a61-0d4e-4b7a-9c1e-2a5b6c7d8e9f/resourceGroups/ml-rg/providers/Microsoft.MachineLearningServices/workspaces/ws-ml"
	const where = " --resource-group ml-rg --workspace-name ws-ml --subscription 3f2c9a61-0d4e-4b7a-9c1e-2a5b6c7d8e9f"
	dep := amlItem(ws+"/onlineEndpoints/scorer/deployments/blue", fleet.KindEndpoint)
	ci := amlItem(ws+"/computes/ci-bob", fleet.KindNotebook)
	cl := amlItem(ws+"/computes/gpu-cluster", fleet.KindComputeCluster)
	for _, c := range []struct {
		in   *fleet.Instance
		ch   fleet.ManagedChange
		want string
	}{
		{dep, fleet.ManagedChange{Action: fleet.ActionDeleteEndpoint}, "az ml online-deployment delete --name blue --endpoint-name scorer" + where + " --yes"},
		{dep, fleet.ManagedChange{Action: fleet.ActionSetReplicas, Replicas: 1}, "az ml online-deployment update --name blue --endpoint-name scorer" + where + " --set instance_count=1"},
		{dep, fleet.ManagedChange{Action: fleet.ActionSetReplicas, Replicas: 0}, ""},
		{dep, fleet.ManagedChange{Action: fleet.ActionScaleToZero}, ""},
		{dep, fleet.ManagedChange{Action: fleet.ActionChangeInstanceType, InstanceType: "Standard_NC4as_T4_v3"}, ""},
		{ci, fleet.ManagedChange{Action: fleet.ActionStopNotebook}, "az ml compute stop --name ci-bob" + where},
		{ci, fleet.ManagedChange{Action: fleet.ActionIdleShutdown, IdleShutdownMinutes: 30}, "az ml compute update --name ci-bob" + where + " --idle-time-before-shutdown-minutes 30"},
		{ci, fleet.ManagedChange{Action: fleet.ActionIdleShutdown, IdleShutdownMinutes: 5}, ""}, // below Azure's 15-minute minimum
		{ci, fleet.ManagedChange{Action: fleet.ActionDeleteEndpoint}, ""},
		{cl, fleet.ManagedChange{Action: fleet.ActionScaleToZero}, "az ml compute update --name gpu-cluster" + where + " --min-instances 0"},
		{cl, fleet.ManagedChange{Action: fleet.ActionSetMinReplicas, Replicas: 1}, "az ml compute update --name gpu-cluster" + where + " --min-instances 1"},
		{cl, fleet.ManagedChange{Action: fleet.ActionIdleShutdown, IdleShutdownMinutes: 30}, "az ml compute update --name gpu-cluster" + where + " --idle-time-before-scale-down 1800"},
		{cl, fleet.ManagedChange{Action: fleet.ActionManagedSpot}, ""},
		{cl, fleet.ManagedChange{Action: fleet.ActionStopNotebook}, ""},
	} {
		if got := ManagedCommand(c.in, c.ch); got != c.want {
			t.Errorf("%s %s:\n got %q\nwant %q", c.in.ID, c.ch.Action, got, c.want)
		}
		if got := providers.ManagedCommand(c.in, c.ch); got != c.want {
			t.Errorf("providers.ManagedCommand %s %s: %q, want the adapter's %q", c.in.ID, c.ch.Action, got, c.want)
		}
	}
	// Not an Azure ML item, or no ARM ID: no command.
	vm := &fleet.Instance{ID: "vm-1", Provider: fleet.Azure}
	if got := ManagedCommand(vm, fleet.ManagedChange{Action: fleet.ActionStopNotebook}); got != "" {
		t.Errorf("a VM: %q", got)
	}
	if got := ManagedCommand(amlItem("ci-bob", fleet.KindNotebook), fleet.ManagedChange{Action: fleet.ActionStopNotebook}); got != "" {
		t.Errorf("an item without its ARM ID: %q", got)
	}
}

// TestManagedCommandQuotes: names the shell would split or expand are
// quoted as one word each.
func TestManagedCommandQuotes(t *testing.T) {
	in := amlItem("/subscriptions/s1/resourceGroups/ml (prod)/providers/Microsoft.MachineLearningServices/workspaces/ws$HOME/computes/it's", fleet.KindNotebook)
	got := ManagedCommand(in, fleet.ManagedChange{Action: fleet.ActionStopNotebook})
	want := `az ml compute stop --name 'it'\''s' --resource-group 'ml (prod)' --workspace-name 'ws$HOME' --subscription s1`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestShQuoteProperty: the shell reads back every string shQuote quotes.
func TestShQuoteProperty(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	f := func(s string) bool {
		s = strings.ReplaceAll(s, "\x00", "")
		out, err := exec.Command(sh, "-c", "printf %s "+shQuote(s)).Output()
		return err == nil && string(out) == s
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 200}); err != nil {
		t.Error(err)
	}
}

// FuzzISOMinutes: any input is read or refused without a panic, never
// negative, and a value read is a whole number of seconds.
func FuzzISOMinutes(f *testing.F) {
	for _, s := range []string{"PT30M", "PT1H30M", "P1D", "PT90S", "P", "PT", "", "PT-1M", "P1DT2H3M4S"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, ok := isoMinutes(s)
		if ok && v < 0 {
			t.Errorf("isoMinutes(%q) = %v", s, v)
		}
		if !ok && v != 0 {
			t.Errorf("isoMinutes(%q) refused with %v", s, v)
		}
	})
}
