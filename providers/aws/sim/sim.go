// Package sim is a local AWS that speaks the wire protocols of the real
// services to the real SDK: EC2 and STS (query protocol, XML), CloudWatch
// (Smithy RPC v2 CBOR, AWS JSON 1.0 and query), Pricing (AWS JSON 1.1) and
// Savings Plans (REST JSON). It serves one fleet snapshot, keeps instance state
// so that a stop is visible, counts requests per operation, and injects
// latency, throttling and server errors at configurable rates.
//
// The cloud-neutral machinery (fault injection, counters, the control
// endpoints GET /_sim/state, GET /_sim/requests, POST /_sim/load and
// GET/POST /_sim/faults, page tokens, the series synthesizer) is
// providers/simkit's; this package keeps AWS's wire formats.
package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers/simkit"
)

// TypeInfo is what DescribeInstanceTypes and Pricing say of an instance type.
type TypeInfo struct {
	Name string
	// GPUs: model name and maker as AWS reports them (e.g. "A10G", "NVIDIA").
	GPUName, GPUManufacturer string
	GPUCount                 float64
	GPUMemoryMiB             int
	// Neuron is true for Inferentia/Trainium (NeuronInfo instead of GpuInfo).
	Neuron    bool
	VCPUs     int
	MemoryMiB int
	// InstanceStoreGB is the type's local NVMe instance store (all disks,
	// GB) in InstanceStorageInfo; InstanceStoreDisks the disk count (one when
	// zero).
	InstanceStoreGB    int
	InstanceStoreDisks int
}

// PriceRow is a type's list prices in one region (USD per hour).
type PriceRow struct {
	Region, InstanceType string
	OnDemand             string
	// Spot is the current spot price per zone; empty when none.
	Spot map[string]string
	// SavingsPlan1y and SavingsPlan3y are Compute Savings Plan no-upfront rates.
	SavingsPlan1y, SavingsPlan3y string
}

// Options configure the simulator.
type Options struct {
	// AccountID answers GetCallerIdentity and owns the fleet's instances
	// that name no account; default: the account most of the fleet's AWS
	// instances name, else 123456789012.
	AccountID string
	// Regions are the enabled regions (DescribeRegions); default: the
	// fleet's AWS regions.
	Regions []string
	// Types and Prices feed DescribeInstanceTypes, Pricing, spot price
	// history and Savings Plans.
	Types  []TypeInfo
	Prices []PriceRow
	// Latency is added to every request.
	Latency time.Duration
	// ThrottleRate and ErrorRate are the shares (0–1) of requests answered
	// with the service's throttling error and with HTTP 500.
	ThrottleRate, ErrorRate float64
	// FailRegions answer every request for those regions with HTTP 500.
	FailRegions []string
	// Delays and Hang are per-operation faults (see Faults).
	Delays map[string]time.Duration
	Hang   []string
	// Fault, when set, is asked before each request is served, with the
	// service ("ec2", "sts", "monitoring", "pricing", "savingsplans"), the
	// operation and the region; a non-zero status answers the request with
	// that status and error code in the service's own wire format, e.g.
	// 400 AccessDenied for CloudWatch GetMetricData in one region.
	Fault func(service, op, region string) (status int, code string)
	// Seed makes fault injection repeatable.
	Seed int64
	// Now is the simulator's clock: metric series end at Now.
	Now func() time.Time
	// Strict, when set, checks each request against the vendored botocore
	// model (providers/aws/sim/models) before it is served, and its answer
	// after; each violation is passed to Strict, and a request the model
	// forbids is answered with the service's validation error.
	Strict func(service, op string, violation error)
	// Kit, when set, is a fault middleware and counters shared with other
	// simulators (cmd/cloudsim); the fault fields above are then unused and
	// the Kit's own options apply (KitOptions maps them).
	Kit *simkit.Kit
}

