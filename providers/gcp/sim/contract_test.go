package sim_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/monitoring/apiv3/v2/monitoringpb"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/providers/gcp/sim"
	"github.com/gpufinops/gpufinops/providers/gcp/simcat"
	"github.com/gpufinops/gpufinops/providers/simkit"
)

// Contract tests: every exchange with the simulator is checked against the
// discovery documents and the monitoringpb descriptors
// (providers/gcp/sim/models), and the checks are shown to fail on corrupted
// answers (corrupt_test.go).

var contractNow = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

// recorded is one request and its answer.
type recorded struct {
	r      *http.Request
	req    []byte
	status int
	header http.Header
	body   []byte
}

// contractRecorder checks each request and answer that passes through it.
type contractRecorder struct {
	h          http.Handler
	mu         sync.Mutex
	checked    map[string]map[string]int // "service:Op" → "answer"/"error" → count
	violations []string
	last       map[string]recorded // "service:Op answer|error" → the last one
}

func (c *contractRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if simkit.IsControl(r) {
		c.h.ServeHTTP(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	service, op := sim.OpOf(r)
	reqErr := sim.CheckRequest(r, body)
	rec := httptest.NewRecorder()
	c.h.ServeHTTP(rec, r)
	answer := rec.Body.Bytes()
	ansErr := sim.CheckAnswer(r, rec.Code, rec.Header(), answer)
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	w.Write(answer)

	kind := "answer"
	if rec.Code >= 300 || (rec.Header().Get(http.TrailerPrefix+"Grpc-Status") != "" && rec.Header().Get(http.TrailerPrefix+"Grpc-Status") != "0") {
		kind = "error"
	}
	key := service + ":" + op
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.checked[key] == nil {
		c.checked[key] = map[string]int{}
	}
	c.checked[key][kind]++
	c.last[key+" "+kind] = recorded{r: r, req: body, status: rec.Code, header: rec.Header().Clone(), body: answer}
	if reqErr != nil {
		c.violations = append(c.violations, fmt.Sprintf("%s request: %v", key, reqErr))
	}
	if ansErr != nil {
		c.violations = append(c.violations, fmt.Sprintf("%s %s (HTTP %d): %v", key, kind, rec.Code, ansErr))
	}
}

// contractFleet is GPU VMs over two regions, some stopped, one with Local SSD.
func contractFleet() *fleet.Fleet {
	w := fleet.TimeRange{Start: contractNow.Add(-7 * 24 * time.Hour), End: contractNow}
	f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind}
	for i := range 12 {
		in := fleet.Instance{
			ID: fmt.Sprintf("vm-%02d", i), Provider: fleet.GCP, Account: "proj-contract", Region: "us-central1", Zone: "us-central1-a",
			InstanceType: "a2-highgpu-1g", GPU: fleet.GPU{Model: "A100", Count: 1, MemoryGiB: 40}, Lifecycle: fleet.OnDemand, State: fleet.Running,
			Utilization: &fleet.Utilization{Window: &w, GPU: &fleet.Stats{Avg: float64(5 * i), P95: float64(6 * i), Max: float64(7 * i)}},
			Tags:        map[string]string{"team": "ml"},
		}
		if i%3 == 1 {
			in.Region, in.Zone, in.InstanceType, in.GPU = "europe-west4", "europe-west4-b", "g2-standard-8", fleet.GPU{Model: "L4", Count: 1, MemoryGiB: 24}
		}
		if i%4 == 0 {
			in.PlacementGroups = []string{"compact-a2"} // served as resourcePolicies
		}
		if i%3 == 1 || i%4 == 0 {
			in.ResourcePolicies = []string{"nightly-stop"} // an instance schedule, in two regions
		}
		if i%4 == 3 {
			in.State = fleet.Stopped
		}
		if i%5 == 4 {
			in.Lifecycle = fleet.Spot
		}
		f.Instances = append(f.Instances, in)
	}
	// Commitments held: resource-based CUDs (one expired, one to come)
	// and specific reservations, in both regions.
	at := func(months int) *time.Time { t := contractNow.AddDate(0, months, 0); return &t }
	cud := func(name, region string, start, end int, gpu string) fleet.Held {
		return fleet.Held{ID: name, Provider: fleet.GCP, Account: "proj-contract", Kind: "resource-cud", Scope: fleet.HeldScope{Level: "region", Region: region},
			Term: "1y", Payment: "monthly", Start: at(start), End: at(end),
			Resources: []fleet.HeldResource{{Type: "vcpu", Amount: 12}, {Type: "memory", Amount: 85}, {Type: "gpu", GPUModel: gpu, Amount: 1}, {Type: "local-ssd", Amount: 375}}}
	}
	res := func(name, zone, machine string, count float64) fleet.Held {
		return fleet.Held{ID: name, Provider: fleet.GCP, Account: "proj-contract", Kind: "gcp-reservation",
			Scope: fleet.HeldScope{Level: "zone", Region: zone[:len(zone)-2], Zone: zone}, InstanceType: machine, Count: count}
	}
	f.Commitments = []fleet.Held{
		cud("cud-a100", "us-central1", -2, 10, "A100"), cud("cud-a100-old", "us-central1", -14, -2, "A100"),
		cud("cud-l4", "europe-west4", 1, 13, "L4"),
		res("res-a2", "us-central1-a", "a2-highgpu-1g", 4), res("res-a2-b", "us-central1-b", "a2-highgpu-1g", 1),
		res("res-g2", "europe-west4-b", "g2-standard-8", 2),
	}
	f.Commitments[4].Scope.Accounts = []string{"proj-contract", "proj-shared"}
	end := contractNow.AddDate(0, 1, 0)
	f.Commitments[5].End = &end
	return f
}

// contractManaged are Vertex AI items: an endpoint of two deployed
// models, a running and a finished custom job, a Workbench instance.
func contractManaged() []fleet.Instance {
	at := contractNow.Add(-30 * 24 * time.Hour)
	one, three := 1, 3
	item := func(id, name, typ string, gpu fleet.GPU, m fleet.Managed) fleet.Instance {
		return fleet.Instance{ID: id, Name: name, Provider: fleet.GCP, Account: "proj-contract", Region: "us-central1", InstanceType: typ, GPU: gpu,
			State: fleet.Running, LaunchTime: &at, Tags: map[string]string{"team": "ml"}, Managed: &m}
	}
	const p = "projects/proj-contract/locations/us-central1/"
	t4 := fleet.GPU{Model: "T4", Count: 1, MemoryGiB: 16}
	out := []fleet.Instance{
		item(p+"endpoints/11/deployedModels/21", "scorer/21", "n1-standard-8", t4, fleet.Managed{Service: fleet.VertexAI, Kind: fleet.KindEndpoint,
			Workspace: "us-central1", Endpoint: "11", Deployment: "21", Replicas: &fleet.Replicas{Current: 2, Min: &one, Max: &three}}),
		item(p+"endpoints/11/deployedModels/22", "scorer/22", "g2-standard-8", fleet.GPU{Model: "L4", Count: 1, MemoryGiB: 24}, fleet.Managed{Service: fleet.VertexAI,
			Kind: fleet.KindEndpoint, Workspace: "us-central1", Endpoint: "11", Deployment: "22", Replicas: &fleet.Replicas{Current: 1}}),
		item(p+"customJobs/31", "train-31", "a2-highgpu-1g", fleet.GPU{Model: "A100", Count: 1, MemoryGiB: 40}, fleet.Managed{Service: fleet.VertexAI,
			Kind: fleet.KindTrainingJob, Workspace: "us-central1", Replicas: &fleet.Replicas{Current: 2}}),
		item(p+"customJobs/32", "train-32", "n1-standard-4", t4, fleet.Managed{Service: fleet.VertexAI, Kind: fleet.KindTrainingJob, Workspace: "us-central1",
			Replicas: &fleet.Replicas{Current: 1}}),
	}
	out[3].State, out[3].Lifecycle = fleet.Stopped, fleet.Spot
	out = append(out, item(p+"endpoints/12/deployedModels/23", "ranker/23", "a3-highgpu-1g", fleet.GPU{Model: "H100", Count: 1, MemoryGiB: 80},
		fleet.Managed{Service: fleet.VertexAI, Kind: fleet.KindEndpoint, Workspace: "us-central1", Endpoint: "12", Deployment: "23", Replicas: &fleet.Replicas{Current: 1}}))
	zero := 0.0
	wb2 := item("projects/proj-contract/locations/us-central1-b/instances/wb-contract-2", "wb-contract-2", "n1-standard-8", t4,
		fleet.Managed{Service: fleet.VertexAI, Kind: fleet.KindNotebook, Workspace: "us-central1-b"})
	wb2.Zone = "us-central1-b"
	out = append(out, wb2)
	wb := item("projects/proj-contract/locations/us-central1-a/instances/wb-contract", "wb-contract", "g2-standard-8", fleet.GPU{Model: "L4", Count: 1, MemoryGiB: 24},
		fleet.Managed{Service: fleet.VertexAI, Kind: fleet.KindNotebook, Workspace: "us-central1-a", IdleShutdownMinutes: &zero})
	wb.Zone = "us-central1-a"
	return append(out, wb)
}

type contractClient struct {
	t    *testing.T
	url  string
	http *http.Client
}

// rest sends a REST call with a bearer token and decodes a 2xx JSON answer
// into out; it returns the HTTP status.
func (c contractClient) rest(method, path string, body string, out any) int {
	c.t.Helper()
	req, err := http.NewRequest(method, c.url+path, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer contract")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode < 300 && out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			c.t.Fatalf("%s %s: %v", method, path, err)
		}
	}
	return resp.StatusCode
}

