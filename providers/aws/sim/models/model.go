// Package models holds trimmed copies of botocore's service models (the
// machine-readable API definitions the AWS SDKs are generated from) for the
// operations the simulators serve, and checks requests, answers and error
// envelopes against them: unknown and missing members, types, enum values,
// lengths and ranges, timestamps, and each protocol's error body.
//
// The models are data from github.com/boto/botocore (Apache-2.0, see
// LICENSE, NOTICE and README.md); go run ./providers/aws/sim/models/trim
// writes them again.
package models

import (
	"embed"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"sync"
)

//go:embed *.json
var files embed.FS

// Model is one service's trimmed botocore model.
type Model struct {
	// Service is the model's file name: "ec2", "sts", "monitoring",
	// "pricing", "savingsplans" or "athena".
	Service    string
	Metadata   Metadata              `json:"metadata"`
	Operations map[string]*Operation `json:"operations"`
	Shapes     map[string]*Shape     `json:"shapes"`
	Pagination map[string]Paginator  `json:"pagination"`
	// Source names the botocore commit and files the model was trimmed from.
	Source string `json:"x-source"`

	patterns sync.Map // pattern → *regexp.Regexp or nil when Go cannot compile it
}

// Metadata is the service-wide part of a model.
type Metadata struct {
	APIVersion   string   `json:"apiVersion"`
	Protocol     string   `json:"protocol"`
	Protocols    []string `json:"protocols"`
	TargetPrefix string   `json:"targetPrefix"`
	JSONVersion  string   `json:"jsonVersion"`
	XMLNamespace string   `json:"xmlNamespace"`
	// AWSQueryCompatible is set for JSON and CBOR services that once spoke
	// the query protocol: their errors carry x-amzn-query-error.
	AWSQueryCompatible map[string]any `json:"awsQueryCompatible"`
}

// Operation is one API operation.
type Operation struct {
	Name string `json:"name"`
	HTTP struct {
		Method     string `json:"method"`
		RequestURI string `json:"requestUri"`
	} `json:"http"`
	Input  *Ref  `json:"input"`
	Output *Ref  `json:"output"`
	Errors []Ref `json:"errors"`
}

// Ref points at a shape, with how a member is named on the wire.
type Ref struct {
	Shape         string `json:"shape"`
	LocationName  string `json:"locationName"`
	QueryName     string `json:"queryName"`
	ResultWrapper string `json:"resultWrapper"`
	Flattened     bool   `json:"flattened"`
}

// Shape is a botocore shape.
type Shape struct {
	Type      string          `json:"type"`
	Members   map[string]*Ref `json:"members"`
	Required  []string        `json:"required"`
	Member    *Ref            `json:"member"`
	Key       *Ref            `json:"key"`
	Value     *Ref            `json:"value"`
	Enum      []string        `json:"enum"`
	Min       *float64        `json:"min"`
	Max       *float64        `json:"max"`
	Pattern   string          `json:"pattern"`
	Flattened bool            `json:"flattened"`
	// Exception shapes: Error.Code is the code on the wire when it is not
	// the shape's name (query-compatible services).
	Exception bool `json:"exception"`
	Error     *struct {
		Code           string `json:"code"`
		HTTPStatusCode int    `json:"httpStatusCode"`
		SenderFault    bool   `json:"senderFault"`
	} `json:"error"`
}

// Paginator is a paginators-1.json entry: which input member carries the
// page token, which output member returns it and which limits a page.
type Paginator struct {
	InputToken  any    `json:"input_token"`
	OutputToken any    `json:"output_token"`
	LimitKey    string `json:"limit_key"`
	ResultKey   any    `json:"result_key"`
}

var (
	loadMu sync.Mutex
	loaded = map[string]*Model{}
)

// Services are the services whose models are vendored.
func Services() []string {
	entries, _ := files.ReadDir(".")
	var out []string
	for _, e := range entries {
		out = append(out, e.Name()[:len(e.Name())-len(".json")])
	}
	sort.Strings(out)
	return out
}

// Load returns a service's model, parsed once.
func Load(service string) (*Model, error) {
	loadMu.Lock()
	defer loadMu.Unlock()
	if m, ok := loaded[service]; ok {
		return m, nil
	}
	b, err := files.ReadFile(service + ".json")
	if err != nil {
		return nil, fmt.Errorf("models: no model for service %q", service)
	}
	m := &Model{Service: service}
	if err := json.Unmarshal(b, m); err != nil {
		return nil, fmt.Errorf("models: %s: %w", service, err)
	}
	for name, op := range m.Operations {
		op.Name = name
	}
	loaded[service] = m
	return m, nil
}

// MustLoad is Load for services known to be vendored.
func MustLoad(service string) *Model {
	m, err := Load(service)
	if err != nil {
		panic(err)
	}
	return m
}

// OperationNames are the model's operations, sorted.
func (m *Model) OperationNames() []string {
	out := make([]string, 0, len(m.Operations))
	for n := range m.Operations {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func (m *Model) pattern(p string) *regexp.Regexp {
	if re, ok := m.patterns.Load(p); ok {
		return re.(*regexp.Regexp)
	}
	re, err := regexp.Compile(p)
	if err != nil {
		re = nil
	}
	m.patterns.Store(p, re)
	return re
}

// Tokens names a paginator's input and output token members (the first
// of each when there are several).
func (p Paginator) Tokens() (in, out string) {
	first := func(v any) string {
		switch x := v.(type) {
		case string:
			return x
		case []any:
			if len(x) > 0 {
				s, _ := x[0].(string)
				return s
			}
		}
		return ""
	}
	return first(p.InputToken), first(p.OutputToken)
}
