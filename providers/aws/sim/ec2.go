package sim

import (
	"fmt"
	"math"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers/simkit"
)

const ec2XMLNamespace = "http://ec2.amazonaws.com/doc/2016-11-15/"

// serveEC2 answers the EC2 query API: DescribeRegions, DescribeInstances,
// DescribeInstanceTypes, DescribeSpotPriceHistory,
// DescribeSpotInstanceRequests and StopInstances.
func (s *Server) serveEC2(w http.ResponseWriter, req request) {
	// The Describe calls check the permission only with DryRun, as EC2 does
	// (gpufinops doctor relies on it); StopInstances checks the IDs first.
	switch req.op {
	case "DescribeRegions", "DescribeInstances", "DescribeInstanceTypes", "DescribeSpotPriceHistory", "DescribeSpotInstanceRequests":
		if !boolParam(req.form, "DryRun") {
			break
		}
		writeError(w, req, http.StatusPreconditionFailed, "DryRunOperation", "Request would have succeeded, but DryRun flag is set.")
		return
	}
	switch req.op {
	case "DescribeRegions":
		s.describeRegions(w, req)
	case "DescribeInstances":
		s.describeInstances(w, req)
	case "DescribeInstanceTypes":
		s.describeInstanceTypes(w, req)
	case "DescribeSpotPriceHistory":
		s.describeSpotPriceHistory(w, req)
	case "DescribeSpotInstanceRequests":
		s.describeSpotInstanceRequests(w, req)
	case "StopInstances":
		s.stopInstances(w, req)
	default:
		writeError(w, req, http.StatusBadRequest, "InvalidAction", "The action "+req.op+" is not valid for this web service (not simulated).")
	}
}

// ec2Fail writes an EC2 client error (HTTP 400).
func ec2Fail(w http.ResponseWriter, req request, code, format string, args ...any) {
	writeError(w, req, http.StatusBadRequest, code, fmt.Sprintf(format, args...))
}

// checkFilters rejects filter names the operation does not know.
func checkFilters(w http.ResponseWriter, req request, filters []queryFilter, known func(string) bool) bool {
	for _, f := range filters {
		if !known(f.name) {
			ec2Fail(w, req, "InvalidParameterValue", "The filter '%s' is invalid", f.name)
			return false
		}
	}
	return true
}

// maxResults reads MaxResults within [lo, hi]; def when absent.
func maxResults(w http.ResponseWriter, req request, lo, hi, def int) (n int, set, ok bool) {
	n, set, err := intParam(req.form, "MaxResults")
	if err != nil {
		ec2Fail(w, req, "InvalidParameterValue", "%v", err)
		return 0, set, false
	}
	if !set {
		return def, false, true
	}
	if n < lo || n > hi {
		ec2Fail(w, req, "InvalidParameterValue", "Value ( %d ) for parameter maxResults is invalid. Expecting a value between %d and %d.", n, lo, hi)
		return 0, true, false
	}
	return n, true, true
}

// offset reads NextToken for the request's query.
func offset(w http.ResponseWriter, req request) (int, bool) {
	off, ok := simkit.DecodeToken(req.form.Get("NextToken"), req.op+formFingerprint(req.form))
	if !ok {
		ec2Fail(w, req, "InvalidPaginationToken", "Invalid pagination token: %s", req.form.Get("NextToken"))
	}
	return off, ok
}

func nextToken(req request, next int) string {
	if next < 0 {
		return ""
	}
	return simkit.EncodeToken(next, req.op+formFingerprint(req.form))
}

// --- DescribeRegions ---

type regionItem struct {
	RegionName     string `xml:"regionName"`
	RegionEndpoint string `xml:"regionEndpoint"`
	OptInStatus    string `xml:"optInStatus"`
}

type describeRegionsResponse struct {
	RequestID string       `xml:"requestId"`
	Regions   []regionItem `xml:"regionInfo>item"`
}

