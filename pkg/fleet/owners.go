package fleet

import (
	"slices"
	"sort"
	"strings"
	"sync"
)

// ManagedBy names the controller that owns an instance: an Auto Scaling
// group, a Kubernetes node group, a batch or cluster service. Such an
// instance is never stopped directly; its owner is changed instead (the
// controller would replace a stopped member, or the cluster would break).
type ManagedBy struct {
	// Kind is the kind of owner, one of the OwnerKind constants, e.g.
	// "auto-scaling-group", "karpenter", "gke-node-pool".
	Kind OwnerKind `json:"kind" jsonschema_description:"Kind of controller that owns the instance, e.g. auto-scaling-group, eks-node-group, karpenter, gke-node-pool, aks-node-pool, vmss."`
	// Name is the owner's name where the tags give one (the group, cluster
	// or pool), else the tag that says so.
	Name string `json:"name,omitempty" jsonschema_description:"The owner's name (group, cluster or pool), or the tag that names the owner."`
}

// OwnerKind is a kind of controller that owns instances.
type OwnerKind string

// The owners gpufinops recognises.
const (
	OwnerAutoScalingGroup  OwnerKind = "auto-scaling-group"
	OwnerEKSNodeGroup      OwnerKind = "eks-node-group"
	OwnerKarpenter         OwnerKind = "karpenter"
	OwnerClusterAutoscaler OwnerKind = "cluster-autoscaler"
	OwnerKubernetes        OwnerKind = "kubernetes-cluster"
	OwnerSageMaker         OwnerKind = "sagemaker"
	OwnerBatch             OwnerKind = "batch"
	OwnerEMR               OwnerKind = "emr"
	OwnerParallelCluster   OwnerKind = "parallelcluster"
	OwnerSpotFleet         OwnerKind = "spot-fleet"
	OwnerEC2Fleet          OwnerKind = "ec2-fleet"
	OwnerECS               OwnerKind = "ecs"
	OwnerElasticBeanstalk  OwnerKind = "elastic-beanstalk"
	OwnerDatabricks        OwnerKind = "databricks"
	OwnerAKSNodePool       OwnerKind = "aks-node-pool"
	OwnerVMSS              OwnerKind = "vmss"
	OwnerAzureML           OwnerKind = "azure-ml"
	OwnerGKENodePool       OwnerKind = "gke-node-pool"
	OwnerMIG               OwnerKind = "managed-instance-group"
	OwnerDataproc          OwnerKind = "dataproc"
	OwnerVertexAI          OwnerKind = "vertex-ai"
	OwnerAzureBatch        OwnerKind = "azure-batch"
	OwnerCycleCloud        OwnerKind = "cyclecloud"
	OwnerDesktopPool       OwnerKind = "desktop-pool"
	OwnerGCPBatch          OwnerKind = "gcp-batch"
	OwnerSlurm             OwnerKind = "slurm"
	OwnerPBS               OwnerKind = "pbs"
	OwnerRay               OwnerKind = "ray-cluster"
	// OwnerController is any other controller a managed-by tag names.
	OwnerController OwnerKind = "controller"
)

// OwnerAction is what to do instead of stopping an instance of this kind of
// owner.
func OwnerAction(k OwnerKind) string {
	switch k {
	case OwnerAutoScalingGroup, OwnerSpotFleet, OwnerEC2Fleet, OwnerVMSS, OwnerMIG:
		return "lower the group's desired capacity (or set a scheduled or target-tracking scale-down policy) instead of stopping a member"
	case OwnerEKSNodeGroup, OwnerAKSNodePool, OwnerGKENodePool, OwnerKubernetes, OwnerClusterAutoscaler:
		return "scale the node pool down (cordon and drain the node, let the cluster autoscaler remove it, or lower the pool's minimum size)"
	case OwnerKarpenter:
		return "let Karpenter consolidate the node (consolidationPolicy WhenEmptyOrUnderutilized, a shorter consolidateAfter) or lower the NodePool's limits"
	case OwnerSageMaker, OwnerVertexAI, OwnerAzureML:
		return "stop or scale the service's resource (endpoint, notebook, training job, cluster) through the service, or set its idle shutdown"
	case OwnerBatch:
		return "lower the compute environment's minimum vCPUs to 0 so that the service scales it down"
	case OwnerEMR, OwnerDataproc, OwnerDatabricks:
		return "resize or terminate the cluster through the service, or set its auto-termination/autoscaling policy"
	case OwnerParallelCluster:
		return "let the scheduler scale the compute fleet down (lower MinCount, shorter ScaledownIdletime) or stop the compute fleet with pcluster"
	case OwnerECS:
		return "scale the ECS capacity provider or service down"
	case OwnerElasticBeanstalk:
		return "scale the Elastic Beanstalk environment down"
	}
	return "change the capacity through the controller that manages it"
}

