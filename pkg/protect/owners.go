package protect

import "github.com/gpufinops/gpufinops/pkg/fleet"

// Controller is one owner signal: a tag (exact, prefix or with a value),
// or a resource id, that says a controller owns the machine.
type Controller = fleet.OwnerRule

// DefaultControllers are the owner signals of no one cloud (HPC schedulers
// and Ray's autoscaler), read besides the owner rules each cloud's adapter
// registers (fleet.AllOwnerRules: its autoscalers, batch services and
// desktop pools, the same controller written differently per cloud). Keys
// compare normalised (fleet.NormTagKey); Prefix rules match every key
// starting so.
var DefaultControllers = []Controller{
	{Key: "ray-cluster-name", Kind: fleet.OwnerRay},
	{Key: "ray-node-type", Kind: fleet.OwnerRay},
	{Key: "ray-user-node-type", Kind: fleet.OwnerRay},
	{Key: "slurm", Prefix: true, Kind: fleet.OwnerSlurm},
	{Key: "pbs", Prefix: true, Kind: fleet.OwnerPBS},
	{Key: "pbspro", Prefix: true, Kind: fleet.OwnerPBS},
}

// Owner is the controller that owns a machine: its ManagedBy or the clouds'
// owner tags (fleet.Instance.Owner), else the policy's Controllers; nil
// when nothing owns it. A managed notebook's own service (a Workbench VM's Vertex AI labels, say)
// does not own it: the service is what stops it.
func Owner(in *fleet.Instance, p Policy) *fleet.ManagedBy {
	if o := in.Owner(); o != nil && !ownService(in, o) {
		return o
	}
	var o *fleet.ManagedBy
	if p.Rules.Controllers == nil {
		o = defaultDetector(in.ID, in.Tags)
	} else {
		o = fleet.DetectOwnerWith(p.Rules.Controllers, in.ID, in.Tags)
	}
	if ownService(in, o) {
		return nil
	}
	return o
}

// defaultDetector reads DefaultControllers, their keys normalised once.
var defaultDetector = fleet.OwnerDetector(DefaultControllers)