func (s *Server) describeRegions(w http.ResponseWriter, req request) {
	filters := parseFilters(req.form)
	if !checkFilters(w, req, filters, func(n string) bool { return n == "region-name" || n == "opt-in-status" || n == "endpoint" }) {
		return
	}
	names := listParam(req.form, "RegionName")
	enabled := map[string]bool{}
	for _, r := range s.opts.Regions {
		enabled[r] = true
	}
	for _, n := range names {
		if !enabled[n] {
			ec2Fail(w, req, "InvalidParameterValue", "Invalid region: %s", n)
			return
		}
	}
	out := describeRegionsResponse{RequestID: newRequestID(), Regions: []regionItem{}}
	for _, r := range s.opts.Regions {
		it := regionItem{RegionName: r, RegionEndpoint: "ec2." + r + ".amazonaws.com", OptInStatus: "opt-in-not-required"}
		if len(names) > 0 && !contains(names, r) {
			continue
		}
		keep := true
		for _, f := range filters {
			switch f.name {
			case "region-name":
				keep = keep && f.matchAny(it.RegionName)
			case "opt-in-status":
				keep = keep && f.matchAny(it.OptInStatus)
			case "endpoint":
				keep = keep && f.matchAny(it.RegionEndpoint)
			}
		}
		if keep {
			out.Regions = append(out.Regions, it)
		}
	}
	writeXMLResponse(w, req.op, ec2XMLNamespace, out)
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// --- DescribeInstances ---

// stateCodes are EC2's instance state codes.
var stateCodes = map[string]int{
	"pending": 0, "running": 16, "shutting-down": 32, "terminated": 48, "stopping": 64, "stopped": 80,
}

type instanceStateXML struct {
	Code int    `xml:"code"`
	Name string `xml:"name"`
}

func stateXML(name string) instanceStateXML {
	return instanceStateXML{Code: stateCodes[name], Name: name}
}

type tagXML struct {
	Key   string `xml:"key"`
	Value string `xml:"value"`
}

type instanceXML struct {
	InstanceID            string           `xml:"instanceId"`
	InstanceType          string           `xml:"instanceType"`
	LaunchTime            string           `xml:"launchTime"`
	State                 instanceStateXML `xml:"instanceState"`
	StateTransitionReason string           `xml:"reason"`
	AvailabilityZone      string           `xml:"placement>availabilityZone"`
	PlacementGroupName    string           `xml:"placement>groupName,omitempty"`
	PlacementGroupID      string           `xml:"placement>groupId,omitempty"`
	Tenancy               string           `xml:"placement>tenancy"`
	PrivateDNSName        string           `xml:"privateDnsName"`
	PlatformDetails       string           `xml:"platformDetails"`
	UsageOperation        string           `xml:"usageOperation"`
	Architecture          string           `xml:"architecture"`
	RootDeviceType        string           `xml:"rootDeviceType"`
	InstanceLifecycle     string           `xml:"instanceLifecycle,omitempty"`
	SpotInstanceRequestID string           `xml:"spotInstanceRequestId,omitempty"`
	Tags                  []tagXML         `xml:"tagSet>item,omitempty"`
	Hibernation           *hibernationXML  `xml:"hibernationOptions,omitempty"`
}

type hibernationXML struct {
	Configured bool `xml:"configured"`
}

type reservationXML struct {
	ReservationID string        `xml:"reservationId"`
	OwnerID       string        `xml:"ownerId"`
	Instances     []instanceXML `xml:"instancesSet>item"`
}

type describeInstancesResponse struct {
	RequestID    string           `xml:"requestId"`
	Reservations []reservationXML `xml:"reservationSet>item"`
	NextToken    string           `xml:"nextToken,omitempty"`
}

// instanceFilters are the DescribeInstances filters the simulator knows.
var instanceFilters = map[string]bool{
	"instance-id": true, "instance-type": true, "instance-state-name": true, "instance-state-code": true,
	"instance-lifecycle": true, "availability-zone": true, "tag-key": true, "tag-value": true,
	"owner-id": true, "launch-time": true, "private-dns-name": true, "spot-instance-request-id": true,
	"placement-group-name": true,
}

// ec2View is one instance as EC2 shows it now.
type ec2View struct {
	in    *fleet.Instance
	state string
	xml   instanceXML
}

// view renders an instance with its live state.
func (s *Server) view(in *fleet.Instance, state string) ec2View {
	zone := in.Zone
	if zone == "" {
		zone = in.Region + "a"
	}
	launch := s.opts.Now().UTC().Add(-30 * 24 * time.Hour).Truncate(time.Hour)
	if in.LaunchTime != nil {
		launch = in.LaunchTime.UTC()
	}
	x := instanceXML{
		InstanceID:       in.ID,
		InstanceType:     in.InstanceType,
		LaunchTime:       launch.Format(awsTime),
		State:            stateXML(state),
		AvailabilityZone: zone,
		Tenancy:          "default",
		PrivateDNSName:   privateDNS(in),
		PlatformDetails:  "Linux/UNIX",
		UsageOperation:   "RunInstances",
		Architecture:     "x86_64",
		RootDeviceType:   "ebs",
	}
	if len(in.PlacementGroups) > 0 && strings.TrimSpace(in.PlacementGroups[0]) != "" {
		// An instance is in one placement group at most; its ID is
		// unique in the region, "pg-" and 17 hex digits. A fleet entry
		// that is such an ID is a group shared from another account:
		// EC2 shows its ID only.
		if g := strings.TrimSpace(in.PlacementGroups[0]); placementGroupID.MatchString(g) {
			x.PlacementGroupID = g
		} else {
			x.PlacementGroupName = g
			x.PlacementGroupID = PlacementGroupID(in.Region, g)
		}
	}
	if state == "stopped" {
		x.StateTransitionReason = "User initiated"
	}
	if in.Hibernation {
		x.Hibernation = &hibernationXML{Configured: true}
	}
	if in.Lifecycle == fleet.Spot {
		x.InstanceLifecycle = "spot"
		x.SpotInstanceRequestID = "sir-" + hexID(8, "spot", in.ID)
	}
	tags := map[string]string{}
	if in.Name != "" {
		tags["Name"] = in.Name
	}
	for k, v := range in.Tags {
		tags[k] = v
	}
	for _, k := range sortedKeys(tags) {
		x.Tags = append(x.Tags, tagXML{Key: k, Value: tags[k]})
	}
	return ec2View{in: in, state: state, xml: x}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// privateDNS is a stable private host name in the region's DNS domain.
func privateDNS(in *fleet.Instance) string {
	d := digest("ip", in.ID)
	host := fmt.Sprintf("ip-10-%d-%d-%d", d[0], d[1], d[2]|1)
	if in.Region == "us-east-1" {
		return host + ".ec2.internal"
	}
	return host + "." + in.Region + ".compute.internal"
}

// matches applies one DescribeInstances filter.
func (v ec2View) matches(f queryFilter, account string) bool {
	x := v.xml
	switch {
	case f.name == "instance-id":
		return f.matchAny(x.InstanceID)
	case f.name == "instance-type":
		return f.matchAny(x.InstanceType)
	case f.name == "instance-state-name":
		return f.matchAny(x.State.Name)
	case f.name == "instance-state-code":
		return f.matchAny(strconv.Itoa(x.State.Code))
	case f.name == "instance-lifecycle":
		return f.matchAny(x.InstanceLifecycle)
	case f.name == "availability-zone":
		return f.matchAny(x.AvailabilityZone)
	case f.name == "placement-group-name":
		return x.PlacementGroupName != "" && f.matchAny(x.PlacementGroupName)
	case f.name == "owner-id":
		return f.matchAny(account)
	case f.name == "launch-time":
		return f.matchAny(x.LaunchTime)
	case f.name == "private-dns-name":
		return f.matchAny(x.PrivateDNSName)
	case f.name == "spot-instance-request-id":
		return x.SpotInstanceRequestID != "" && f.matchAny(x.SpotInstanceRequestID)
	case f.name == "tag-key":
		for _, t := range x.Tags {
			if f.matchAny(t.Key) {
				return true
			}
		}
		return false
	case f.name == "tag-value":
		for _, t := range x.Tags {
			if f.matchAny(t.Value) {
				return true
			}
		}
		return false
	case strings.HasPrefix(f.name, "tag:"):
		key := strings.TrimPrefix(f.name, "tag:")
		for _, t := range x.Tags {
			if t.Key == key {
				return f.matchAny(t.Value)
			}
		}
		return false
	}
	return false
}

// visible returns the EC2 instances of a region that an account sees, in
// fleet order, with their live state. Managed AI items run in the service's
// own account and are never the account's EC2 instances.
func (s *Server) visible(region, account string) []ec2View {
	var out []ec2View
	for _, l := range s.inv.InScope(region, account) {
		if l.Instance.IsManaged() {
			continue
		}
		out = append(out, s.view(l.Instance, l.State))
	}
	return out
}

// findVisible looks instance IDs up among the visible instances; the missing
// ones are returned as such.
func findVisible(views []ec2View, ids []string) (found []ec2View, missing []string) {
	byID := make(map[string]int, len(views))
	for i, v := range views {
		byID[v.in.ID] = i
	}
	for _, id := range ids {
		if i, ok := byID[id]; ok {
			found = append(found, views[i])
		} else {
			missing = append(missing, id)
		}
	}
	return found, missing
}

func notFound(w http.ResponseWriter, req request, missing []string) {
	if len(missing) == 1 {
		ec2Fail(w, req, "InvalidInstanceID.NotFound", "The instance ID '%s' does not exist", missing[0])
		return
	}
	ec2Fail(w, req, "InvalidInstanceID.NotFound", "The instance IDs '%s' do not exist", strings.Join(missing, ", "))
}

func (s *Server) describeInstances(w http.ResponseWriter, req request) {
	account := s.callerAccount(req)
	ids := listParam(req.form, "InstanceId")
	filters := parseFilters(req.form)
	if !checkFilters(w, req, filters, func(n string) bool { return instanceFilters[n] || strings.HasPrefix(n, "tag:") }) {
		return
	}
	size, sized, ok := maxResults(w, req, 5, 1000, 1000)
	if !ok {
		return
	}
	if sized && len(ids) > 0 {
		ec2Fail(w, req, "InvalidParameterCombination", "The parameter instancesSet cannot be used with the parameter maxResults")
		return
	}
	off, ok := offset(w, req)
	if !ok {
		return
	}
	views := s.visible(req.region, account)
	if len(ids) > 0 {
		var missing []string
		views, missing = findVisible(views, ids)
		if len(missing) > 0 {
			notFound(w, req, missing)
			return
		}
	}
	var kept []ec2View
	for _, v := range views {
		keep := true
		for _, f := range filters {
			if !v.matches(f, account) {
				keep = false
				break
			}
		}
		if keep {
			kept = append(kept, v)
		}
	}
	out := describeInstancesResponse{RequestID: newRequestID(), Reservations: []reservationXML{}}
	if !sized && req.form.Get("NextToken") == "" {
		size = len(kept) // unpaginated: everything at once
	}
	from, to, next := simkit.Page(len(kept), off, size)
	for _, v := range kept[from:to] {
		out.Reservations = append(out.Reservations, reservationXML{
			ReservationID: "r-" + hexID(17, "reservation", v.in.ID),
			OwnerID:       account,
			Instances:     []instanceXML{v.xml},
		})
	}
	out.NextToken = nextToken(req, next)
	writeXMLResponse(w, req.op, ec2XMLNamespace, out)
}

// --- StopInstances ---

type stateChangeXML struct {
	InstanceID    string           `xml:"instanceId"`
	CurrentState  instanceStateXML `xml:"currentState"`
	PreviousState instanceStateXML `xml:"previousState"`
}

type stopInstancesResponse struct {
	RequestID string           `xml:"requestId"`
	Instances []stateChangeXML `xml:"instancesSet>item"`
}

// stopInstances stops running instances. The answer says "stopping" as AWS
// does, and the instance is stopped at once: the next DescribeInstances and
// /_sim/state say "stopped". Every ID must exist (in the caller's account
// and the request's region) or nothing stops. DryRun answers
// DryRunOperation once the IDs are known, before the spot check, as it only
// checks permission. A spot instance can be stopped only when its request is
// persistent (spotRequestOf).
func (s *Server) stopInstances(w http.ResponseWriter, req request) {
	ids := listParam(req.form, "InstanceId")
	if len(ids) == 0 {
		ec2Fail(w, req, "MissingParameter", "The request must contain the parameter InstanceId")
		return
	}
	found, missing := findVisible(s.visible(req.region, s.callerAccount(req)), ids)
	if len(missing) > 0 {
		notFound(w, req, missing)
		return
	}
	if boolParam(req.form, "DryRun") {
		writeError(w, req, http.StatusPreconditionFailed, "DryRunOperation", "Request would have succeeded, but DryRun flag is set.")
		return
	}
	for _, v := range found {
		if v.in.Lifecycle == fleet.Spot && spotRequestOf(v.in).Type != "persistent" {
			ec2Fail(w, req, "UnsupportedOperation", "You can't stop the Spot Instance '%s' because it is associated with a one-time Spot Instance request. You can only stop Spot Instances associated with persistent Spot Instance requests.", v.in.ID)
			return
		}
	}
	out := stopInstancesResponse{RequestID: newRequestID()}
	for _, v := range found {
		prev, _ := s.inv.SetState(v.in.ID, string(fleet.Stopped))
		cur := "stopped"
		if prev == "running" || prev == "pending" {
			cur = "stopping"
		}
		out.Instances = append(out.Instances, stateChangeXML{InstanceID: v.in.ID, CurrentState: stateXML(cur), PreviousState: stateXML(prev)})
	}
	writeXMLResponse(w, req.op, ec2XMLNamespace, out)
}

// --- DescribeInstanceTypes ---

type memoryXML struct {
	SizeInMiB int `xml:"sizeInMiB"`
}

type gpuDeviceXML struct {
	Name             string    `xml:"name"`
	Manufacturer     string    `xml:"manufacturer"`
	Count            int       `xml:"count"`
	GpuPartitionSize string    `xml:"gpuPartitionSize,omitempty"`
	LogicalGpuCount  int       `xml:"logicalGpuCount,omitempty"`
	Memory           memoryXML `xml:"memoryInfo"`
}

type gpuInfoXML struct {
	Gpus           []gpuDeviceXML `xml:"gpus>item"`
	TotalMemoryMiB int            `xml:"totalGpuMemoryInMiB"`
}

type neuronDeviceXML struct {
	Name   string    `xml:"name"`
	Count  int       `xml:"count"`
	Memory memoryXML `xml:"memoryInfo"`
}

type neuronInfoXML struct {
	Devices        []neuronDeviceXML `xml:"neuronDevices>item"`
	TotalMemoryMiB int               `xml:"totalNeuronDeviceMemoryInMiB"`
}

type instanceTypeXML struct {
	InstanceType      string         `xml:"instanceType"`
	CurrentGeneration bool           `xml:"currentGeneration"`
	UsageClasses      []string       `xml:"supportedUsageClasses>item"`
	VCPUs             int            `xml:"vCpuInfo>defaultVCpus"`
	Memory            memoryXML      `xml:"memoryInfo"`
	GPU               *gpuInfoXML    `xml:"gpuInfo,omitempty"`
	Neuron            *neuronInfoXML `xml:"neuronInfo,omitempty"`
	StorageSupported  bool           `xml:"instanceStorageSupported"`
	Storage           *storageXML    `xml:"instanceStorageInfo,omitempty"`
}

type storageXML struct {
	TotalSizeInGB int           `xml:"totalSizeInGB"`
	Disks         []diskInfoXML `xml:"disks>item"`
	NvmeSupport   string        `xml:"nvmeSupport"`
}

type diskInfoXML struct {
	SizeInGB int    `xml:"sizeInGB"`
	Count    int    `xml:"count"`
	Type     string `xml:"type"`
}

type describeInstanceTypesResponse struct {
	RequestID string            `xml:"requestId"`
	Types     []instanceTypeXML `xml:"instanceTypeSet>item"`
	NextToken string            `xml:"nextToken,omitempty"`
}

// typeXML renders a TypeInfo. GPUMemoryMiB is per GPU, and per partition
// for a partitioned GPU (as in the catalog): a fractional GPU count is one
// device with gpuPartitionSize set and the partition's memory.
func typeXML(t TypeInfo) instanceTypeXML {
	x := instanceTypeXML{
		InstanceType:      t.Name,
		CurrentGeneration: true,
		UsageClasses:      []string{"on-demand", "spot"},
		VCPUs:             t.VCPUs,
		Memory:            memoryXML{t.MemoryMiB},
	}
	if t.InstanceStoreGB > 0 {
		n := max(t.InstanceStoreDisks, 1)
		x.StorageSupported = true
		x.Storage = &storageXML{TotalSizeInGB: t.InstanceStoreGB, NvmeSupport: "required",
			Disks: []diskInfoXML{{SizeInGB: t.InstanceStoreGB / n, Count: n, Type: "ssd"}}}
	}
	if t.GPUCount <= 0 {
		return x
	}
	count := int(math.Ceil(t.GPUCount))
	total := t.GPUMemoryMiB * count
	if t.Neuron {
		x.Neuron = &neuronInfoXML{
			Devices:        []neuronDeviceXML{{Name: t.GPUName, Count: count, Memory: memoryXML{t.GPUMemoryMiB}}},
			TotalMemoryMiB: total,
		}
		return x
	}
	dev := gpuDeviceXML{Name: t.GPUName, Manufacturer: t.GPUManufacturer, Count: count, Memory: memoryXML{t.GPUMemoryMiB}}
	if t.GPUCount < 1 {
		dev.GpuPartitionSize = strconv.FormatFloat(t.GPUCount, 'f', -1, 64)
		dev.LogicalGpuCount = 1
	}
	x.GPU = &gpuInfoXML{Gpus: []gpuDeviceXML{dev}, TotalMemoryMiB: total}
	return x
}

func (s *Server) describeInstanceTypes(w http.ResponseWriter, req request) {
	filters := parseFilters(req.form)
	if !checkFilters(w, req, filters, func(n string) bool { return n == "instance-type" || n == "current-generation" }) {
		return
	}
	size, _, ok := maxResults(w, req, 5, 100, 100)
	if !ok {
		return
	}
	off, ok := offset(w, req)
	if !ok {
		return
	}
	var types []TypeInfo
	if names := listParam(req.form, "InstanceType"); len(names) > 0 {
		var missing []string
		for _, n := range names {
			if t, ok := s.types[n]; ok {
				types = append(types, t)
			} else {
				missing = append(missing, n)
			}
		}
		if len(missing) > 0 {
			ec2Fail(w, req, "InvalidInstanceType", "The following supplied instance types do not exist: [%s]", strings.Join(missing, ", "))
			return
		}
	} else {
		for _, t := range s.types {
			types = append(types, t)
		}
	}
	sort.Slice(types, func(i, j int) bool { return types[i].Name < types[j].Name })
	var kept []instanceTypeXML
	for _, t := range types {
		x := typeXML(t)
		keep := true
		for _, f := range filters {
			switch f.name {
			case "instance-type":
				keep = keep && f.matchAny(x.InstanceType)
			case "current-generation":
				keep = keep && f.matchAny("true")
			}
		}
		if keep {
			kept = append(kept, x)
		}
	}
	from, to, next := simkit.Page(len(kept), off, size)
	out := describeInstanceTypesResponse{RequestID: newRequestID(), Types: kept[from:to], NextToken: nextToken(req, next)}
	writeXMLResponse(w, req.op, ec2XMLNamespace, out)
}

// --- DescribeSpotPriceHistory ---

// Spot history: one point every spotStep over spotPoints steps (30 days).
// The newest is the row's current price, and so is every other older one:
// it is the zone's typical price. The points between swing within
// ±spotSwing of it, alternately above and below, stable for a given type,
// zone and timestamp; so the zone's time-weighted median over the window
// is the row's price, as in the catalog the row came from.
const (
	spotStep   = 72 * time.Hour
	spotPoints = 11
	spotSwing  = 0.15
	linuxUNIX  = "Linux/UNIX"
)

type spotPriceXML struct {
	InstanceType       string `xml:"instanceType"`
	ProductDescription string `xml:"productDescription"`
	SpotPrice          string `xml:"spotPrice"`
	Timestamp          string `xml:"timestamp"`
	AvailabilityZone   string `xml:"availabilityZone"`
	at                 time.Time
}

type describeSpotPriceHistoryResponse struct {
	RequestID string         `xml:"requestId"`
	History   []spotPriceXML `xml:"spotPriceHistorySet>item"`
	NextToken string         `xml:"nextToken,omitempty"`
}

// spotSeries returns the history of one type in one zone, newest first.
func spotSeries(now time.Time, instanceType, zone string, current decimal.Decimal) []spotPriceXML {
	day := now.UTC().Truncate(24 * time.Hour)
	out := make([]spotPriceXML, 0, spotPoints)
	for k := 0; k < spotPoints; k++ {
		at := day.Add(-time.Duration(k) * spotStep)
		p := current
		if k%2 == 1 {
			f := 1 + spotSwing*unitFraction("spot", instanceType, zone, at.Format(time.RFC3339))
			if k%4 == 3 {
				f = 2 - f
			}
			p = current.Mul(decimal.NewFromFloat(f))
		}
		out = append(out, spotPriceXML{
			InstanceType:       instanceType,
			ProductDescription: linuxUNIX,
			SpotPrice:          p.StringFixed(6),
			Timestamp:          at.Format(awsTime),
			AvailabilityZone:   zone,
			at:                 at,
		})
	}
	return out
}

// describeSpotPriceHistory serves the history of the request's region:
// points within [StartTime, EndTime] plus, per series, the last one before
// StartTime (the price in effect then), newest first.
func (s *Server) describeSpotPriceHistory(w http.ResponseWriter, req request) {
	filters := parseFilters(req.form)
	if !checkFilters(w, req, filters, func(n string) bool {
		return n == "availability-zone" || n == "instance-type" || n == "product-description"
	}) {
		return
	}
	size, _, ok := maxResults(w, req, 1, 1000, 1000)
	if !ok {
		return
	}
	off, ok := offset(w, req)
	if !ok {
		return
	}
	start, hasStart, err := timeParam(req.form, "StartTime")
	if err != nil {
		ec2Fail(w, req, "InvalidParameterValue", "%v", err)
		return
	}
	end, hasEnd, err := timeParam(req.form, "EndTime")
	if err != nil {
		ec2Fail(w, req, "InvalidParameterValue", "%v", err)
		return
	}
	if hasStart && hasEnd && end.Before(start) {
		ec2Fail(w, req, "InvalidParameterValue", "The end time must be after the start time")
		return
	}
	types := listParam(req.form, "InstanceType")
	products := listParam(req.form, "ProductDescription")
	zone := req.form.Get("AvailabilityZone")
	now := s.opts.Now()

	var all []spotPriceXML
	for _, row := range s.opts.Prices {
		if row.Region != req.region || (len(types) > 0 && !contains(types, row.InstanceType)) {
			continue
		}
		if len(products) > 0 && !contains(products, linuxUNIX) {
			continue
		}
		zones := make([]string, 0, len(row.Spot))
		for z := range row.Spot {
			zones = append(zones, z)
		}
		sort.Strings(zones)
		for _, z := range zones {
			if zone != "" && z != zone {
				continue
			}
			price, err := decimal.NewFromString(row.Spot[z])
			if err != nil {
				continue
			}
			series := spotSeries(now, row.InstanceType, z, price)
			effective := false // the last point before start is kept
			for _, p := range series {
				if hasEnd && p.at.After(end) {
					continue
				}
				if hasStart && p.at.Before(start) {
					if effective {
						continue
					}
					effective = true
				}
				keep := true
				for _, f := range filters {
					switch f.name {
					case "availability-zone":
						keep = keep && f.matchAny(p.AvailabilityZone)
					case "instance-type":
						keep = keep && f.matchAny(p.InstanceType)
					case "product-description":
						keep = keep && f.matchAny(p.ProductDescription)
					}
				}
				if keep {
					all = append(all, p)
				}
			}
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].at.After(all[j].at) })
	from, to, next := simkit.Page(len(all), off, size)
	out := describeSpotPriceHistoryResponse{RequestID: newRequestID(), History: all[from:to], NextToken: nextToken(req, next)}
	if out.History == nil {
		out.History = []spotPriceXML{}
	}
	writeXMLResponse(w, req.op, ec2XMLNamespace, out)
}

// --- DescribeSpotInstanceRequests ---

type spotRequestStatusXML struct {
	Code    string `xml:"code"`
	Message string `xml:"message"`
}

type spotRequestXML struct {
	SpotInstanceRequestID        string               `xml:"spotInstanceRequestId"`
	SpotPrice                    string               `xml:"spotPrice,omitempty"`
	Type                         string               `xml:"type"`
	State                        string               `xml:"state"`
	Status                       spotRequestStatusXML `xml:"status"`
	InstanceID                   string               `xml:"instanceId"`
	CreateTime                   string               `xml:"createTime"`
	ProductDescription           string               `xml:"productDescription"`
	LaunchedAvailabilityZone     string               `xml:"launchedAvailabilityZone"`
	InstanceInterruptionBehavior string               `xml:"instanceInterruptionBehavior"`
}

type describeSpotInstanceRequestsResponse struct {
	RequestID string           `xml:"requestId"`
	Requests  []spotRequestXML `xml:"spotInstanceRequestSet>item"`
	NextToken string           `xml:"nextToken,omitempty"`
}

// spotRequest is what a spot instance's request says of it.
type spotRequest struct{ Type, Behavior string }

// spotRequestOf reads a spot instance's request from its spotInterruption:
// stop is a persistent request whose instances stop when interrupted;
// anything else a one-time request whose instances terminate (the default
// of RequestSpotInstances and RunInstances).
func spotRequestOf(in *fleet.Instance) spotRequest {
	if in.SpotInterruption == fleet.SpotStop {
		return spotRequest{Type: "persistent", Behavior: "stop"}
	}
	return spotRequest{Type: "one-time", Behavior: "terminate"}
}

// spotRequestFilters are the DescribeSpotInstanceRequests filters the
// simulator knows.
var spotRequestFilters = map[string]bool{
	"spot-instance-request-id": true, "instance-id": true, "state": true, "type": true,
	"instance-interruption-behavior": true, "launched-availability-zone": true,
}

// describeSpotInstanceRequests lists the requests of the region's spot
// instances the caller's account sees: active while the instance runs,
// disabled while it is stopped (as EC2 does for a stopped instance of a
// persistent request). Explicit SpotInstanceRequestId values must all exist.
func (s *Server) describeSpotInstanceRequests(w http.ResponseWriter, req request) {
	filters := parseFilters(req.form)
	if !checkFilters(w, req, filters, func(n string) bool { return spotRequestFilters[n] }) {
		return
	}
	size, sized, ok := maxResults(w, req, 5, 1000, 1000)
	if !ok {
		return
	}
	off, ok := offset(w, req)
	if !ok {
		return
	}
	var all []spotRequestXML
	for _, v := range s.visible(req.region, s.callerAccount(req)) {
		if v.xml.SpotInstanceRequestID == "" {
			continue
		}
		r := spotRequestOf(v.in)
		state, code, msg := "active", "fulfilled", "Your spot request is fulfilled."
		if v.state == "stopped" || v.state == "stopping" {
			state, code, msg = "disabled", "instance-stopped-by-user", "Your spot request is disabled because the instance was stopped by the user."
		}
		all = append(all, spotRequestXML{
			SpotInstanceRequestID: v.xml.SpotInstanceRequestID, Type: r.Type, State: state,
			Status:     spotRequestStatusXML{Code: code, Message: msg},
			InstanceID: v.in.ID, CreateTime: v.xml.LaunchTime, ProductDescription: linuxUNIX,
			LaunchedAvailabilityZone: v.xml.AvailabilityZone, InstanceInterruptionBehavior: r.Behavior,
		})
	}
	if ids := listParam(req.form, "SpotInstanceRequestId"); len(ids) > 0 {
		byID := map[string]spotRequestXML{}
		for _, r := range all {
			byID[r.SpotInstanceRequestID] = r
		}
		all = all[:0:0]
		for _, id := range ids {
			r, ok := byID[id]
			if !ok {
				ec2Fail(w, req, "InvalidSpotInstanceRequestID.NotFound", "The spot instance request ID '%s' does not exist", id)
				return
			}
			all = append(all, r)
		}
	}
	var kept []spotRequestXML
	for _, r := range all {
		if matchFields(filters, map[string]string{
			"spot-instance-request-id": r.SpotInstanceRequestID, "instance-id": r.InstanceID, "state": r.State, "type": r.Type,
			"instance-interruption-behavior": r.InstanceInterruptionBehavior, "launched-availability-zone": r.LaunchedAvailabilityZone,
		}) {
			kept = append(kept, r)
		}
	}
	if !sized && req.form.Get("NextToken") == "" {
		size = len(kept)
	}
	from, to, next := simkit.Page(len(kept), off, size)
	out := describeSpotInstanceRequestsResponse{RequestID: newRequestID(), Requests: kept[from:to], NextToken: nextToken(req, next)}
	if out.Requests == nil {
		out.Requests = []spotRequestXML{}
	}
	writeXMLResponse(w, req.op, ec2XMLNamespace, out)
}

// placementGroupID is the form of a placement group's ID.
var placementGroupID = regexp.MustCompile(`^pg-[0-9a-f]{17}$`)

// PlacementGroupID is the ID the simulator gives the placement group of
// that name in region.
func PlacementGroupID(region, name string) string {
	return "pg-" + hexID(17, "placement-group", region, name)
}
