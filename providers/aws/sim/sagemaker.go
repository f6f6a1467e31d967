package sim

// SageMaker (AWS JSON 1.1, X-Amz-Target SageMaker.<Op>): the fleet's items
// with managed.service sagemaker, as the real API shows them. Endpoints
// group the fleet's production variants (one item each) by endpoint name;
// ListEndpoints and DescribeEndpoint carry no instance type, which only
// DescribeEndpointConfig gives. Notebook instances, Studio apps, training
// and processing jobs are one item each. StopNotebookInstance is
// asynchronous as in AWS: the next read of the notebook says Stopping, later
// reads Stopped (and /_sim/state says stopped at once, as for EC2).

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers/simkit"
)

const (
	sageMakerTarget = "SageMaker."
	// smMaxPage is the MaxResults bound of the SageMaker list calls
	// (shape MaxResults: 1–100). ListTags takes at least 50 and answers at
	// most 50 (TagList), the most tags a resource has.
	smMaxPage  = 100
	smTagsPage = 50
)

// sageMakerOps are the SageMaker operations the simulator serves.
var sageMakerOps = []string{
	"sagemaker:ListEndpoints", "sagemaker:DescribeEndpoint", "sagemaker:DescribeEndpointConfig",
	"sagemaker:ListNotebookInstances", "sagemaker:DescribeNotebookInstance", "sagemaker:StopNotebookInstance",
	"sagemaker:ListApps", "sagemaker:ListTrainingJobs", "sagemaker:DescribeTrainingJob",
	"sagemaker:ListProcessingJobs", "sagemaker:DescribeProcessingJob", "sagemaker:ListTags",
}

// smItem is one SageMaker item of the fleet with its names.
type smItem struct {
	simkit.Live
	kind fleet.ManagedKind
	// name is the resource's name: the endpoint, notebook instance,
	// training or processing job; for an app its AppName.
	name string
	// variant is a production variant's name.
	variant string
	// domain, user, space and appType name a Studio app.
	domain, user, space, appType string
	// arn is the resource's ARN (an endpoint's, not its variant's).
	arn string
}

// isSageMaker reports whether a fleet instance is a SageMaker item.
func isSageMaker(in *fleet.Instance) bool {
	return in.Managed != nil && in.Managed.Service == fleet.SageMaker
}

// smResource reads the resource part of a SageMaker ARN:
// "endpoint/chat-demo/variant/AllTraffic" → ["endpoint" "chat-demo"
// "variant" "AllTraffic"]; nil when id is no SageMaker ARN.
func smResource(id string) []string {
	parts := strings.SplitN(id, ":", 6)
	if len(parts) != 6 || parts[0] != "arn" || parts[2] != "sagemaker" {
		return nil
	}
	return strings.Split(parts[5], "/")
}

// smItemOf names a fleet item as SageMaker does: from its ARN when the
// fleet ID is one, else from the managed block and the instance name.
func (s *Server) smItemOf(l simkit.Live) smItem {
	in := l.Instance
	it := smItem{Live: l, kind: in.Managed.Kind}
	res := smResource(in.ID)
	prefix := fmt.Sprintf("arn:aws:sagemaker:%s:%s:", in.Region, in.Account)
	switch it.kind {
	case fleet.KindEndpoint:
		it.name, it.variant = in.Managed.Endpoint, in.Managed.Deployment
		if len(res) == 4 && res[0] == "endpoint" && res[2] == "variant" {
			it.name, it.variant = res[1], res[3]
		}
		if it.variant == "" {
			it.variant = "AllTraffic"
		}
		it.arn = prefix + "endpoint/" + strings.ToLower(it.name)
		if i := strings.Index(in.ID, "/variant/"); i > 0 && res != nil {
			it.arn = in.ID[:i]
		}
	case fleet.KindStudioApp:
		it.domain, it.user, it.appType, it.name = in.Managed.Workspace, "default", "JupyterLab", "default"
		if len(res) == 5 && res[0] == "app" {
			it.domain, it.user, it.appType, it.name = res[1], res[2], res[3], res[4]
		}
		it.arn = in.ID
		if res == nil {
			it.arn = prefix + strings.Join([]string{"app", it.domain, it.user, it.appType, it.name}, "/")
		}
	default:
		typ := map[fleet.ManagedKind]string{fleet.KindNotebook: "notebook-instance", fleet.KindTrainingJob: "training-job", fleet.KindProcessingJob: "processing-job"}[it.kind]
		it.name = in.Name
		if len(res) == 2 && res[0] == typ {
			it.name = res[1]
		}
		it.arn = in.ID
		if res == nil {
			it.arn = prefix + typ + "/" + strings.ToLower(it.name)
		}
	}
	return it
}