// listTimeSeries sends a gRPC ListTimeSeries over cleartext HTTP/2 and
// returns the answer (nil on an error status) and the grpc-status.
func (c contractClient) listTimeSeries(req *monitoringpb.ListTimeSeriesRequest) (*monitoringpb.ListTimeSeriesResponse, string) {
	c.t.Helper()
	msg, err := proto.Marshal(req)
	if err != nil {
		c.t.Fatal(err)
	}
	frame := binary.BigEndian.AppendUint32([]byte{0}, uint32(len(msg)))
	hr, _ := http.NewRequest(http.MethodPost, c.url+"/google.monitoring.v3.MetricService/ListTimeSeries", bytes.NewReader(append(frame, msg...)))
	hr.Header.Set("Content-Type", "application/grpc")
	hr.Header.Set("Te", "trailers")
	hr.Header.Set("Authorization", "Bearer contract")
	resp, err := c.http.Do(hr)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	status := resp.Trailer.Get("Grpc-Status")
	if status != "0" || len(b) < 5 {
		return nil, status
	}
	var out monitoringpb.ListTimeSeriesResponse
	if err := proto.Unmarshal(b[5:], &out); err != nil {
		c.t.Fatal(err)
	}
	return &out, status
}

func nilIfEmpty(s string) *string {
	if s == "" { // AIP-158: an empty next_page_token is the last page
		return nil
	}
	return &s
}

