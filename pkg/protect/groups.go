package protect

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// GroupsOf names the multi-host groups a machine belongs to, each as
// "key=value": a tag whose whole key, normalised, is one of Rules.GroupKeys
// (job, cluster-name, ray-cluster, slurm-job-id, placement-group, tpu-slice,
// instance-template, …) or whose key's words name a distributed job
// (jobKey: torchrun-job, mpi_job_name), the cloud's placement constructs as
// "placement=<name or ID>" (fleet.Instance.PlacementGroups: an AWS
// placement group, an Azure proximity placement group, GCP resource
// policies), and the workload's training run.
func GroupsOf(in *fleet.Instance, p Policy) []string {
	p = p.effective()
	keys := make([]string, len(p.Rules.GroupKeys))
	for i, k := range p.Rules.GroupKeys {
		keys[i] = configured(k)
	}
	var out []string
	for k, v := range in.Tags {
		if v = strings.TrimSpace(v); v == "" {
			continue
		}
		if kt := Tokens(k); slices.Contains(keys, joined(kt)) || jobKey(kt, v) {
			out = append(out, strings.Join(kt, "-")+"="+v)
		}
	}
	for _, g := range in.PlacementGroups {
		if g = strings.TrimSpace(g); g != "" {
			out = append(out, placementKey+g)
		}
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if in.Workload != nil && strings.TrimSpace(in.Workload.TrainingRun) != "" {
		out = append(out, "trainingRun="+strings.TrimSpace(in.Workload.TrainingRun))
	}
	return out
}

// jobWords in a key make its value name a distributed job, whatever the
// key's other words (torchrun-job, mpi_job_name, DeepSpeedJobId,
// jobset.sigs.k8s.io/jobset-name, tpu-multislice); describeWords make the
// value a property shared by unrelated machines instead (job-type,
// job_queue, JobPriority), which names no group.
var (
	jobWords      = []string{"job", "jobid", "jobname", "jobset", "multislice", "torchrun", "horovod", "mpijob", "pytorchjob", "tfjob", "mpi", "deepspeed", "megatron"}
	describeWords = []string{"type", "kind", "class", "category", "queue", "priority", "status", "state", "owner", "team", "count", "size", "role", "template", "image", "version", "framework", "enabled", "mode"}
)

// jobKey reports whether a tag names a distributed job by its key's words
// (kt)
// (jobWords, no describeWords) with a value that is a name, not a yes/no.
func jobKey(kt []string, v string) bool {
	return anyWord(kt, jobWords) && !anyWord(kt, describeWords) && !IsTrueValue(v) && !IsFalseValue(v)
}

// placementKey starts the group name of a placement construct.
const placementKey = "placement="

// groupScope is what a group name is unique within: the cloud, and for a
// placement construct (named per account and region: two accounts may each
// have a placement group "pg-1") the account and region too.
func groupScope(in *fleet.Instance, name string) string {
	if strings.HasPrefix(name, placementKey) {
		return string(in.Provider) + "\x00" + strings.ToLower(in.Account) + "\x00" + strings.ToLower(in.Region) + "\x00"
	}
	return string(in.Provider) + "\x00"
}

// Peers indexes the multi-host groups of a fleet.
type Peers struct {
	ids     []string
	inUse   func(i int) bool
	used    map[int]bool
	groups  [][]string
	members map[string][]int
}

// NewPeers indexes the machines' groups; inUse(i) says whether machine i
// works (its GPUs busy, memory held, CPU busy) or its data cannot tell
// (no metrics): either keeps its idle peers running. It is asked only
// about members of a group, at most once each.
func NewPeers(insts []*fleet.Instance, inUse func(i int) bool, p Policy) *Peers {
	g := &Peers{inUse: inUse, used: map[int]bool{}, members: map[string][]int{}}
	for i, in := range insts {
		g.ids = append(g.ids, in.ID)
		gs := GroupsOf(in, p)
		for j, name := range gs {
			gs[j] = groupScope(in, name) + strings.ToLower(name)
			g.members[gs[j]] = append(g.members[gs[j]], i)
		}
		g.groups = append(g.groups, gs)
	}
	return g
}

// Check is the multi-host protection of machine i: a group it shares with
// a machine that works (or whose data cannot tell). Nil otherwise.
func (g *Peers) Check(i int) *Finding {
	if g == nil || i < 0 || i >= len(g.groups) {
		return nil
	}
	for _, name := range g.groups[i] {
		for _, j := range g.members[name] {
			if j != i && g.working(j) {
				label := name[strings.LastIndexByte(name, 0)+1:]
				return &Finding{Reason: ReasonMultiHost, Tag: label,
					Message: fmt.Sprintf("the machine is a host of the multi-host group %s, whose host %s works or has no data to show it idle: an idle host of a running job is kept", label, g.ids[j])}
			}
		}
	}
	return nil
}

func (g *Peers) working(j int) bool {
	if v, ok := g.used[j]; ok {
		return v
	}
	v := g.inUse(j)
	g.used[j] = v
	return v
}

// Static is the protection a machine's tags, owner, purchase option and
// workload give, in the order idle-stop checks them: owned by a controller,
// exempt, opted out (or not opted in), production, spot, inference. Nil
// when none applies.
func Static(in *fleet.Instance, p Policy) *Finding {
	if o := Owner(in, p); o != nil {
		name := ""
		if o.Name != "" {
			name = " " + o.Name
		}
		return &Finding{Reason: ReasonManaged, Owner: o,
			Message: fmt.Sprintf("the machine is managed by %s%s, which would replace or miss it: %s", o.Kind, name, fleet.OwnerAction(o.Kind))}
	}
	p = p.effective()
	ts := sortedTags(in.Tags)
	if f := tagsOf(in.Tags, ts, p); f != nil {
		return f
	}
	if f := Spot(in); f != nil {
		return f
	}
	if p.ProtectInference {
		return inferenceOf(in, ts, p)
	}
	return nil
}

// Spot protects a spot machine the cloud would not stop itself: an AWS
// one-time spot instance can only be terminated, an Azure Spot VM with
// eviction policy Delete or a GCP Spot VM with termination action DELETE
// loses its disks when reclaimed. A spot machine whose interruption
// behaviour is deallocate (Azure) or stop (GCP, an AWS persistent request)
// is stopped like on-demand; an unknown behaviour protects.
func Spot(in *fleet.Instance) *Finding {
	if in.Lifecycle != fleet.Spot {
		return nil
	}
	switch s := in.SpotInterruption; {
	case s.Stoppable():
		return nil
	case s == "":
		return &Finding{Reason: ReasonSpot, Message: "a spot instance whose interruption behaviour is unknown is not stopped (a one-time spot instance can only be terminated; a spot VM that is deleted on eviction loses its disks)"}
	default:
		return &Finding{Reason: ReasonSpot, Message: fmt.Sprintf("a spot instance whose interruption behaviour is %s is not stopped (only a spot VM the cloud would stop or deallocate itself can be stopped)", s)}
	}
}
