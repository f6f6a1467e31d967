// Package schematest generates the JSON Schemas of the commands' JSON
// outputs into docs/schema/ (cmd/gen-schemas) and tests that every
// command's real `-o json` output validates against its committed schema,
// and that the committed schemas are up to date.
//
// The analyze report (report.schema.json) and the fleet snapshot
// (fleet.schema.json) have their own generators; the schemas here are the
// other outputs. Where a command's JSON document is an unexported type, the
// schema is reflected from a mirror declared here with the same JSON shape;
// the mirrors forbid unknown properties, so the validation test fails as
// soon as a command's output and its mirror drift apart.
package schematest

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sort"
	"time"

	"github.com/invopop/jsonschema"
	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/commitplan"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/governance"
	"github.com/gpufinops/gpufinops/pkg/idlestop"
	"github.com/gpufinops/gpufinops/pkg/sharing"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/providers"
)

// BaseID is where the schemas are published.
const BaseID = "https://raw.githubusercontent.com/gpufinops/gpufinops/main/docs/schema/"

// Output is one command's JSON output and its schema file.
type Output struct {
	// File is the schema's name in docs/schema/.
	File string
	// Command is the command line that writes the document.
	Command string
	// Type is a value of the document's Go type (or its mirror).
	Type any
}

// Outputs are the JSON outputs whose schemas are generated here.
var Outputs = []Output{
	{"prices.schema.json", "gpufinops prices -o json", &[]PriceRow{}},
	{"sharing-plan.schema.json", "gpufinops sharing plan -o json", &sharing.Plan{}},
	{"commit-plan.schema.json", "gpufinops commit-plan -o json", &commitplan.Plan{}},
	{"tags-audit.schema.json", "gpufinops tags audit -o json", &TagsAudit{}},
	{"idle-stop.schema.json", "gpufinops idle-stop -o json", &IdleStop{}},
	{"doctor.schema.json", "gpufinops doctor -o json", &Doctor{}},
}

// PriceRow mirrors one offer of `gpufinops prices -o json` (an array of them).
type PriceRow struct {
	Provider         fleet.Provider      `json:"provider"`
	Region           string              `json:"region"`
	InstanceType     string              `json:"instanceType"`
	Family           string              `json:"family,omitempty"`
	GPUModel         string              `json:"gpuModel"`
	GPUCount         float64             `json:"gpuCount"`
	GPUMemoryGiB     float64             `json:"gpuMemoryGiB"`
	VCPUs            float64             `json:"vcpus"`
	MemoryGiB        float64             `json:"memoryGiB"`
	Arch             string              `json:"arch"`
	Currency         string              `json:"currency"`
	OnDemandHourly   *json.Number        `json:"onDemandHourly" jsonschema:"oneof_type=number;null"`
	SpotHourly       *json.Number        `json:"spotHourly" jsonschema:"oneof_type=number;null"`
	SpotZone         string              `json:"spotZone,omitempty"`
	PerGPUHourly     *json.Number        `json:"perGpuHourly" jsonschema:"oneof_type=number;null"`
	SpotPerGPUHourly *json.Number        `json:"spotPerGpuHourly" jsonschema:"oneof_type=number;null"`
	SpotAdvice       *pricing.SpotAdvice `json:"spotAdvice,omitempty"`
	Source           string              `json:"source"`
	AsOf             string              `json:"asOf"`
	// OnDemandAgeDays, SpotAgeDays and SpotAdviceAgeDays are days since each
	// one's as-of date; null when there is no such price.
	OnDemandAgeDays   *int `json:"onDemandAgeDays" jsonschema:"oneof_type=integer;null"`
	SpotAgeDays       *int `json:"spotAgeDays" jsonschema:"oneof_type=integer;null"`
	SpotAdviceAgeDays *int `json:"spotAdviceAgeDays,omitempty"`
}

// TagsAudit mirrors the `gpufinops tags audit -o json` document.
type TagsAudit struct {
	GeneratedAt time.Time `json:"generatedAt"`
	Currency    string    `json:"currency"`
	Fleet       struct {
		Name   string `json:"name,omitempty"`
		Source string `json:"source"`
	} `json:"fleet"`
	governance.Report
}

// IdleStop mirrors the `gpufinops idle-stop -o json` document.
type IdleStop struct {
	Machines []idlestop.Decision `json:"machines"`
	Summary  idlestop.Summary    `json:"summary"`
}

// Doctor mirrors the `gpufinops doctor -o json` document (pkg/cmd/doctor's
// Report: command packages are imported by commands only).
type Doctor struct {
	Scopes []struct {
		Scope  providers.Scope   `json:"scope"`
		Checks []providers.Check `json:"checks"`
	} `json:"scopes"`
	Summary struct {
		OK      int `json:"ok"`
		Missing int `json:"missing"`
		Warn    int `json:"warn"`
		Error   int `json:"error"`
	} `json:"summary"`
}

// Generate returns every schema, by file name, as indented JSON.
func Generate() (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, o := range Outputs {
		r := &jsonschema.Reflector{ExpandedStruct: true, Mapper: mapType}
		s := r.Reflect(o.Type)
		s.ID = jsonschema.ID(BaseID + o.File)
		s.Title = o.Command
		s.Description = "The document `" + o.Command + "` writes. Generated from the Go types by `go run ./cmd/gen-schemas`."
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			return nil, err
		}
		out[o.File] = b.Bytes()
	}
	return out, nil
}

// Files lists the generated schema files, sorted.
func Files() []string {
	var out []string
	for _, o := range Outputs {
		out = append(out, o.File)
	}
	sort.Strings(out)
	return out
}

// mapType gives the schema of types whose JSON form is not their Go shape:
// decimals are numbers or decimal strings, json.Number a number.
func mapType(t reflect.Type) *jsonschema.Schema {
	switch t {
	case reflect.TypeFor[decimal.Decimal]():
		return &jsonschema.Schema{AnyOf: []*jsonschema.Schema{{Type: "number"}, {Type: "string", Pattern: `^-?[0-9]+(\.[0-9]+)?$`}}}
	case reflect.TypeFor[json.Number](), reflect.TypeFor[governance.Money](), reflect.TypeFor[governance.UnitCost](), reflect.TypeFor[idlestop.Amount]():
		return &jsonschema.Schema{Type: "number"}
	}
	return nil
}