// smItems are the SageMaker items of kind in a region that an account
// sees, in fleet order.
func (s *Server) smItems(region, account string, kind fleet.ManagedKind) []smItem {
	var out []smItem
	for _, l := range s.inv.InScope(region, account) {
		if isSageMaker(l.Instance) && l.Instance.Managed.Kind == kind {
			out = append(out, s.smItemOf(l))
		}
	}
	return out
}

// serveSageMaker answers a SageMaker request.
func (s *Server) serveSageMaker(w http.ResponseWriter, req request) {
	var in smInput
	if len(req.body) > 0 {
		if err := json.Unmarshal(req.body, &in); err != nil {
			smFail(w, req, "SerializationException", "the request body is not JSON: %v", err)
			return
		}
	}
	account := s.callerAccount(req)
	switch req.op {
	case "ListEndpoints":
		s.listEndpoints(w, req, in, account)
	case "DescribeEndpoint":
		s.describeEndpoint(w, req, in, account)
	case "DescribeEndpointConfig":
		s.describeEndpointConfig(w, req, in, account)
	case "ListNotebookInstances":
		s.listNotebookInstances(w, req, in, account)
	case "DescribeNotebookInstance":
		s.describeNotebookInstance(w, req, in, account)
	case "StopNotebookInstance":
		s.stopNotebookInstance(w, req, in, account)
	case "ListApps":
		s.listApps(w, req, in, account)
	case "ListTrainingJobs":
		s.listJobs(w, req, in, account, fleet.KindTrainingJob)
	case "DescribeTrainingJob":
		s.describeJob(w, req, in.TrainingJobName, account, fleet.KindTrainingJob)
	case "ListProcessingJobs":
		s.listJobs(w, req, in, account, fleet.KindProcessingJob)
	case "DescribeProcessingJob":
		s.describeJob(w, req, in.ProcessingJobName, account, fleet.KindProcessingJob)
	case "ListTags":
		s.listTags(w, req, in, account)
	default:
		smFail(w, req, "UnknownOperationException", "the simulator does not serve SageMaker.%s", req.op)
	}
}

// smInput is every request member the simulator reads.
type smInput struct {
	MaxResults            *int
	NextToken             string
	NameContains          string
	StatusEquals          string
	SortBy, SortOrder     string
	EndpointName          string
	EndpointConfigName    string
	NotebookInstanceName  string
	TrainingJobName       string
	ProcessingJobName     string
	DomainIdEquals        string
	UserProfileNameEquals string
	SpaceNameEquals       string
	ResourceArn           string
}

func smFail(w http.ResponseWriter, req request, code, format string, args ...any) {
	writeError(w, req, http.StatusBadRequest, code, fmt.Sprintf(format, args...))
}

// smPage checks MaxResults (lo–hi, def when absent) and the token of a
// query, and cuts n items; ok is false when it answered an error.
func smPage(w http.ResponseWriter, req request, in smInput, n, lo, hi, def int, query string) (from, to int, next string, ok bool) {
	size := def
	if in.MaxResults != nil {
		if *in.MaxResults < lo || *in.MaxResults > hi {
			smFail(w, req, "ValidationException", "1 validation error detected: Value '%d' at 'maxResults' failed to satisfy constraint: Member must have value between %d and %d", *in.MaxResults, lo, hi)
			return 0, 0, "", false
		}
		size = *in.MaxResults
	}
	off, valid := simkit.DecodeToken(in.NextToken, query)
	if !valid {
		smFail(w, req, "ValidationException", "Invalid pagination token")
		return 0, 0, "", false
	}
	from, to, nx := simkit.Page(n, off, size)
	if nx >= 0 {
		next = simkit.EncodeToken(nx, query)
	}
	return from, to, next, true
}

