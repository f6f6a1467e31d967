package sharing

import (
	"bytes"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// Names of the NVIDIA GPU Operator objects and labels the manifests use.
const (
	// Namespace is the GPU Operator's namespace.
	Namespace = "gpu-operator"
	// TimeSlicingConfigMap holds the device plugin configs, one key per group.
	TimeSlicingConfigMap = "time-slicing-config"
	// MIGConfigMap holds the MIG manager (mig-parted) configs.
	MIGConfigMap = "custom-mig-config"
	// MIGConfigKey is the MIG manager's data key.
	MIGConfigKey = "config.yaml"
	// DevicePluginLabel selects a node's device plugin config.
	DevicePluginLabel = "nvidia.com/device-plugin.config"
	// MIGLabel selects a node's MIG layout.
	MIGLabel = "nvidia.com/mig.config"
	// GPUResource is the resource time-slicing replicates.
	GPUResource = "nvidia.com/gpu"
	// MIGDisabled is the mig-parted config that turns MIG off, kept so that
	// nodes on the operator's default label stay valid.
	MIGDisabled = "all-disabled"
)

// Annotations on the ConfigMaps telling what to apply with them.
const (
	// AnnotationNodeLabels lists "instance-id: label=value", one a line.
	AnnotationNodeLabels = "gpufinops/node-labels"
	// AnnotationClusterPolicy lists the ClusterPolicy fields to set.
	AnnotationClusterPolicy = "gpufinops/cluster-policy"
)

// DevicePluginConfig is the NVIDIA device plugin's config file (version v1),
// reduced to time-slicing.
type DevicePluginConfig struct {
	Version string              `json:"version"`
	Sharing DevicePluginSharing `json:"sharing"`
}

// DevicePluginSharing is the config's sharing section.
type DevicePluginSharing struct {
	TimeSlicing TimeSlicingConfig `json:"timeSlicing"`
}

// TimeSlicingConfig says how many replicas of each GPU resource to advertise.
type TimeSlicingConfig struct {
	// RenameByDefault false keeps the resource name nvidia.com/gpu.
	RenameByDefault bool `json:"renameByDefault"`
	// FailRequestsGreaterThanOne rejects pods asking for more than one replica,
	// which would buy no more GPU time.
	FailRequestsGreaterThanOne bool                  `json:"failRequestsGreaterThanOne"`
	Resources                  []TimeSlicingResource `json:"resources"`
}

// TimeSlicingResource is one replicated resource.
type TimeSlicingResource struct {
	Name     string `json:"name"`
	Replicas int    `json:"replicas"`
}

// MIGPartedConfig is the MIG manager's config file (version v1).
type MIGPartedConfig struct {
	Version    string                       `json:"version"`
	MIGConfigs map[string][]MIGDeviceLayout `json:"mig-configs"`
}

// MIGDeviceLayout is the layout of a node's GPUs.
type MIGDeviceLayout struct {
	Devices    string         `json:"devices"`
	MIGEnabled bool           `json:"mig-enabled"`
	MIGDevices map[string]int `json:"mig-devices,omitempty"`
}

var labelValue = regexp.MustCompile(`^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`)

// Manifests renders the plan as a multi-document YAML of ConfigMaps for the
// NVIDIA GPU Operator: time-slicing-config (device plugin, one key per
// time-slicing group) and custom-mig-config (MIG manager, one entry per
// distinct layout), each in namespace gpu-operator and annotated with the node
// labels and ClusterPolicy fields to apply. A plan without groups gives no
// documents.
func Manifests(plan Plan) ([]byte, error) {
	var docs []any
	ts, err := timeSlicingConfigMap(plan)
	if err != nil {
		return nil, err
	}
	if ts != nil {
		docs = append(docs, ts)
	}
	mig, err := migConfigMap(plan)
	if err != nil {
		return nil, err
	}
	if mig != nil {
		docs = append(docs, mig)
	}
	var buf bytes.Buffer
	for i, d := range docs {
		b, err := yaml.Marshal(d)
		if err != nil {
			return nil, fmt.Errorf("sharing manifests: %w", err)
		}
		if i > 0 {
			buf.WriteString("---\n")
		}
		buf.Write(b)
	}
	return buf.Bytes(), nil
}

func configMap(name string, data, annotations map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Namespace:   Namespace,
			Labels:      map[string]string{"app.kubernetes.io/managed-by": "gpufinops"},
			Annotations: annotations,
		},
		Data: data,
	}
}