// Faults are the per-operation faults: slow answers and hung requests
// (simkit.Faults). Keys are an operation ("StopInstances") or a service
// and operation ("ec2:StopInstances").
type Faults = simkit.Faults

// InstanceState is one instance's state as /_sim/state reports it.
type InstanceState = simkit.InstanceState

// KitOptions are the simkit options of the fault fields of o.
func KitOptions(o Options) simkit.Options {
	return simkit.Options{
		Latency: o.Latency, ThrottleRate: o.ThrottleRate, ErrorRate: o.ErrorRate,
		FailScopes: o.FailRegions, Fault: o.Fault, Delays: o.Delays, Hang: o.Hang, Seed: o.Seed, Ops: Ops,
	}
}

// dialect is how AWS words injected errors: its throttling codes,
// InternalError, "region".
var dialect = &simkit.Dialect{Throttle: throttle, InternalCode: "InternalError", ScopeKind: "region"}

// Server is the simulator; it is an http.Handler.
type Server struct {
	opts    Options
	inv     *simkit.Inventory // AWS instances of the fleet, in file order
	types   map[string]TypeInfo
	kit     *simkit.Kit
	control http.Handler

	// cwState is CloudWatch's series and what it has seen of stops.
	cwState cwState

	mu sync.Mutex
	// sessions maps the access keys AssumeRole issued to their role (sts.go).
	sessions map[string]session

	// held are the fleet's AWS commitments (commitments.go).
	held []fleet.Held
}

// ec2Only is f without its managed items: SageMaker machines run in the
// service's own account, so EC2 and CloudWatch's CWAgent never show them.
func ec2Only(f *fleet.Fleet) *fleet.Fleet {
	out := *f
	out.Instances = make([]fleet.Instance, 0, len(f.Instances))
	for _, in := range f.Instances {
		if !in.IsManaged() {
			out.Instances = append(out.Instances, in)
		}
	}
	return &out
}

// New builds a simulator serving the AWS instances of f.
func New(f *fleet.Fleet, opts Options) *Server {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.AccountID == "" {
		opts.AccountID = fleetAccount(f)
	}
	s := &Server{
		opts:  opts,
		inv:   simkit.NewInventory(ec2Only(f), fleet.AWS, opts.AccountID),
		types: map[string]TypeInfo{},
		kit:   opts.Kit,
		held:  heldOf(f, opts.AccountID),
	}
	if s.kit == nil {
		s.kit = simkit.MustNew(KitOptions(opts))
	}
	s.control = s.kit.Control(s)
	if len(s.opts.Regions) == 0 {
		s.opts.Regions = s.inv.Scopes()
	}
	for _, t := range opts.Types {
		s.types[t.Name] = t
	}
	return s
}

// protocol is a wire format; it decides how errors are written.
type protocol int

const (
	protoEC2Query protocol = iota // EC2: form in, XML out, <Response><Errors>
	protoAWSQuery                 // STS, CloudWatch query: form in, XML out, <ErrorResponse>
	protoJSON10                   // CloudWatch AWS JSON 1.0
	protoJSON11                   // Pricing AWS JSON 1.1
	protoRESTJSON                 // Savings Plans
	protoCBOR                     // CloudWatch Smithy RPC v2 CBOR
)

// request is one parsed call.
type request struct {
	service, op string
	proto       protocol
	region      string
	accessKey   string // SigV4 access key ID; "" when unsigned
	form        url.Values
	body        []byte
}

var credentialScope = regexp.MustCompile(`Credential=[^/]+/\d{8}/([a-z0-9-]+)/([a-z0-9-]+)/aws4_request`)

// regionOf reads the region from the SigV4 credential scope; unsigned
// requests count as us-east-1.
func regionOf(r *http.Request) string {
	if m := credentialScope.FindStringSubmatch(r.Header.Get("Authorization")); m != nil {
		return m[1]
	}
	return "us-east-1"
}