// smTime is a JSON 1.1 timestamp: seconds since the epoch.
func smTime(t time.Time) float64 { return float64(t.UnixMilli()) / 1000 }

// created is when the item was created: its launch time, else 30 days
// before the simulator's clock.
func (s *Server) created(in *fleet.Instance) time.Time {
	if in.LaunchTime != nil {
		return in.LaunchTime.UTC()
	}
	return s.opts.Now().UTC().Add(-30 * 24 * time.Hour).Truncate(time.Hour)
}

// sortItems orders items by "Name", "CreationTime" or "Status", ascending
// unless order is "Descending"; ties keep fleet order.
func (s *Server) sortItems(items []smItem, by, order string, status func(smItem) string) {
	less := func(a, b smItem) int {
		switch by {
		case "Name":
			return strings.Compare(a.name, b.name)
		case "Status":
			return strings.Compare(status(a), status(b))
		}
		return s.created(a.Instance).Compare(s.created(b.Instance))
	}
	sort.SliceStable(items, func(i, j int) bool {
		c := less(items[i], items[j])
		if order == "Descending" {
			c = -c
		}
		return c < 0
	})
}

func checkSort(w http.ResponseWriter, req request, in smInput, keys ...string) bool {
	if in.SortBy != "" && !slices.Contains(keys, in.SortBy) {
		smFail(w, req, "ValidationException", "1 validation error detected: Value '%s' at 'sortBy' failed to satisfy constraint: Member must satisfy enum value set: [%s]", in.SortBy, strings.Join(keys, ", "))
		return false
	}
	if in.SortOrder != "" && in.SortOrder != "Ascending" && in.SortOrder != "Descending" {
		smFail(w, req, "ValidationException", "1 validation error detected: Value '%s' at 'sortOrder' failed to satisfy constraint: Member must satisfy enum value set: [Ascending, Descending]", in.SortOrder)
		return false
	}
	return true
}

// --- endpoints ---------------------------------------------------------

// smEndpoint is an endpoint: its variants in fleet order.
type smEndpoint struct {
	name, arn string
	variants  []smItem
}

// endpoints groups the region's variants by endpoint, in fleet order.
func (s *Server) endpoints(region, account string) []smEndpoint {
	var out []smEndpoint
	index := map[string]int{}
	for _, it := range s.smItems(region, account, fleet.KindEndpoint) {
		i, ok := index[it.name]
		if !ok {
			i = len(out)
			index[it.name] = i
			out = append(out, smEndpoint{name: it.name, arn: it.arn})
		}
		out[i].variants = append(out[i].variants, it)
	}
	return out
}

// status is the endpoint's: InService while any variant bills, else
// OutOfService.
func (e smEndpoint) status() string {
	for _, v := range e.variants {
		if v.State != string(fleet.Stopped) {
			return "InService"
		}
	}
	return "OutOfService"
}

func (e smEndpoint) configName() string { return e.name + "-config" }

func (s *Server) endpointCreated(e smEndpoint) time.Time {
	t := s.created(e.variants[0].Instance)
	for _, v := range e.variants[1:] {
		if c := s.created(v.Instance); c.Before(t) {
			t = c
		}
	}
	return t
}

