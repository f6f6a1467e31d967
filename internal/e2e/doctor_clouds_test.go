package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/cmd/doctor"
	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/file"
)

// Every cloud's doctor, against its simulator: it checks the permission
// idle-stop needs to stop (a dry run where the API has one), and a machine
// publishing GPU metrics for some of its GPUs is partial, never counted as
// publishing.
func TestDoctorEveryCloudStopPermissionAndPartialGPUs(t *testing.T) {
	demo, err := file.Demo()
	if err != nil {
		t.Fatal(err)
	}
	partial := map[fleet.Provider]string{}
	// The demo's GCP VMs have one GPU each: add one with four.
	for _, in := range demo.Instances {
		if in.ID == "gcp-a100-train" {
			in.ID, in.InstanceType, in.GPU = "gcp-a100-4g", "a2-highgpu-4g", fleet.GPU{Model: "A100", Count: 4, MemoryGiB: 40}
			in.Tags = map[string]string{"Team": "ml-research"}
			demo.Instances = append(demo.Instances, in)
			break
		}
	}
	// One machine per cloud with 4 or more GPUs reports for half of them
	// (samples of the last week, every hour: 2 GPUs of 4 at 30 %).
	for i := range demo.Instances {
		in := &demo.Instances[i]
		if in.State == fleet.Stopped || in.GPU.Count < 4 || partial[in.Provider] != "" || in.Owner() != nil {
			continue
		}
		half := int(in.GPU.Count) / 2
		u := &fleet.Utilization{}
		for h := 7 * 24; h > 0; h-- {
			gpu := make(fleet.PerGPU, half)
			for k := range gpu {
				gpu[k] = 30
			}
			cpu := 20.0
			u.Samples = append(u.Samples, fleet.Sample{Time: demoEnd.Add(-time.Duration(h) * time.Hour), GPU: gpu, CPU: &cpu})
		}
		in.Utilization = u
		partial[in.Provider] = in.ID
	}
	allCloudsServing(t, demo)
	stopAction := map[string]string{"aws": "ec2:StopInstances", "azure": "Microsoft.Compute/virtualMachines/deallocate/action", "gcp": "compute.instances.stop"}
	for _, cloud := range []string{"aws", "azure", "gcp"} {
		t.Run(cloud, func(t *testing.T) {
			code, out, errOut := gpufinops(t, "doctor", "--provider", cloud, "-o", "json")
			if code != cmdutil.ExitOK {
				t.Fatalf("exit %d: %s\n%s", code, errOut, out)
			}
			var rep doctor.Report
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatal(err)
			}
			stop, dryRan, partialSeen := false, false, false
			for _, s := range rep.Scopes {
				for _, c := range s.Checks {
					if c.Action == stopAction[cloud] {
						stop = true
						dryRan = dryRan || strings.Contains(c.Method, " on ") || cloud == "azure" // Azure reads the role's effective permissions
						t.Logf("%s: %s (%s) %s %s", s.Scope, c.Action, c.Method, c.Status, c.Detail)
						if c.Status != providers.CheckOK {
							t.Errorf("%s %s: %s %s", s.Scope, c.Action, c.Status, c.Detail)
						}
					}
					if c.Name == "metrics" && partial[fleet.Provider(cloud)] != "" && strings.Contains(c.Detail, "partial: "+partial[fleet.Provider(cloud)]+" (") {
						partialSeen = true
						if c.Status != providers.CheckWarn {
							t.Errorf("%s: partial GPUs with status %s", s.Scope, c.Status)
						}
					}
				}
			}
			if !stop {
				t.Errorf("no %s check:\n%s", stopAction[cloud], out)
			}
			if !dryRan {
				t.Errorf("no scope dry-ran the stop:\n%s", out)
			}
			if partial[fleet.Provider(cloud)] == "" {
				t.Fatalf("the demo has no unowned running %s machine with 4 GPUs or more", cloud)
			}
			if !partialSeen {
				t.Errorf("%s (half its GPUs reporting) is not partial:\n%s", partial[fleet.Provider(cloud)], out)
			}
		})
	}
}

// A role that cannot stop is a warning naming the fix, not a failure:
// analyze works without it.
func TestDoctorStopDeniedWarns(t *testing.T) {
	out, err := runDoctor(t, doctorSim(t, doctorDenyEC2("StopInstances")), "--region", "us-east-1")
	if code := cmdutil.ExitCodeFor(err); code != cmdutil.ExitOK {
		t.Fatalf("exit %d: %v\n%s", code, err, out)
	}
	for _, want := range []string{"ec2:StopInstances (DryRun on ", "\twarn\tidle-stop --execute could not stop ", "gpufinops iam-policy aws --idle-stop"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