// ServeHTTP serves the control endpoints and every AWS request it
// recognises, through the kit's faults and counters.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if simkit.IsControl(r) {
		s.control.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req, ok := classify(r, body)
	if !ok {
		http.Error(w, "gpufinops aws sim: unrecognised request "+r.Method+" "+r.URL.Path, http.StatusBadRequest)
		return
	}
	call := simkit.Call{
		Service: req.service, Op: req.op, Scope: req.region, Dialect: dialect,
		WriteError: func(w http.ResponseWriter, status int, code, msg string) {
			writeError(w, req, status, code, msg)
		},
	}
	if s.opts.Strict == nil {
		s.kit.Serve(w, r, call, func(w http.ResponseWriter) { s.serve(w, req) })
		return
	}
	if _, _, err := CheckRequest(r, body); err != nil {
		s.opts.Strict(req.service, req.op, fmt.Errorf("request: %w", err))
		writeError(w, req, http.StatusBadRequest, validationError(req.service), err.Error())
		return
	}
	cw := &captureWriter{ResponseWriter: w}
	s.kit.Serve(cw, r, call, func(w http.ResponseWriter) { s.serve(w, req) })
	if r.Context().Err() != nil || cw.status == 0 {
		return
	}
	if err := CheckAnswer(r, body, cw.status, cw.Header(), cw.body.Bytes()); err != nil {
		s.opts.Strict(req.service, req.op, fmt.Errorf("answer (HTTP %d): %w", cw.status, err))
	}
}

// Claims reports whether a request is one of AWS's (simkit.Sim).
func (s *Server) Claims(r *http.Request, body []byte) bool {
	_, ok := classify(r, body)
	return ok
}

// Ops are the operations the simulator answers, as "service:Op".
var Ops = append([]string{
	"ec2:DescribeRegions", "ec2:DescribeInstances", "ec2:DescribeInstanceTypes", "ec2:DescribeSpotPriceHistory", "ec2:DescribeSpotInstanceRequests", "ec2:StopInstances",
	"sts:GetCallerIdentity", "sts:AssumeRole",
	"monitoring:ListMetrics", "monitoring:GetMetricData",
	"pricing:GetProducts", "pricing:DescribeServices",
	"savingsplans:DescribeSavingsPlansOfferingRates",
}, commitmentOps...)

// serve answers a parsed request.
func (s *Server) serve(w http.ResponseWriter, req request) {
	if s.serveCommitments(w, req) {
		return
	}
	switch req.service {
	case "ec2":
		s.serveEC2(w, req)
	case "sts":
		s.serveSTS(w, req)
	case "monitoring":
		s.serveCloudWatch(w, req)
	case "pricing":
		s.servePricing(w, req)
	case "savingsplans":
		s.serveSavingsPlans(w, req)
	}
}

// classify recognises the service, operation and protocol of a request.
func classify(r *http.Request, body []byte) (request, bool) {
	req := request{region: regionOf(r), accessKey: accessKeyOf(r), body: body}
	target := r.Header.Get("X-Amz-Target")
	switch {
	case strings.HasPrefix(r.URL.Path, "/service/GraniteServiceVersion20100801/operation/"):
		req.service, req.proto = "monitoring", protoCBOR
		req.op = strings.TrimPrefix(r.URL.Path, "/service/GraniteServiceVersion20100801/operation/")
		return req, true
	case strings.HasPrefix(target, "GraniteServiceVersion20100801."):
		req.service, req.proto, req.op = "monitoring", protoJSON10, strings.TrimPrefix(target, "GraniteServiceVersion20100801.")
		return req, true
	case strings.HasPrefix(target, "AWSPriceListService."):
		req.service, req.proto, req.op = "pricing", protoJSON11, strings.TrimPrefix(target, "AWSPriceListService.")
		return req, true
	case r.URL.Path == "/DescribeSavingsPlansOfferingRates" || r.URL.Path == "/DescribeSavingsPlansOfferings" || r.URL.Path == "/DescribeSavingsPlans":
		req.service, req.proto, req.op = "savingsplans", protoRESTJSON, strings.TrimPrefix(r.URL.Path, "/")
		return req, true
	}
	form, err := url.ParseQuery(string(body))
	if err != nil || form.Get("Action") == "" {
		return req, false
	}
	req.form, req.op = form, form.Get("Action")
	switch form.Get("Version") {
	case "2016-11-15":
		req.service, req.proto = "ec2", protoEC2Query
	case "2011-06-15":
		req.service, req.proto = "sts", protoAWSQuery
	case "2010-08-01":
		req.service, req.proto = "monitoring", protoAWSQuery
	default:
		return req, false
	}
	return req, true
}