func (s *Server) listEndpoints(w http.ResponseWriter, req request, in smInput, account string) {
	if !checkSort(w, req, in, "Name", "CreationTime", "Status") {
		return
	}
	var kept []smEndpoint
	for _, e := range s.endpoints(req.region, account) {
		if in.NameContains != "" && !strings.Contains(strings.ToLower(e.name), strings.ToLower(in.NameContains)) {
			continue
		}
		if in.StatusEquals != "" && e.status() != in.StatusEquals {
			continue
		}
		kept = append(kept, e)
	}
	by, order := in.SortBy, in.SortOrder
	if by == "" {
		by = "CreationTime"
	}
	if order == "" {
		order = "Descending"
	}
	sort.SliceStable(kept, func(i, j int) bool {
		var c int
		switch by {
		case "Name":
			c = strings.Compare(kept[i].name, kept[j].name)
		case "Status":
			c = strings.Compare(kept[i].status(), kept[j].status())
		default:
			c = s.endpointCreated(kept[i]).Compare(s.endpointCreated(kept[j]))
		}
		if order == "Descending" {
			c = -c
		}
		return c < 0
	})
	query := jsonFingerprint([]any{"ListEndpoints", req.region, account, in.NameContains, in.StatusEquals, by, order})
	from, to, next, ok := smPage(w, req, in, len(kept), 1, smMaxPage, 10, query)
	if !ok {
		return
	}
	list := make([]map[string]any, 0, to-from)
	for _, e := range kept[from:to] {
		t := smTime(s.endpointCreated(e))
		list = append(list, map[string]any{"EndpointName": e.name, "EndpointArn": e.arn, "CreationTime": t, "LastModifiedTime": t, "EndpointStatus": e.status()})
	}
	out := map[string]any{"Endpoints": list}
	if next != "" {
		out["NextToken"] = next
	}
	writeJSONResponse(w, jsonContentType, out)
}

// findEndpoint finds an endpoint by name, or by its configuration's name
// when config is set (names are case-insensitive in SageMaker); it answers
// the error when there is none.
func (s *Server) findEndpoint(w http.ResponseWriter, req request, name, account string, config bool) (smEndpoint, bool) {
	for _, e := range s.endpoints(req.region, account) {
		if (!config && strings.EqualFold(e.name, name)) || (config && strings.EqualFold(e.configName(), name)) {
			return e, true
		}
	}
	what, typ := "endpoint", "endpoint"
	if config {
		what, typ = "endpoint configuration", "endpoint-config"
	}
	smFail(w, req, "ValidationException", "Could not find %s \"arn:aws:sagemaker:%s:%s:%s/%s\".", what, req.region, account, typ, strings.ToLower(name))
	return smEndpoint{}, false
}

func (s *Server) describeEndpoint(w http.ResponseWriter, req request, in smInput, account string) {
	if in.EndpointName == "" {
		smFail(w, req, "ValidationException", "1 validation error detected: Value null at 'endpointName' failed to satisfy constraint: Member must not be null")
		return
	}
	e, ok := s.findEndpoint(w, req, in.EndpointName, account, false)
	if !ok {
		return
	}
	t := smTime(s.endpointCreated(e))
	var variants []map[string]any
	async := false
	for _, v := range e.variants {
		m := v.Instance.Managed
		async = async || m.Async
		pv := map[string]any{"VariantName": v.variant, "CurrentWeight": 1.0, "DesiredWeight": 1.0}
		if m.Serverless {
			pv["CurrentServerlessConfig"] = map[string]any{"MemorySizeInMB": 6144, "MaxConcurrency": 20}
			pv["DesiredServerlessConfig"] = map[string]any{"MemorySizeInMB": 6144, "MaxConcurrency": 20}
		} else {
			n := m.CurrentReplicas()
			if v.State == string(fleet.Stopped) {
				n = 0
			}
			pv["CurrentInstanceCount"], pv["DesiredInstanceCount"] = n, n
		}
		if sc := managedScaling(m); sc != nil {
			pv["ManagedInstanceScaling"] = sc
		}
		variants = append(variants, pv)
	}
	out := map[string]any{
		"EndpointName": e.name, "EndpointArn": e.arn, "EndpointConfigName": e.configName(),
		"EndpointStatus": e.status(), "CreationTime": t, "LastModifiedTime": t, "ProductionVariants": variants,
	}
	if async {
		out["AsyncInferenceConfig"] = asyncConfig(e.name)
	}
	writeJSONResponse(w, jsonContentType, out)
}

// managedScaling is a variant's ManagedInstanceScaling: the fleet's
// replica bounds; nil when it gives none.
func managedScaling(m *fleet.Managed) map[string]any {
	r := m.Replicas
	if r == nil || (r.Min == nil && r.Max == nil) {
		return nil
	}
	sc := map[string]any{"Status": "ENABLED"}
	if r.Min != nil {
		sc["MinInstanceCount"] = *r.Min
	}
	if r.Max != nil {
		sc["MaxInstanceCount"] = max(*r.Max, 1)
	}
	return sc
}

