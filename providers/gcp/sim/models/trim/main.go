// Command trim writes the trimmed Google discovery documents that
// providers/gcp/sim/models embeds: only the methods the simulator serves
// and the schemas they reach, without descriptions. The documents are read
// from the google.golang.org/api module that go.mod requires (its module
// cache copy):
//
//	go run ./providers/gcp/sim/models/trim
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// apis are the discovery documents trimmed: the file name written, the
// document's path in the module and the method IDs kept.
var apis = []struct {
	name, path string
	methods    []string
}{
	{"compute", "compute/v1/compute-api.json", []string{
		"compute.instances.aggregatedList", "compute.instances.get", "compute.instances.stop", "compute.instances.testIamPermissions",
		"compute.zoneOperations.get", "compute.zoneOperations.wait", "compute.machineTypes.get", "compute.machineTypes.aggregatedList",
		"compute.regions.list", "compute.regionCommitments.aggregatedList", "compute.reservations.aggregatedList",
		"compute.resourcePolicies.aggregatedList",
	}},
	{"cloudbilling", "cloudbilling/v1/cloudbilling-api.json", []string{"cloudbilling.services.skus.list"}},
	{"cloudresourcemanager", "cloudresourcemanager/v3/cloudresourcemanager-api.json", []string{"cloudresourcemanager.projects.search"}},
	{"monitoring", "monitoring/v3/monitoring-api.json", []string{"monitoring.projects.timeSeries.list"}},
	{"aiplatform", "aiplatform/v1/aiplatform-api.json", []string{
		"aiplatform.projects.locations.list", "aiplatform.projects.locations.endpoints.list", "aiplatform.projects.locations.customJobs.list",
	}},
	{"notebooks", "notebooks/v2/notebooks-api.json", []string{
		"notebooks.projects.locations.instances.list", "notebooks.projects.locations.instances.get",
		"notebooks.projects.locations.instances.stop", "notebooks.projects.locations.operations.get",
	}},
}

func main() {
	out := flag.String("out", "providers/gcp/sim/models", "directory to write")
	flag.Parse()
	b, err := exec.Command("go", "list", "-m", "-json", "google.golang.org/api").Output()
	must(err)
	var mod struct{ Path, Version, Dir string }
	must(json.Unmarshal(b, &mod))
	for _, a := range apis {
		raw, err := os.ReadFile(filepath.Join(mod.Dir, a.path))
		must(err)
		var doc map[string]any
		must(json.Unmarshal(raw, &doc))
		t := trim(doc, a.methods)
		t["x-source"] = fmt.Sprintf("%s@%s %s", mod.Path, mod.Version, a.path)
		js, err := json.MarshalIndent(t, "", " ")
		must(err)
		must(os.WriteFile(filepath.Join(*out, a.name+".json"), append(js, '\n'), 0o644))
	}
	fmt.Println(mod.Path, mod.Version)
}

// trim keeps the methods named, the schemas they reach and the document's
// service-wide fields; descriptions are dropped.
func trim(doc map[string]any, keep []string) map[string]any {
	schemas := doc["schemas"].(map[string]any)
	kept := map[string]any{}
	var reach func(v any)
	reach = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if ref, ok := x["$ref"].(string); ok {
				if _, done := kept[ref]; !done {
					kept[ref] = nil
					s := undescribed(schemas[ref].(map[string]any))
					kept[ref] = s
					reach(s)
				}
			}
			for _, e := range x {
				reach(e)
			}
		case []any:
			for _, e := range x {
				reach(e)
			}
		}
	}
	found := map[string]bool{}
	var resources func(rs map[string]any) map[string]any
	resources = func(rs map[string]any) map[string]any {
		out := map[string]any{}
		for name, r := range rs {
			res := r.(map[string]any)
			o := map[string]any{}
			if ms, ok := res["methods"].(map[string]any); ok {
				km := map[string]any{}
				for mn, m := range ms {
					mm := m.(map[string]any)
					for _, id := range keep {
						if mm["id"] == id {
							km[mn] = undescribed(mm)
							found[id] = true
							reach(mm)
						}
					}
				}
				if len(km) > 0 {
					o["methods"] = km
				}
			}
			if sub, ok := res["resources"].(map[string]any); ok {
				if s := resources(sub); len(s) > 0 {
					o["resources"] = s
				}
			}
			if len(o) > 0 {
				out[name] = o
			}
		}
		return out
	}
	res := resources(doc["resources"].(map[string]any))
	for _, id := range keep {
		if !found[id] {
			log.Fatalf("trim: no method %s", id)
		}
	}
	out := map[string]any{"schemas": kept, "resources": res, "parameters": undescribed(doc["parameters"].(map[string]any))}
	for _, k := range []string{"name", "version", "rootUrl", "servicePath", "revision", "id"} {
		out[k] = doc[k]
	}
	return out
}

// undescribed is v without description strings, at every depth.
func undescribed(v map[string]any) map[string]any {
	out := map[string]any{}
	for k, x := range v {
		if _, isMap := x.(map[string]any); !isMap && (k == "description" || k == "enumDescriptions" || k == "enumDeprecated" || strings.HasPrefix(k, "x-")) {
			continue // a property named "description" is a map and stays
		}
		if m, ok := x.(map[string]any); ok {
			x = undescribed(m)
		}
		out[k] = x
	}
	return out
}

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