func throttle(c simkit.Call) (status int, code string) { return Throttle(c.Service) }

// Throttle is AWS's throttling answer for a request to service, which the
// simulator's throttling sends and an Options.Fault may too: EC2
// RequestLimitExceeded (HTTP 503), Pricing and Savings Plans
// ThrottlingException, STS and CloudWatch Throttling (HTTP 400).
func Throttle(service string) (status int, code string) {
	switch service {
	case "ec2":
		return http.StatusServiceUnavailable, "RequestLimitExceeded"
	case "pricing", "savingsplans":
		return http.StatusBadRequest, "ThrottlingException"
	default:
		return http.StatusBadRequest, "Throttling"
	}
}

// Counts returns the requests served so far: service → operation → count.
func (s *Server) Counts() map[string]map[string]int { return s.kit.Counts() }

// ResetCounts zeroes the request counters.
func (s *Server) ResetCounts() { s.kit.ResetCounts() }

// SetFaults replaces the per-operation faults; negative delays and empty
// keys are refused. POST /_sim/faults does the same over HTTP.
func (s *Server) SetFaults(f Faults) error { return s.kit.SetFaults(f) }

// CurrentFaults returns the per-operation faults in effect.
func (s *Server) CurrentFaults() Faults { return s.kit.CurrentFaults() }

// State returns every instance's current state, in fleet order.
func (s *Server) State() []InstanceState { return s.inv.State() }

// Now is the simulator's clock (Options.Now).
func (s *Server) Now() time.Time { return s.opts.Now() }

// stateOf returns an instance's current state.
func (s *Server) stateOf(id string) string { return s.inv.StateOf(id) }

// writeError answers in the error format of the request's protocol, so that
// the SDK surfaces it as a smithy.APIError with that code.
func writeError(w http.ResponseWriter, req request, status int, code, msg string) {
	requestID := fmt.Sprintf("sim-%d", time.Now().UnixNano())
	switch req.proto {
	case protoEC2Query:
		w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
		w.WriteHeader(status)
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+`<Response><Errors><Error><Code>%s</Code><Message>%s</Message></Error></Errors><RequestID>%s</RequestID></Response>`, xmlEscape(code), xmlEscape(msg), requestID)
	case protoAWSQuery:
		w.Header().Set("Content-Type", "text/xml")
		w.WriteHeader(status)
		kind := "Sender"
		if status >= 500 {
			kind = "Receiver"
		}
		fmt.Fprintf(w, `<ErrorResponse><Error><Type>%s</Type><Code>%s</Code><Message>%s</Message></Error><RequestId>%s</RequestId></ErrorResponse>`, kind, xmlEscape(code), xmlEscape(msg), requestID)
	case protoJSON10:
		// CloudWatch, query-compatible: __type is the modelled shape and
		// X-Amzn-Query-Error the query code, as in CBOR.
		typ, fault := cwErrorShape(status, code)
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.Header().Set("X-Amzn-Query-Error", code+";"+fault)
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]string{"__type": typ, "message": msg})
	case protoJSON11:
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]string{"__type": code, "message": msg})
	case protoRESTJSON:
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Amzn-ErrorType", code)
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]string{"message": msg})
	case protoCBOR:
		writeCBORError(w, status, code, msg)
	}
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}