func timeSlicingConfigMap(plan Plan) (*corev1.ConfigMap, error) {
	data := map[string]string{}
	var labels []string
	// A plan built elsewhere may lack config names; derive them as Build does.
	groups := slices.Clone(plan.Groups)
	missing := false
	for _, g := range groups {
		missing = missing || (g.Mode == TimeSlicing && g.Config == "")
	}
	if missing {
		assignConfigNames(groups)
	}
	for _, g := range groups {
		if g.Mode != TimeSlicing {
			continue
		}
		if !labelValue.MatchString(g.Config) {
			return nil, fmt.Errorf("sharing manifests: config name %q of %s %s is not a valid label value", g.Config, g.Provider, g.InstanceType)
		}
		if g.Replicas < 2 {
			return nil, fmt.Errorf("sharing manifests: group %s has %d replicas; time-slicing needs at least 2", g.Config, g.Replicas)
		}
		cfg := DevicePluginConfig{
			Version: "v1",
			Sharing: DevicePluginSharing{TimeSlicing: TimeSlicingConfig{
				RenameByDefault:            false,
				FailRequestsGreaterThanOne: true,
				Resources:                  []TimeSlicingResource{{Name: GPUResource, Replicas: g.Replicas}},
			}},
		}
		b, err := yaml.Marshal(cfg)
		if err != nil {
			return nil, fmt.Errorf("sharing manifests: %w", err)
		}
		if old, dup := data[g.Config]; dup && old != string(b) {
			return nil, fmt.Errorf("sharing manifests: two groups name their device plugin config %q with different replicas", g.Config)
		}
		data[g.Config] = string(b)
		for _, h := range g.Hosts {
			labels = append(labels, fmt.Sprintf("%s: %s=%s", h.InstanceID, DevicePluginLabel, g.Config))
		}
	}
	if len(data) == 0 {
		return nil, nil
	}
	slices.Sort(labels)
	return configMap(TimeSlicingConfigMap, data, map[string]string{
		AnnotationNodeLabels:    strings.Join(labels, "\n"),
		AnnotationClusterPolicy: "devicePlugin.config.name=" + TimeSlicingConfigMap,
	}), nil
}

func migConfigMap(plan Plan) (*corev1.ConfigMap, error) {
	cfg := MIGPartedConfig{Version: "v1", MIGConfigs: map[string][]MIGDeviceLayout{
		MIGDisabled: {{Devices: "all", MIGEnabled: false}},
	}}
	var labels []string
	for _, g := range plan.Groups {
		if g.Mode != MIG {
			continue
		}
		for _, h := range g.Hosts {
			if len(h.MIGDevices) == 0 {
				return nil, fmt.Errorf("sharing manifests: MIG host %s has no MIG devices", h.InstanceID)
			}
			name := h.MIGConfig
			if name == "" {
				name = MIGConfigName(h.MIGDevices)
			}
			if !labelValue.MatchString(name) {
				return nil, fmt.Errorf("sharing manifests: MIG config name %q of host %s is not a valid label value", name, h.InstanceID)
			}
			layout := []MIGDeviceLayout{{Devices: "all", MIGEnabled: true, MIGDevices: maps.Clone(h.MIGDevices)}}
			if old, dup := cfg.MIGConfigs[name]; dup && !maps.Equal(old[0].MIGDevices, layout[0].MIGDevices) {
				return nil, fmt.Errorf("sharing manifests: MIG config %q names two different layouts", name)
			}
			cfg.MIGConfigs[name] = layout
			labels = append(labels, fmt.Sprintf("%s: %s=%s", h.InstanceID, MIGLabel, name))
		}
	}
	if len(labels) == 0 {
		return nil, nil
	}
	b, err := yaml.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("sharing manifests: %w", err)
	}
	slices.Sort(labels)
	return configMap(MIGConfigMap, map[string]string{MIGConfigKey: string(b)}, map[string]string{
		AnnotationNodeLabels:    strings.Join(labels, "\n"),
		AnnotationClusterPolicy: "mig.strategy=mixed\nmigManager.enabled=true\nmigManager.config.name=" + MIGConfigMap,
	}), nil
}