func asyncConfig(endpoint string) map[string]any {
	return map[string]any{"OutputConfig": map[string]any{"S3OutputPath": "s3://sagemaker-async/" + endpoint + "/output"}}
}

func (s *Server) describeEndpointConfig(w http.ResponseWriter, req request, in smInput, account string) {
	if in.EndpointConfigName == "" {
		smFail(w, req, "ValidationException", "1 validation error detected: Value null at 'endpointConfigName' failed to satisfy constraint: Member must not be null")
		return
	}
	e, ok := s.findEndpoint(w, req, in.EndpointConfigName, account, true)
	if !ok {
		return
	}
	var variants []map[string]any
	async := false
	for _, v := range e.variants {
		m := v.Instance.Managed
		async = async || m.Async
		pv := map[string]any{"VariantName": v.variant, "ModelName": e.name + "-model", "InitialVariantWeight": 1.0}
		if m.Serverless {
			pv["ServerlessConfig"] = map[string]any{"MemorySizeInMB": 6144, "MaxConcurrency": 20}
		} else {
			pv["InstanceType"] = v.Instance.InstanceType
			pv["InitialInstanceCount"] = max(m.CurrentReplicas(), 1)
		}
		if sc := managedScaling(m); sc != nil {
			pv["ManagedInstanceScaling"] = sc
		}
		variants = append(variants, pv)
	}
	arn := strings.Replace(e.arn, ":endpoint/", ":endpoint-config/", 1) + "-config"
	out := map[string]any{
		"EndpointConfigName": e.configName(), "EndpointConfigArn": arn,
		"CreationTime": smTime(s.endpointCreated(e)), "ProductionVariants": variants,
	}
	if async {
		out["AsyncInferenceConfig"] = asyncConfig(e.name)
	}
	writeJSONResponse(w, jsonContentType, out)
}

// --- notebook instances ------------------------------------------------

// notebookStatus is what SageMaker says of a notebook instance: InService
// while it runs; Stopping on the first read after StopNotebookInstance,
// Stopped after that.
func (s *Server) notebookStatus(it smItem) string {
	if it.State != string(fleet.Stopped) {
		return "InService"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.smStopping[it.Instance.ID] {
		return "Stopping"
	}
	return "Stopped"
}

// observeNotebooks ends the Stopping of the notebooks a read has shown.
func (s *Server) observeNotebooks(items []smItem) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, it := range items {
		delete(s.smStopping, it.Instance.ID)
	}
}

// notebookSummary is a notebook instance as ListNotebookInstances shows
// it. SageMaker has no idle shutdown setting of its own: an auto-stop
// script runs from a lifecycle configuration. A fleet item whose idle
// shutdown is off (0) has none; one whose idle shutdown is set or unknown
// has one, named after it.
func (s *Server) notebookSummary(it smItem, status string) map[string]any {
	t := smTime(s.created(it.Instance))
	out := map[string]any{
		"NotebookInstanceName": it.name, "NotebookInstanceArn": it.arn, "NotebookInstanceStatus": status,
		"InstanceType": it.Instance.InstanceType, "CreationTime": t, "LastModifiedTime": t,
		"Url": fmt.Sprintf("%s.notebook.%s.sagemaker.aws", it.name, it.Instance.Region),
	}
	switch idle := it.Instance.Managed.IdleShutdownMinutes; {
	case idle == nil:
		out["NotebookInstanceLifecycleConfigName"] = "on-start"
	case *idle > 0:
		out["NotebookInstanceLifecycleConfigName"] = fmt.Sprintf("auto-stop-idle-%.0fm", *idle)
	}
	return out
}