// checkPaging walks a listing in small pages and in one and fails the
// test unless both see the same items through sound tokens.
func checkPaging(t *testing.T, name string, small, whole func(token *string) (int, *string, error)) {
	t.Helper()
	for _, p := range simkit.PagingProblems(name, small, whole) {
		t.Error(p)
	}
}

func TestContractEveryOperation(t *testing.T) {
	rec, strict := driveEveryOperation(t)
	for _, v := range rec.violations {
		t.Error(v)
	}
	for _, v := range strict {
		t.Errorf("strict mode: %s", v)
	}
	var covered []string
	for _, op := range sim.Ops {
		c := rec.checked[op]
		if c["answer"] == 0 || c["error"] == 0 {
			t.Errorf("%s: %d answers and %d errors checked; want both", op, c["answer"], c["error"])
			continue
		}
		covered = append(covered, op)
	}
	var extra []string
	for op := range rec.checked {
		if !slices.Contains(sim.Ops, op) {
			extra = append(extra, op)
		}
	}
	sort.Strings(extra)
	if len(extra) > 0 {
		t.Errorf("operations served but not in Ops: %v", extra)
	}
	t.Logf("GCP contract: %d of %d simulated operations checked against the discovery documents and monitoringpb (request, answer and error): %s", len(covered), len(sim.Ops), strings.Join(covered, " "))
	if len(covered) != len(sim.Ops) {
		t.Errorf("%d operations checked, the simulator registers %d", len(covered), len(sim.Ops))
	}
}

