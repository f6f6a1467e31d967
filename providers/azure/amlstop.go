package azure

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"

	"github.com/gpufinops/gpufinops/providers"
)

// isAMLID reports whether an ARM ID is an Azure ML resource.
func isAMLID(id string) bool {
	return strings.Contains(strings.ToLower(id), "/providers/microsoft.machinelearningservices/")
}

// stopAML stops an Azure ML compute instance (Compute_Stop), the one Azure
// ML item the tool stops: the instance is read first (Compute_Get): a
// cluster or a deployment is providers.ErrNotStoppable (the tool never
// changes them; the report gives the command); Stopped or Stopping →
// AlreadyStopped. The stop is checked against the caller's effective
// permissions; a dry run stops there. The operation is polled
// (Azure-AsyncOperation) to its end, at most StopWait.
func (p *Provider) stopAML(ctx context.Context, id string, dryRun bool) (providers.StopResult, error) {
	lower := strings.ToLower(id)
	_, name, ok := strings.Cut(lower, "/computes/")
	if !ok || strings.Contains(name, "/") {
		return providers.StopResult{}, fmt.Errorf("%s is an Azure ML deployment or workspace, which the tool never stops or deletes; see the report for the command: %w", id, providers.ErrNotStoppable)
	}
	c, err := p.amlClient()
	if err != nil {
		return providers.StopResult{}, err
	}
	base := strings.TrimRight(c.Endpoint(), "/") + id
	req, err := runtime.NewRequest(ctx, http.MethodGet, base+"?api-version="+AMLAPIVersion)
	if err != nil {
		return providers.StopResult{}, err
	}
	resp, err := c.Pipeline().Do(req)
	if err != nil {
		return providers.StopResult{}, stopError(ctx, id, err)
	}
	if !runtime.HasStatusCode(resp, http.StatusOK) {
		return providers.StopResult{}, stopError(ctx, id, runtime.NewResponseError(resp))
	}
	var got amlCompute
	if err := runtime.UnmarshalAsJSON(resp, &got); err != nil {
		return providers.StopResult{}, fmt.Errorf("%s: %w", id, err)
	}
	if got.Properties.ComputeType != "ComputeInstance" {
		return providers.StopResult{}, fmt.Errorf("%s is an Azure ML %s, not a compute instance; the tool never stops clusters (set its minimum nodes instead, see the report): %w", id, got.Properties.ComputeType, providers.ErrNotStoppable)
	}
	var props amlComputeProps
	_ = json.Unmarshal(got.Properties.Properties, &props)
	state := props.State
	if state == "" {
		state = "Unknown"
	}
	switch strings.ToLower(state) {
	case "stopped", "stopping":
		return providers.StopResult{PreviousState: state, CurrentState: state, AlreadyStopped: true}, nil
	}
	if err := p.checkAction(ctx, subscriptionOf(id), resourceGroupOf(id), ActionAMLComputeStop); err != nil {
		return providers.StopResult{}, fmt.Errorf("%s: %w", id, err)
	}
	if dryRun {
		return providers.StopResult{PreviousState: state, CurrentState: state}, nil
	}
	req, err = runtime.NewRequest(ctx, http.MethodPost, base+"/stop?api-version="+AMLAPIVersion)
	if err != nil {
		return providers.StopResult{}, err
	}
	resp, err = c.Pipeline().Do(req)
	if err != nil {
		return providers.StopResult{}, stopError(ctx, id, err)
	}
	if !runtime.HasStatusCode(resp, http.StatusOK, http.StatusAccepted) {
		return providers.StopResult{}, stopError(ctx, id, runtime.NewResponseError(resp))
	}
	if resp.StatusCode == http.StatusOK {
		return providers.StopResult{PreviousState: state, CurrentState: "Stopped"}, nil
	}
	poller, err := runtime.NewPoller[struct{}](resp, c.Pipeline(), nil)
	if err != nil {
		return providers.StopResult{}, fmt.Errorf("%s: %w", id, err)
	}
	wait, cancel := context.WithTimeout(ctx, StopWait)
	defer cancel()
	if _, err := poller.PollUntilDone(wait, &runtime.PollUntilDoneOptions{Frequency: time.Second}); err != nil {
		if ctx.Err() == nil && wait.Err() != nil {
			return providers.StopResult{PreviousState: state, CurrentState: "Stopping"}, fmt.Errorf("%s: the stop did not finish within %s; it goes on in Azure", id, StopWait)
		}
		return providers.StopResult{}, stopError(ctx, id, err)
	}
	return providers.StopResult{PreviousState: state, CurrentState: "Stopped"}, nil
}