func (s *Server) listNotebookInstances(w http.ResponseWriter, req request, in smInput, account string) {
	if !checkSort(w, req, in, "Name", "CreationTime", "Status") {
		return
	}
	items := s.smItems(req.region, account, fleet.KindNotebook)
	status := map[string]string{}
	for _, it := range items {
		status[it.Instance.ID] = s.notebookStatus(it)
	}
	var kept []smItem
	for _, it := range items {
		if in.NameContains != "" && !strings.Contains(strings.ToLower(it.name), strings.ToLower(in.NameContains)) {
			continue
		}
		if in.StatusEquals != "" && status[it.Instance.ID] != in.StatusEquals {
			continue
		}
		kept = append(kept, it)
	}
	by := in.SortBy
	if by == "" {
		by = "Name"
	}
	s.sortItems(kept, by, in.SortOrder, func(it smItem) string { return status[it.Instance.ID] })
	query := jsonFingerprint([]any{"ListNotebookInstances", req.region, account, in.NameContains, in.StatusEquals, by, in.SortOrder})
	from, to, next, ok := smPage(w, req, in, len(kept), 1, smMaxPage, 10, query)
	if !ok {
		return
	}
	list := make([]map[string]any, 0, to-from)
	for _, it := range kept[from:to] {
		list = append(list, s.notebookSummary(it, status[it.Instance.ID]))
	}
	s.observeNotebooks(kept[from:to])
	out := map[string]any{"NotebookInstances": list}
	if next != "" {
		out["NextToken"] = next
	}
	writeJSONResponse(w, jsonContentType, out)
}

// findNotebook finds a notebook instance by name; it answers SageMaker's
// RecordNotFound when there is none.
func (s *Server) findNotebook(w http.ResponseWriter, req request, name, account string) (smItem, bool) {
	if name == "" {
		smFail(w, req, "ValidationException", "1 validation error detected: Value null at 'notebookInstanceName' failed to satisfy constraint: Member must not be null")
		return smItem{}, false
	}
	for _, it := range s.smItems(req.region, account, fleet.KindNotebook) {
		if strings.EqualFold(it.name, name) {
			return it, true
		}
	}
	smFail(w, req, "ValidationException", "RecordNotFound")
	return smItem{}, false
}

func (s *Server) describeNotebookInstance(w http.ResponseWriter, req request, in smInput, account string) {
	it, ok := s.findNotebook(w, req, in.NotebookInstanceName, account)
	if !ok {
		return
	}
	out := s.notebookSummary(it, s.notebookStatus(it))
	s.observeNotebooks([]smItem{it})
	out["VolumeSizeInGB"] = 5
	out["DirectInternetAccess"] = "Enabled"
	out["RootAccess"] = "Enabled"
	out["PlatformIdentifier"] = "notebook-al2-v3"
	writeJSONResponse(w, jsonContentType, out)
}

// stopNotebookInstance stops an InService notebook instance; any other
// status is refused as SageMaker does.
func (s *Server) stopNotebookInstance(w http.ResponseWriter, req request, in smInput, account string) {
	it, ok := s.findNotebook(w, req, in.NotebookInstanceName, account)
	if !ok {
		return
	}
	if st := s.notebookStatus(it); st != "InService" {
		smFail(w, req, "ValidationException", "Status (%s) not in ([InService]). Unable to transition to (Stopping) for Notebook Instance (%s).", st, it.arn)
		return
	}
	s.inv.SetState(it.Instance.ID, string(fleet.Stopped))
	s.mu.Lock()
	if s.smStopping == nil {
		s.smStopping = map[string]bool{}
	}
	s.smStopping[it.Instance.ID] = true
	s.mu.Unlock()
	writeJSONResponse(w, jsonContentType, map[string]any{})
}

// --- Studio apps -------------------------------------------------------

// appStatus is a Studio app's: InService while it runs; an app is
// stopped by deleting it, so a stopped one is Deleted.
func appStatus(it smItem) string {
	if it.State == string(fleet.Stopped) {
		return "Deleted"
	}
	return "InService"
}