// driveEveryOperation serves a strict simulator behind a contract recorder
// and calls every operation: each listing in small pages and with a broken
// token, each call once throttled.
func driveEveryOperation(t *testing.T) (*contractRecorder, []string) {
	t.Helper()
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	f := contractFleet()
	f.Instances = append(f.Instances, contractManaged()...)
	opts := simcat.Options(f, cat)
	opts.Now = func() time.Time { return contractNow }
	opts.RetryDelay = 2 * time.Second
	var strictMu sync.Mutex
	var strict []string
	opts.Strict = func(service, op string, err error) {
		strictMu.Lock()
		defer strictMu.Unlock()
		strict = append(strict, fmt.Sprintf("%s:%s: %v", service, op, err))
	}
	var failNext atomic.Bool
	opts.Fault = func(service, op, scope string) (int, string) {
		if failNext.CompareAndSwap(true, false) {
			if service == "compute" {
				return http.StatusForbidden, "rateLimitExceeded"
			}
			return http.StatusTooManyRequests, "rateLimitExceeded"
		}
		return 0, ""
	}
	rec := &contractRecorder{h: sim.New(f, opts), checked: map[string]map[string]int{}, last: map[string]recorded{}}
	srv := httptest.NewUnstartedServer(rec)
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetHTTP1(true)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	t.Cleanup(srv.Close)
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	c := contractClient{t: t, url: srv.URL, http: &http.Client{Transport: tr}}
	plain := contractClient{t: t, url: srv.URL, http: http.DefaultClient}
	throttled := func(what string, call func() int) {
		t.Helper()
		failNext.Store(true)
		if st := call(); st < 400 {
			t.Errorf("%s throttled: HTTP %d", what, st)
		}
	}
	const p = "/compute/v1/projects/proj-contract"

	// Compute Engine.
	instances := func(max int) func(*string) (int, *string, error) {
		return func(tok *string) (int, *string, error) {
			q := url.Values{"maxResults": {fmt.Sprint(max)}}
			if tok != nil {
				q.Set("pageToken", *tok)
			}
			var out struct {
				Items map[string]struct {
					Instances []json.RawMessage `json:"instances"`
				} `json:"items"`
				NextPageToken string `json:"nextPageToken"`
			}
			if st := plain.rest("GET", p+"/aggregated/instances?"+q.Encode(), "", &out); st != 200 {
				return 0, nil, fmt.Errorf("HTTP %d", st)
			}
			n := 0
			for _, s := range out.Items {
				n += len(s.Instances)
			}
			return n, nilIfEmpty(out.NextPageToken), nil
		}
	}
	checkPaging(t, "instances.aggregatedList", instances(3), instances(500))
	if st := plain.rest("GET", p+"/aggregated/instances?pageToken=bm90LWEtdG9rZW4", "", nil); st != 400 {
		t.Errorf("aggregatedList with a broken token: HTTP %d, want 400", st)
	}
	zone, name := "us-central1-a", "vm-00"
	if st := plain.rest("GET", p+"/zones/"+zone+"/instances/"+name, "", nil); st != 200 {
		t.Errorf("instances.get: HTTP %d", st)
	}
	if st := plain.rest("GET", p+"/zones/"+zone+"/instances/no-such-vm", "", nil); st != 404 {
		t.Errorf("instances.get of no VM: HTTP %d", st)
	}
	var op struct{ Name string }
	if st := plain.rest("POST", p+"/zones/"+zone+"/instances/"+name+"/stop", "", &op); st != 200 || op.Name == "" {
		t.Fatalf("instances.stop: HTTP %d, operation %q", st, op.Name)
	}
	throttled("instances.stop", func() int { return plain.rest("POST", p+"/zones/"+zone+"/instances/vm-03/stop", "", nil) })
	if st := plain.rest("GET", p+"/zones/"+zone+"/operations/"+op.Name, "", nil); st != 200 {
		t.Errorf("zoneOperations.get: HTTP %d", st)
	}
	throttled("zoneOperations.get", func() int { return plain.rest("GET", p+"/zones/"+zone+"/operations/"+op.Name, "", nil) })
	if st := plain.rest("POST", p+"/zones/"+zone+"/operations/"+op.Name+"/wait", "", nil); st != 200 {
		t.Errorf("zoneOperations.wait: HTTP %d", st)
	}
	throttled("zoneOperations.wait", func() int { return plain.rest("POST", p+"/zones/"+zone+"/operations/"+op.Name+"/wait", "", nil) })
	if st := plain.rest("POST", p+"/zones/"+zone+"/instances/"+name+"/testIamPermissions", `{"permissions":["compute.instances.stop","compute.instances.get"]}`, nil); st != 200 {
		t.Errorf("instances.testIamPermissions: HTTP %d", st)
	}
	throttled("instances.testIamPermissions", func() int {
		return plain.rest("POST", p+"/zones/"+zone+"/instances/"+name+"/testIamPermissions", `{"permissions":["compute.instances.stop"]}`, nil)
	})
	if st := plain.rest("GET", p+"/zones/"+zone+"/machineTypes/a2-highgpu-1g", "", nil); st != 200 {
		t.Errorf("machineTypes.get: HTTP %d", st)
	}
	throttled("machineTypes.get", func() int { return plain.rest("GET", p+"/zones/"+zone+"/machineTypes/a2-highgpu-1g", "", nil) })
	if st := plain.rest("GET", p+"/aggregated/machineTypes?filter="+url.QueryEscape("name = a2-highgpu-1g"), "", nil); st != 200 {
		t.Errorf("machineTypes.aggregatedList: HTTP %d", st)
	}
	throttled("machineTypes.aggregatedList", func() int { return plain.rest("GET", p+"/aggregated/machineTypes", "", nil) })
	if st := plain.rest("GET", p+"/regions", "", nil); st != 200 {
		t.Errorf("regions.list: HTTP %d", st)
	}
	throttled("regions.list", func() int { return plain.rest("GET", p+"/regions", "", nil) })

	// Commitments held, and the resource policies.
	for _, l := range []struct{ op, path, field string }{
		{"regionCommitments.aggregatedList", p + "/aggregated/commitments", "commitments"},
		{"reservations.aggregatedList", p + "/aggregated/reservations", "reservations"},
		{"resourcePolicies.aggregatedList", p + "/aggregated/resourcePolicies", "resourcePolicies"},
	} {
		held := func(max int) func(*string) (int, *string, error) {
			return func(tok *string) (int, *string, error) {
				q := url.Values{"maxResults": {fmt.Sprint(max)}}
				if tok != nil {
					q.Set("pageToken", *tok)
				}
				var out struct {
					Items         map[string]map[string]json.RawMessage `json:"items"`
					NextPageToken string                                `json:"nextPageToken"`
				}
				if st := plain.rest("GET", l.path+"?"+q.Encode(), "", &out); st != 200 {
					return 0, nil, fmt.Errorf("HTTP %d", st)
				}
				n := 0
				for _, sc := range out.Items {
					var items []json.RawMessage
					if raw, ok := sc[l.field]; ok {
						if err := json.Unmarshal(raw, &items); err != nil {
							return 0, nil, err
						}
					}
					n += len(items)
				}
				return n, nilIfEmpty(out.NextPageToken), nil
			}
		}
		checkPaging(t, l.op, held(1), held(500))
		if st := plain.rest("GET", l.path+"?pageToken=bm90LWEtdG9rZW4", "", nil); st != 400 {
			t.Errorf("%s with a broken token: HTTP %d, want 400", l.op, st)
		}
		throttled(l.op, func() int { return plain.rest("GET", l.path, "", nil) })
	}

	// Cloud Billing and Resource Manager.
	skus := func(size int) func(*string) (int, *string, error) {
		return func(tok *string) (int, *string, error) {
			q := url.Values{"pageSize": {fmt.Sprint(size)}, "currencyCode": {"USD"}}
			if tok != nil {
				q.Set("pageToken", *tok)
			}
			var out struct {
				Skus          []json.RawMessage `json:"skus"`
				NextPageToken string            `json:"nextPageToken"`
			}
			if st := plain.rest("GET", "/v1/services/6F81-5844-456A/skus?"+q.Encode(), "", &out); st != 200 {
				return 0, nil, fmt.Errorf("HTTP %d", st)
			}
			return len(out.Skus), nilIfEmpty(out.NextPageToken), nil
		}
	}
	checkPaging(t, "services.skus.list", skus(3), skus(5000))
	throttled("services.skus.list", func() int { return plain.rest("GET", "/v1/services/6F81-5844-456A/skus", "", nil) })
	if st := plain.rest("GET", "/v3/projects:search?query="+url.QueryEscape("state:ACTIVE"), "", nil); st != 200 {
		t.Errorf("projects.search: HTTP %d", st)
	}
	throttled("projects.search", func() int { return plain.rest("GET", "/v3/projects:search", "", nil) })

	// Vertex AI and Workbench.
	for _, l := range []struct{ op, path, field string }{
		{"projects.locations.list", "/v1/projects/proj-contract/locations", "locations"},
		{"projects.locations.endpoints.list", "/v1/projects/proj-contract/locations/us-central1/endpoints", "endpoints"},
		{"projects.locations.customJobs.list", "/v1/projects/proj-contract/locations/us-central1/customJobs", "customJobs"},
		{"projects.locations.instances.list", "/v2/projects/proj-contract/locations/-/instances", "instances"},
	} {
		list := func(size int) func(*string) (int, *string, error) {
			return func(tok *string) (int, *string, error) {
				q := url.Values{"pageSize": {fmt.Sprint(size)}}
				if tok != nil {
					q.Set("pageToken", *tok)
				}
				var out map[string]json.RawMessage
				if st := plain.rest("GET", l.path+"?"+q.Encode(), "", &out); st != 200 {
					return 0, nil, fmt.Errorf("HTTP %d", st)
				}
				var items []json.RawMessage
				if raw, ok := out[l.field]; ok {
					if err := json.Unmarshal(raw, &items); err != nil {
						return 0, nil, err
					}
				}
				var next string
				if raw, ok := out["nextPageToken"]; ok {
					_ = json.Unmarshal(raw, &next)
				}
				return len(items), nilIfEmpty(next), nil
			}
		}
		checkPaging(t, l.op, list(1), list(1000))
		if st := plain.rest("GET", l.path+"?pageToken=bm90LWEtdG9rZW4", "", nil); st != 400 {
			t.Errorf("%s with a broken token: HTTP %d, want 400", l.op, st)
		}
		throttled(l.op, func() int { return plain.rest("GET", l.path, "", nil) })
	}
	if st := plain.rest("GET", "/v1/projects/proj-contract/locations/us-central1/customJobs?filter="+url.QueryEscape(`state="JOB_STATE_RUNNING"`), "", nil); st != 200 {
		t.Errorf("customJobs.list with a state filter: HTTP %d", st)
	}
	const wb = "/v2/projects/proj-contract/locations/us-central1-a/instances/wb-contract"
	if st := plain.rest("GET", wb, "", nil); st != 200 {
		t.Errorf("notebooks instances.get: HTTP %d", st)
	}
	if st := plain.rest("GET", wb+"-none", "", nil); st != 404 {
		t.Errorf("notebooks instances.get of no instance: HTTP %d", st)
	}
	throttled("notebooks instances.get", func() int { return plain.rest("GET", wb, "", nil) })
	throttled("notebooks instances.stop", func() int { return plain.rest("POST", wb+":stop", "{}", nil) })
	var wbOp struct{ Name string }
	if st := plain.rest("POST", wb+":stop", "{}", &wbOp); st != 200 || wbOp.Name == "" {
		t.Errorf("notebooks instances.stop: HTTP %d, operation %q", st, wbOp.Name)
	}
	if st := plain.rest("GET", "/v2/"+wbOp.Name, "", nil); st != 200 {
		t.Errorf("notebooks operations.get: HTTP %d", st)
	}
	throttled("notebooks operations.get", func() int { return plain.rest("GET", "/v2/"+wbOp.Name, "", nil) })

	// Monitoring over REST.
	restSeries := func(size int) func(*string) (int, *string, error) {
		return func(tok *string) (int, *string, error) {
			q := url.Values{
				"filter":                         {`metric.type = "agent.googleapis.com/gpu/utilization" AND resource.type = "gce_instance"`},
				"interval.startTime":             {contractNow.Add(-6 * time.Hour).Format(time.RFC3339)},
				"interval.endTime":               {contractNow.Format(time.RFC3339)},
				"aggregation.alignmentPeriod":    {"3600s"},
				"aggregation.perSeriesAligner":   {"ALIGN_MEAN"},
				"aggregation.crossSeriesReducer": {"REDUCE_MEAN"},
				"aggregation.groupByFields":      {"resource.label.instance_id"},
				"pageSize":                       {fmt.Sprint(size)},
			}
			if tok != nil {
				q.Set("pageToken", *tok)
			}
			var out struct {
				TimeSeries []struct {
					Points []json.RawMessage `json:"points"`
				} `json:"timeSeries"`
				NextPageToken string `json:"nextPageToken"`
			}
			if st := plain.rest("GET", "/v3/projects/proj-contract/timeSeries?"+q.Encode(), "", &out); st != 200 {
				return 0, nil, fmt.Errorf("HTTP %d", st)
			}
			n := 0
			for _, s := range out.TimeSeries {
				n += len(s.Points)
			}
			return n, nilIfEmpty(out.NextPageToken), nil
		}
	}
	checkPaging(t, "projects.timeSeries.list", restSeries(7), restSeries(100000))
	counted := url.Values{
		"filter":                       {`metric.type = "agent.googleapis.com/gpu/utilization" AND resource.type = "gce_instance"`},
		"interval.startTime":           {contractNow.Add(-6 * time.Hour).Format(time.RFC3339)},
		"interval.endTime":             {contractNow.Format(time.RFC3339)},
		"aggregation.alignmentPeriod":  {"3600s"},
		"aggregation.perSeriesAligner": {"ALIGN_COUNT"},
	}
	if st := plain.rest("GET", "/v3/projects/proj-contract/timeSeries?"+counted.Encode(), "", nil); st != 200 {
		t.Errorf("projects.timeSeries.list ALIGN_COUNT: HTTP %d", st)
	}
	counted.Set("pageToken", "bm90LWEtdG9rZW4")
	if st := plain.rest("GET", "/v3/projects/proj-contract/timeSeries?"+counted.Encode(), "", nil); st != 400 {
		t.Errorf("projects.timeSeries.list with a broken token: HTTP %d, want 400", st)
	}
	throttled("projects.timeSeries.list", func() int { return plain.rest("GET", "/v3/projects/proj-contract/timeSeries", "", nil) })

	// Monitoring over gRPC.
	series := func(size int32) func(*string) (int, *string, error) {
		return func(tok *string) (int, *string, error) {
			req := &monitoringpb.ListTimeSeriesRequest{
				Name:     "projects/proj-contract",
				Filter:   `metric.type = "agent.googleapis.com/gpu/utilization" AND resource.type = "gce_instance"`,
				Interval: &monitoringpb.TimeInterval{StartTime: timestamppb.New(contractNow.Add(-6 * time.Hour)), EndTime: timestamppb.New(contractNow)},
				Aggregation: &monitoringpb.Aggregation{AlignmentPeriod: durationpb.New(time.Hour), PerSeriesAligner: monitoringpb.Aggregation_ALIGN_MEAN,
					CrossSeriesReducer: monitoringpb.Aggregation_REDUCE_MEAN, GroupByFields: []string{"resource.label.instance_id"}},
				PageSize: size,
			}
			if tok != nil {
				req.PageToken = *tok
			}
			out, st := c.listTimeSeries(req)
			if out == nil {
				return 0, nil, fmt.Errorf("grpc-status %s", st)
			}
			n := 0
			for _, s := range out.TimeSeries {
				n += len(s.Points)
			}
			return n, nilIfEmpty(out.NextPageToken), nil
		}
	}
	checkPaging(t, "ListTimeSeries", series(7), series(100000))
	count := &monitoringpb.ListTimeSeriesRequest{
		Name:        "projects/proj-contract",
		Filter:      `metric.type = "agent.googleapis.com/gpu/utilization" AND resource.type = "gce_instance"`,
		Interval:    &monitoringpb.TimeInterval{StartTime: timestamppb.New(contractNow.Add(-6 * time.Hour)), EndTime: timestamppb.New(contractNow)},
		Aggregation: &monitoringpb.Aggregation{AlignmentPeriod: durationpb.New(time.Hour), PerSeriesAligner: monitoringpb.Aggregation_ALIGN_COUNT},
	}
	if out, st := c.listTimeSeries(count); out == nil {
		t.Errorf("ListTimeSeries ALIGN_COUNT: grpc-status %s", st)
	}
	bad := proto.Clone(count).(*monitoringpb.ListTimeSeriesRequest)
	bad.PageToken = "bm90LWEtdG9rZW4"
	if _, st := c.listTimeSeries(bad); st == "0" {
		t.Error("ListTimeSeries with a broken token: OK")
	}
	// Last, so that the recorder keeps this error: it carries details.
	failNext.Store(true)
	if _, st := c.listTimeSeries(count); st != "8" {
		t.Errorf("ListTimeSeries throttled: grpc-status %s, want 8 (RESOURCE_EXHAUSTED)", st)
	}

	strictMu.Lock()
	defer strictMu.Unlock()
	return rec, slices.Clone(strict)
}

