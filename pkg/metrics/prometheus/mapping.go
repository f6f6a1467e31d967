package prometheus

import (
	"strings"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// mapper finds the instance a series belongs to: by its instance-ID label,
// then its host label (the instance's name or Hostname tag), then its
// Kubernetes node label (a providerID, or a node name resolved through
// kube_node_info, or a node named like the host).
type mapper struct {
	s      *Source
	byID   map[string]int
	byHost map[string]int
	nodes  map[string]string // node name → providerID
	cache  map[string]int
}

func (s *Source) newMapper(instances []fleet.Instance, running []int, nodes map[string]string) *mapper {
	m := &mapper{s: s, byID: map[string]int{}, byHost: map[string]int{}, nodes: nodes, cache: map[string]int{}}
	for _, i := range running {
		in := instances[i]
		m.byID[in.ID] = i
		m.byID[strings.ToLower(in.ID)] = i
		for _, h := range []string{in.Name, in.Tags["Hostname"], in.Tags["hostname"]} {
			if h != "" {
				m.byHost[strings.ToLower(h)] = i
			}
		}
	}
	return m
}

// resolve gives the instance index of a series' labels.
func (m *mapper) resolve(metric map[string]string) (int, bool) {
	id := (metric[m.s.opts.InstanceLabel])
	host := (metric[m.s.opts.HostLabel])
	node := (metric[m.s.opts.NodeLabel])
	key := id + "\x00" + host + "\x00" + node
	if i, ok := m.cache[key]; ok {
		return i, i >= 0
	}
	i, ok := m.lookup(id, host, node)
	if !ok {
		i = -1
	}
	m.cache[key] = i
	return i, ok
}

func (m *mapper) lookup(id, host, node string) (int, bool) {
	if id != "" {
		if i, ok := m.byID[id]; ok {
			return i, true
		}
		if i, ok := m.byID[strings.ToLower(id)]; ok {
			return i, true
		}
	}
	if host != "" {
		if i, ok := m.byHost[hostName(host)]; ok {
			return i, true
		}
	}
	if node == "" {
		return 0, false
	}
	if strings.Contains(node, "://") {
		return m.providerID(node)
	}
	if p, ok := m.nodes[node]; ok {
		if i, ok := m.providerID(p); ok {
			return i, true
		}
	}
	i, ok := m.byHost[hostName(node)]
	return i, ok
}

// providerID matches a Kubernetes providerID: "aws:///us-east-1a/i-0abc",
// "gce://project/zone/name", "azure:///subscriptions/…/virtualMachines/name".
// The whole resource path (Azure IDs) or its last segment is an instance ID
// or name.
func (m *mapper) providerID(p string) (int, bool) {
	_, path, ok := strings.Cut(p, "://")
	if !ok {
		return 0, false
	}
	path = strings.Trim(path, "/")
	if i, ok := m.byID[strings.ToLower("/"+path)]; ok {
		return i, true
	}
	last := path[strings.LastIndexByte(path, '/')+1:]
	if last == "" {
		return 0, false
	}
	if i, ok := m.byID[last]; ok {
		return i, true
	}
	if i, ok := m.byID[strings.ToLower(last)]; ok {
		return i, true
	}
	i, ok := m.byHost[strings.ToLower(last)]
	return i, ok
}

// hostName lowercases a host and drops a ":port" suffix.
func hostName(h string) string {
	h = strings.ToLower(h)
	if i := strings.LastIndexByte(h, ':'); i > 0 && !strings.Contains(h[i+1:], ".") && !strings.Contains(h[:i], ":") {
		h = h[:i]
	}
	return h
}