func (s *Server) listApps(w http.ResponseWriter, req request, in smInput, account string) {
	if in.SortBy != "" && in.SortBy != "CreationTime" {
		smFail(w, req, "ValidationException", "1 validation error detected: Value '%s' at 'sortBy' failed to satisfy constraint: Member must satisfy enum value set: [CreationTime]", in.SortBy)
		return
	}
	if in.UserProfileNameEquals != "" && in.SpaceNameEquals != "" {
		smFail(w, req, "ValidationException", "Only one of UserProfileNameEquals and SpaceNameEquals can be set")
		return
	}
	var kept []smItem
	for _, it := range s.smItems(req.region, account, fleet.KindStudioApp) {
		if (in.DomainIdEquals != "" && it.domain != in.DomainIdEquals) ||
			(in.UserProfileNameEquals != "" && it.user != in.UserProfileNameEquals) ||
			(in.SpaceNameEquals != "" && it.user != in.SpaceNameEquals) {
			continue
		}
		kept = append(kept, it)
	}
	s.sortItems(kept, "CreationTime", in.SortOrder, appStatus)
	query := jsonFingerprint([]any{"ListApps", req.region, account, in.DomainIdEquals, in.UserProfileNameEquals, in.SpaceNameEquals, in.SortOrder})
	from, to, next, ok := smPage(w, req, in, len(kept), 1, smMaxPage, 10, query)
	if !ok {
		return
	}
	list := make([]map[string]any, 0, to-from)
	for _, it := range kept[from:to] {
		list = append(list, map[string]any{
			"DomainId": it.domain, "UserProfileName": it.user, "AppType": it.appType, "AppName": it.name,
			"Status": appStatus(it), "CreationTime": smTime(s.created(it.Instance)),
			"ResourceSpec": map[string]any{"InstanceType": it.Instance.InstanceType},
		})
	}
	out := map[string]any{"Apps": list}
	if next != "" {
		out["NextToken"] = next
	}
	writeJSONResponse(w, jsonContentType, out)
}

// --- training and processing jobs --------------------------------------

// jobStatus is a job's: InProgress while it runs, Completed once the
// fleet has it stopped.
func jobStatus(it smItem) string {
	if it.State == string(fleet.Stopped) {
		return "Completed"
	}
	return "InProgress"
}

// jobNames are the members that name a kind of job in SageMaker's shapes.
func jobNames(kind fleet.ManagedKind) (list, name, arn, status string) {
	if kind == fleet.KindProcessingJob {
		return "ProcessingJobSummaries", "ProcessingJobName", "ProcessingJobArn", "ProcessingJobStatus"
	}
	return "TrainingJobSummaries", "TrainingJobName", "TrainingJobArn", "TrainingJobStatus"
}

func (s *Server) listJobs(w http.ResponseWriter, req request, in smInput, account string, kind fleet.ManagedKind) {
	if !checkSort(w, req, in, "Name", "CreationTime", "Status") {
		return
	}
	var kept []smItem
	for _, it := range s.smItems(req.region, account, kind) {
		if in.NameContains != "" && !strings.Contains(strings.ToLower(it.name), strings.ToLower(in.NameContains)) {
			continue
		}
		if in.StatusEquals != "" && jobStatus(it) != in.StatusEquals {
			continue
		}
		kept = append(kept, it)
	}
	by := in.SortBy
	if by == "" {
		by = "CreationTime"
	}
	s.sortItems(kept, by, in.SortOrder, jobStatus)
	query := jsonFingerprint([]any{req.op, req.region, account, in.NameContains, in.StatusEquals, by, in.SortOrder})
	from, to, next, ok := smPage(w, req, in, len(kept), 1, smMaxPage, 10, query)
	if !ok {
		return
	}
	listKey, nameKey, arnKey, statusKey := jobNames(kind)
	list := make([]map[string]any, 0, to-from)
	for _, it := range kept[from:to] {
		t := smTime(s.created(it.Instance))
		list = append(list, map[string]any{nameKey: it.name, arnKey: it.arn, statusKey: jobStatus(it), "CreationTime": t, "LastModifiedTime": t})
	}
	out := map[string]any{listKey: list}
	if next != "" {
		out["NextToken"] = next
	}
	writeJSONResponse(w, jsonContentType, out)
}