// TestSimRefusesPagesBeyondTheModel: Compute Engine's maxResults beyond
// the documented 0 to 500 is refused by the simulator itself, and a page
// token is good only for the listing that issued it.
func TestSimRefusesPagesBeyondTheModel(t *testing.T) {
	opts := sim.Options{Project: "proj-contract", Now: func() time.Time { return contractNow }}
	srv := httptest.NewServer(sim.New(contractFleet(), opts))
	t.Cleanup(srv.Close)
	c := contractClient{t: t, url: srv.URL, http: http.DefaultClient}
	const p = "/compute/v1/projects/proj-contract/aggregated/instances"
	if st := c.rest("GET", p+"?maxResults=501", "", nil); st != http.StatusBadRequest {
		t.Errorf("maxResults 501: HTTP %d, want 400", st)
	}
	var page struct{ NextPageToken string }
	if st := c.rest("GET", p+"?maxResults=2", "", &page); st != 200 || page.NextPageToken == "" {
		t.Fatalf("first page: HTTP %d, token %q", st, page.NextPageToken)
	}
	if st := c.rest("GET", p+"?filter="+url.QueryEscape(`name = "vm-01"`), "", nil); st != 200 {
		t.Fatalf("a name filter: HTTP %d", st)
	}
	q := url.Values{"maxResults": {"2"}, "pageToken": {page.NextPageToken}, "filter": {`name = "vm-01"`}}
	if st := c.rest("GET", p+"?"+q.Encode(), "", nil); st != http.StatusBadRequest {
		t.Errorf("another listing's token: HTTP %d, want 400", st)
	}
}