// OwnerRule recognises an owner from one tag. Keys compare after
// normalisation (NormTagKey: case, surrounding spaces, '-', '_' and spaces
// ignored); a Prefix rule matches every key that starts with Key.
type OwnerRule struct {
	// Provider is the cloud whose tags the rule reads (documentation and
	// order only: every rule applies to every instance, because a foreign
	// owner tag still means the instance is owned).
	Provider Provider
	Key      string
	Prefix   bool
	// ValueContains, when set, must occur in the value (case-insensitively).
	ValueContains string
	// ValueNotIn lists values (case-insensitive) that do not name an owner.
	ValueNotIn []string
	Kind       OwnerKind
	// NameFromKey names the owner by what follows the prefix in the key
	// (kubernetes.io/cluster/<name>); otherwise the value names it.
	NameFromKey bool
	// ClusterKeys are tags whose value names the cluster the owner belongs
	// to (goog-k8s-cluster-name for a GKE node pool): the first one the
	// instance has (in this order) prefixes the name, "<cluster>/<pool>".
	ClusterKeys []string
	// IDContains, when set, makes the rule read the instance id instead of a
	// tag: an id containing it (case-insensitively) is owned, named by the id
	// (a scale-set member's resource id, say). Id rules are tried after
	// every tag rule.
	IDContains string
}

// iacTools manage an instance's definition, not its running state: a
// managed-by tag naming one does not make the instance owned.
var iacTools = []string{"terraform", "opentofu", "pulumi", "cloudformation", "cdk", "aws-cdk", "ansible", "crossplane-ignore", "manual", "human", "console", ""}

// OwnerRules are the cloud-neutral tags that say another controller
// manages an instance. Each cloud registers the tags its own services put on
// their instances (RegisterOwnerRules, from the provider registry); they are
// tried first, most specific first.
var OwnerRules = []OwnerRule{
	// Any cloud
	{Key: "Vendor", ValueContains: "databricks", Kind: OwnerDatabricks},
	{Key: "databricks-instance-pool-id", Kind: OwnerDatabricks},
	{Key: "app.kubernetes.io/managed-by", ValueNotIn: iacTools, Kind: OwnerController},
	{Key: "managed-by", ValueNotIn: iacTools, Kind: OwnerController},
	{Key: "controlled-by", ValueNotIn: iacTools, Kind: OwnerController},
}

var (
	ownerMu sync.RWMutex
	// registered are the clouds' rules (RegisterOwnerRules); combined is
	// them followed by OwnerRules, built once per registration, and
	// combinedKeys their keys normalised (NormTagKey).
	registered, combined []OwnerRule
	combinedKeys         []string
)

// RegisterOwnerRules adds a cloud's rules, tried in order before the
// cloud-neutral OwnerRules; the provider registry calls it for each cloud.
func RegisterOwnerRules(rules ...OwnerRule) {
	if len(rules) == 0 {
		return
	}
	ownerMu.Lock()
	defer ownerMu.Unlock()
	registered = slices.Concat(registered, rules)
	combined = slices.Concat(registered, OwnerRules)
	combinedKeys = normKeys(combined)
}

// AllOwnerRules are the registered clouds' rules followed by OwnerRules,
// the order DetectOwner tries them in.
func AllOwnerRules() []OwnerRule {
	rules, _ := ownerRules()
	return slices.Clone(rules)
}

// ownerRules returns the rules DetectOwner tries and their keys normalised
// (NormTagKey): made once per registration, or, before any cloud has
// registered its rules, once per call.
func ownerRules() ([]OwnerRule, []string) {
	ownerMu.RLock()
	defer ownerMu.RUnlock()
	if combined == nil {
		return OwnerRules, normKeys(OwnerRules)
	}
	return combined, combinedKeys
}

func normKeys(rules []OwnerRule) []string {
	keys := make([]string, len(rules))
	for i, r := range rules {
		keys[i] = NormTagKey(r.Key)
	}
	return keys
}

// lowercaseTags are the clouds whose tags may only be lower case.
var lowercaseTags = map[Provider]bool{}