func (s *Server) describeJob(w http.ResponseWriter, req request, name, account string, kind fleet.ManagedKind) {
	_, nameKey, arnKey, statusKey := jobNames(kind)
	if name == "" {
		smFail(w, req, "ValidationException", "1 validation error detected: Value null at '%s' failed to satisfy constraint: Member must not be null", strings.ToLower(nameKey[:1])+nameKey[1:])
		return
	}
	var it *smItem
	for _, x := range s.smItems(req.region, account, kind) {
		if x.name == name {
			it = &x
			break
		}
	}
	what := "Training job"
	if kind == fleet.KindProcessingJob {
		what = "Processing job"
	}
	if it == nil {
		smFail(w, req, "ResourceNotFound", "%s %s does not exist.", what, name)
		return
	}
	in := it.Instance
	start := smTime(s.created(in))
	count := max(in.Managed.CurrentReplicas(), 1)
	out := map[string]any{nameKey: it.name, arnKey: it.arn, statusKey: jobStatus(*it), "CreationTime": start, "LastModifiedTime": start,
		"RoleArn": fmt.Sprintf("arn:aws:iam::%s:role/SageMakerExecution", in.Account)}
	if kind == fleet.KindProcessingJob {
		out["ProcessingStartTime"] = start
		out["ProcessingResources"] = map[string]any{"ClusterConfig": map[string]any{"InstanceType": in.InstanceType, "InstanceCount": count, "VolumeSizeInGB": 30}}
		out["AppSpecification"] = map[string]any{"ImageUri": "683313688378.dkr.ecr.us-east-1.amazonaws.com/sagemaker-scikit-learn:1.2-1-cpu-py3"}
	} else {
		out["TrainingStartTime"] = start
		out["SecondaryStatus"] = "Training"
		if jobStatus(*it) == "Completed" {
			out["SecondaryStatus"] = "Completed"
		}
		out["ModelArtifacts"] = map[string]any{"S3ModelArtifacts": "s3://sagemaker-" + in.Region + "-" + in.Account + "/" + it.name + "/output/model.tar.gz"}
		out["StoppingCondition"] = map[string]any{"MaxRuntimeInSeconds": 432000}
		out["ResourceConfig"] = map[string]any{"InstanceType": in.InstanceType, "InstanceCount": count, "VolumeSizeInGB": 100}
		out["EnableManagedSpotTraining"] = in.Lifecycle == fleet.Spot
		if in.Lifecycle == fleet.Spot {
			out["StoppingCondition"] = map[string]any{"MaxRuntimeInSeconds": 432000, "MaxWaitTimeInSeconds": 864000}
		}
	}
	writeJSONResponse(w, jsonContentType, out)
}

// --- tags --------------------------------------------------------------

// listTags answers the tags of a SageMaker resource by ARN: an endpoint's
// are those of its variants in the fleet (the first that names a key wins).
func (s *Server) listTags(w http.ResponseWriter, req request, in smInput, account string) {
	if in.ResourceArn == "" {
		smFail(w, req, "ValidationException", "1 validation error detected: Value null at 'resourceArn' failed to satisfy constraint: Member must not be null")
		return
	}
	var tags map[string]string
	found := false
	for _, l := range s.inv.InScope(req.region, account) {
		if !isSageMaker(l.Instance) {
			continue
		}
		it := s.smItemOf(l)
		if it.arn != in.ResourceArn {
			continue
		}
		found = true
		for k, v := range l.Instance.Tags {
			if _, ok := tags[k]; !ok {
				if tags == nil {
					tags = map[string]string{}
				}
				tags[k] = v
			}
		}
	}
	if !found {
		smFail(w, req, "ValidationException", "Resource %s does not exist or is not tagged.", in.ResourceArn)
		return
	}
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	query := jsonFingerprint([]any{"ListTags", req.region, account, in.ResourceArn})
	if in.MaxResults != nil && *in.MaxResults > smTagsPage {
		in.MaxResults = new(smTagsPage)
	}
	from, to, next, ok := smPage(w, req, in, len(keys), smTagsPage, smTagsPage, smTagsPage, query)
	if !ok {
		return
	}
	list := make([]map[string]string, 0, to-from)
	for _, k := range keys[from:to] {
		list = append(list, map[string]string{"Key": k, "Value": tags[k]})
	}
	out := map[string]any{"Tags": list}
	if next != "" {
		out["NextToken"] = next
	}
	writeJSONResponse(w, jsonContentType, out)
}