// RegisterLowercaseTags records that a cloud's tags (labels) may only be
// lower case; the provider registry calls it.
func RegisterLowercaseTags(p Provider) {
	ownerMu.Lock()
	defer ownerMu.Unlock()
	lowercaseTags[p] = true
}

// LowercaseTags reports whether p's tags may only be lower case, so the
// lower-case spelling of a key is the only one it has.
func LowercaseTags(p Provider) bool {
	ownerMu.RLock()
	defer ownerMu.RUnlock()
	return lowercaseTags[p]
}

// NormTagKey is how tag keys compare: trimmed, lower case, without '-', '_'
// and spaces, so AutoShutdown, auto-shutdown and "Auto Shutdown" are one key.
func NormTagKey(k string) string { return normTag(strings.TrimSpace(k)) }

// DetectOwner reads the owner of an instance from its tags, then its id,
// with the registered rules and OwnerRules; nil when no rule matches.
func DetectOwner(id string, tags map[string]string) *ManagedBy {
	rules, ruleKeys := ownerRules()
	return detectOwner(rules, ruleKeys, id, tags)
}

// DetectOwnerWith reads the owner of an instance with the given rules only,
// as DetectOwner does with the registered ones.
func DetectOwnerWith(rules []OwnerRule, id string, tags map[string]string) *ManagedBy {
	return detectOwner(rules, normKeys(rules), id, tags)
}

// OwnerDetector is DetectOwnerWith for many instances: the rules' keys are
// normalised once.
func OwnerDetector(rules []OwnerRule) func(id string, tags map[string]string) *ManagedBy {
	rules = slices.Clone(rules)
	keys := normKeys(rules)
	return func(id string, tags map[string]string) *ManagedBy { return detectOwner(rules, keys, id, tags) }
}

func detectOwner(rules []OwnerRule, ruleKeys []string, id string, tags map[string]string) *ManagedBy {
	if len(tags) > 0 {
		keys := sortedTagKeys(tags)
		norm := make([]string, len(keys))
		for i, k := range keys {
			norm[i] = NormTagKey(k)
		}
		for ri, r := range rules {
			if r.IDContains != "" {
				continue
			}
			want := ruleKeys[ri]
			for i, k := range keys {
				nk := norm[i]
				if !(nk == want || (r.Prefix && strings.HasPrefix(nk, want))) {
					continue
				}
				v := strings.TrimSpace(tags[k])
				if r.ValueContains != "" && !strings.Contains(strings.ToLower(v), strings.ToLower(r.ValueContains)) {
					continue
				}
				if valueIn(v, r.ValueNotIn) {
					continue
				}
				name := v
				if r.NameFromKey || name == "" {
					name = strings.TrimSpace(k)
					if r.NameFromKey && len(k) > len(r.Key) && strings.EqualFold(k[:len(r.Key)], r.Key) {
						name = k[len(r.Key):]
					}
				}
				if c := clusterOf(r.ClusterKeys, keys, norm, tags); c != "" && c != name {
					name = c + "/" + name
				}
				return &ManagedBy{Kind: r.Kind, Name: name}
			}
		}
	}
	lid := strings.ToLower(id)
	for _, r := range rules {
		if r.IDContains != "" && strings.Contains(lid, strings.ToLower(r.IDContains)) {
			return &ManagedBy{Kind: r.Kind, Name: id}
		}
	}
	return nil
}

// Owner is the instance's owner: ManagedBy when set, else what its tags say
// (DetectOwner); nil when nothing owns it.
func (in *Instance) Owner() *ManagedBy {
	if in.ManagedBy != nil && strings.TrimSpace(string(in.ManagedBy.Kind)) != "" {
		return in.ManagedBy
	}
	return DetectOwner(in.ID, in.Tags)
}

// clusterOf is the value of the first of clusterKeys the tags hold with a
// value (keys and norm are the tags' keys, sorted, and their normal forms).
func clusterOf(clusterKeys, keys, norm []string, tags map[string]string) string {
	for _, ck := range clusterKeys {
		want := NormTagKey(ck)
		for i, nk := range norm {
			if nk == want {
				if v := strings.TrimSpace(tags[keys[i]]); v != "" {
					return v
				}
			}
		}
	}
	return ""
}

func valueIn(v string, list []string) bool {
	if list == nil {
		return false
	}
	for _, x := range list {
		if strings.EqualFold(strings.TrimSpace(v), x) {
			return true
		}
	}
	return false
}

func sortedTagKeys(tags map[string]string) []string {
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	sort.Strings(keys) // a deterministic owner name when several keys match
	return keys
}
