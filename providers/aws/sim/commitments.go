package sim

import (
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers/simkit"
)

// The commitments the simulator serves are the fleet file's
// (fleet.Fleet.Commitments) of provider aws, as EC2's
// DescribeReservedInstances and DescribeCapacityReservations and Savings
// Plans' DescribeSavingsPlans answer them (field names and enums from the
// EC2 2016-11-15 and Savings Plans 2019-06-28 models). A commitment's state
// follows the simulator's clock: before Start it is queued (scheduled for
// a capacity reservation), from End on retired (expired).

// commitmentOps are the operations of this file.
var commitmentOps = []string{"ec2:DescribeReservedInstances", "ec2:DescribeCapacityReservations", "savingsplans:DescribeSavingsPlans"}

// heldOf is the AWS commitments of f, each with its account (acct when it
// names none).
func heldOf(f *fleet.Fleet, acct string) []fleet.Held {
	var out []fleet.Held
	for _, h := range f.Commitments {
		if h.Provider != fleet.AWS {
			continue
		}
		if h.Account == "" {
			h.Account = acct
		}
		out = append(out, h)
	}
	return out
}

// serveCommitments answers the commitment operations; false for the others.
func (s *Server) serveCommitments(w http.ResponseWriter, req request) bool {
	switch req.service + ":" + req.op {
	case "ec2:DescribeReservedInstances", "ec2:DescribeCapacityReservations":
		if boolParam(req.form, "DryRun") {
			writeError(w, req, http.StatusPreconditionFailed, "DryRunOperation", "Request would have succeeded, but DryRun flag is set.")
			return true
		}
		if req.op == "DescribeReservedInstances" {
			s.describeReservedInstances(w, req)
		} else {
			s.describeCapacityReservations(w, req)
		}
		return true
	case "savingsplans:DescribeSavingsPlans":
		s.describeSavingsPlans(w, req)
		return true
	}
	return false
}

// heldRegion is the region of a commitment: its scope's, else its zone's.
func heldRegion(h fleet.Held) string {
	if h.Scope.Region != "" {
		return h.Scope.Region
	}
	if z := h.Scope.Zone; len(z) > 1 {
		return z[:len(z)-1]
	}
	return ""
}

// heldState is active, or before (its start is to come) or after (ended).
func heldState(h fleet.Held, now time.Time, before, active, after string) string {
	switch {
	case h.Start != nil && now.Before(*h.Start):
		return before
	case h.End != nil && !now.Before(*h.End):
		return after
	}
	return active
}

func termSeconds(term string) int64 {
	if term == "3y" {
		return spThreeYears
	}
	return spYear
}

func isoTime(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

// --- DescribeReservedInstances ---

type riCharge struct {
	Frequency string `xml:"frequency"`
	Amount    string `xml:"amount"`
}

type riItem struct {
	ReservedInstancesID string     `xml:"reservedInstancesId"`
	InstanceType        string     `xml:"instanceType"`
	AvailabilityZone    string     `xml:"availabilityZone,omitempty"`
	Start               string     `xml:"start,omitempty"`
	End                 string     `xml:"end,omitempty"`
	Duration            int64      `xml:"duration"`
	UsagePrice          string     `xml:"usagePrice"`
	FixedPrice          string     `xml:"fixedPrice"`
	InstanceCount       int        `xml:"instanceCount"`
	ProductDescription  string     `xml:"productDescription"`
	State               string     `xml:"state"`
	InstanceTenancy     string     `xml:"instanceTenancy"`
	CurrencyCode        string     `xml:"currencyCode"`
	OfferingType        string     `xml:"offeringType"`
	RecurringCharges    []riCharge `xml:"recurringCharges>item"`
	OfferingClass       string     `xml:"offeringClass"`
	Scope               string     `xml:"scope"`
}

type describeRIResponse struct {
	RequestID string   `xml:"requestId"`
	Items     []riItem `xml:"reservedInstancesSet>item"`
}

// offeringTypes are EC2's names of the payment options.
var offeringTypes = map[string]string{"all-upfront": "All Upfront", "partial-upfront": "Partial Upfront", "no-upfront": "No Upfront"}

// riItem is a reserved instance as EC2 describes it. Its price is split
// as its payment option pays it (FACTS.md): All Upfront is a fixed price
// of the hourly rate times the term's hours, No Upfront an hourly
// recurring charge of the rate, Partial Upfront half of each.
func (s *Server) riItem(h fleet.Held) riItem {
	it := riItem{
		ReservedInstancesID: h.ID, InstanceType: h.InstanceType, Start: isoTime(h.Start), End: isoTime(h.End),
		Duration: termSeconds(h.Term), UsagePrice: "0.0", InstanceCount: int(h.Count), ProductDescription: "Linux/UNIX",
		State: heldState(h, s.opts.Now(), "queued", "active", "retired"), InstanceTenancy: "default", CurrencyCode: "USD",
		OfferingClass: "standard", Scope: "Region",
	}
	if h.Kind == "convertible-reserved-instance" {
		it.OfferingClass = "convertible"
	}
	if h.Scope.Zone != "" {
		it.Scope, it.AvailabilityZone = "Availability Zone", h.Scope.Zone
	} else if !h.SizeFlexible {
		// Only Linux/UNIX regional RIs of default tenancy are size
		// flexible; a regional RI that is not is for another platform.
		it.ProductDescription = "Windows"
	}
	it.OfferingType = offeringTypes[h.Payment]
	if it.OfferingType == "" {
		it.OfferingType = "No Upfront"
	}
	rate := decimal.Zero
	if h.HourlyRate != nil {
		rate = *h.HourlyRate
	}
	hours := decimal.NewFromInt(it.Duration / 3600)
	fixed, hourly := decimal.Zero, rate
	switch it.OfferingType {
	case "All Upfront":
		fixed, hourly = rate.Mul(hours), decimal.Zero
	case "Partial Upfront":
		half := rate.Div(decimal.NewFromInt(2))
		fixed, hourly = half.Mul(hours), half
	}
	it.FixedPrice = fixed.String()
	it.RecurringCharges = []riCharge{{Frequency: "Hourly", Amount: hourly.String()}}
	return it
}

// riFilters are the filters EC2 documents for DescribeReservedInstances
// (FACTS.md), and tag:<key>. The simulator's RIs have no zone ID and no
// tags, so those filters match none.
var riFilters = map[string]bool{"availability-zone": true, "availability-zone-id": true, "duration": true, "end": true, "fixed-price": true,
	"instance-type": true, "scope": true, "product-description": true, "reserved-instances-id": true, "start": true, "state": true,
	"tag-key": true, "usage-price": true}

func (s *Server) describeReservedInstances(w http.ResponseWriter, req request) {
	filters := parseFilters(req.form)
	if !checkFilters(w, req, filters, func(n string) bool { return riFilters[n] || strings.HasPrefix(n, "tag:") }) {
		return
	}
	ids := listParam(req.form, "ReservedInstancesId")
	class := req.form.Get("OfferingClass")
	// OfferingType (the model's offeringType member) selects by payment
	// option, as the offering-type filter would.
	payment := req.form.Get("OfferingType")
	if payment != "" && payment != "Heavy Utilization" && payment != "Medium Utilization" && payment != "Light Utilization" &&
		payment != "No Upfront" && payment != "Partial Upfront" && payment != "All Upfront" {
		ec2Fail(w, req, "InvalidParameterValue", "Value (%s) for parameter offeringType is invalid.", payment)
		return
	}
	account := s.callerAccount(req)
	out := describeRIResponse{RequestID: newRequestID(), Items: []riItem{}}
	for _, h := range s.held {
		if !strings.HasSuffix(h.Kind, "reserved-instance") || h.Account != account || heldRegion(h) != req.region {
			continue
		}
		it := s.riItem(h)
		if len(ids) > 0 && !contains(ids, it.ReservedInstancesID) || class != "" && class != it.OfferingClass || payment != "" && payment != it.OfferingType {
			continue
		}
		keep := matchFields(filters, map[string]string{
			"availability-zone": it.AvailabilityZone, "end": it.End, "start": it.Start, "fixed-price": it.FixedPrice,
			"usage-price": it.UsagePrice, "duration": strconv.FormatInt(it.Duration, 10), "instance-type": it.InstanceType,
			"scope": it.Scope, "product-description": it.ProductDescription, "reserved-instances-id": it.ReservedInstancesID,
			"state": it.State,
		})
		if keep {
			out.Items = append(out.Items, it)
		}
	}
	writeXMLResponse(w, req.op, ec2XMLNamespace, out)
}

// --- DescribeCapacityReservations ---

type crItem struct {
	CapacityReservationID  string `xml:"capacityReservationId"`
	OwnerID                string `xml:"ownerId"`
	CapacityReservationArn string `xml:"capacityReservationArn"`
	InstanceType           string `xml:"instanceType"`
	InstancePlatform       string `xml:"instancePlatform"`
	AvailabilityZone       string `xml:"availabilityZone"`
	Tenancy                string `xml:"tenancy"`
	TotalInstanceCount     int    `xml:"totalInstanceCount"`
	AvailableInstanceCount int    `xml:"availableInstanceCount"`
	EbsOptimized           bool   `xml:"ebsOptimized"`
	EphemeralStorage       bool   `xml:"ephemeralStorage"`
	State                  string `xml:"state"`
	StartDate              string `xml:"startDate,omitempty"`
	EndDate                string `xml:"endDate,omitempty"`
	EndDateType            string `xml:"endDateType"`
	InstanceMatchCriteria  string `xml:"instanceMatchCriteria"`
	CreateDate             string `xml:"createDate,omitempty"`
	ReservationType        string `xml:"reservationType"`
}

type describeCRResponse struct {
	RequestID string   `xml:"requestId"`
	Items     []crItem `xml:"capacityReservationSet>item"`
	NextToken string   `xml:"nextToken,omitempty"`
}

// crFilters are the filters EC2 documents for DescribeCapacityReservations
// (FACTS.md). The simulator's reservations are on no Outpost and in no
// placement group, so those filters match none.
var crFilters = map[string]bool{"instance-type": true, "owner-id": true, "availability-zone": true, "instance-platform": true,
	"tenancy": true, "outpost-arn": true, "state": true, "start-date": true, "end-date": true, "end-date-type": true,
	"instance-match-criteria": true, "placement-group-arn": true}

// crItem is a capacity reservation or capacity block as EC2 describes it;
// its available count is its total less the fleet's running instances
// that name it.
func (s *Server) crItem(h fleet.Held) crItem {
	zone := h.Scope.Zone
	if zone == "" {
		zone = heldRegion(h) + "a"
	}
	it := crItem{
		CapacityReservationID: h.ID, OwnerID: h.Account,
		CapacityReservationArn: "arn:aws:ec2:" + heldRegion(h) + ":" + h.Account + ":capacity-reservation/" + h.ID,
		InstanceType:           h.InstanceType, InstancePlatform: "Linux/UNIX", AvailabilityZone: zone, Tenancy: "default",
		TotalInstanceCount: int(h.Count), State: heldState(h, s.opts.Now(), "scheduled", "active", "expired"),
		StartDate: isoTime(h.Start), CreateDate: isoTime(h.Start), EndDate: isoTime(h.End), EndDateType: "unlimited",
		InstanceMatchCriteria: "open", ReservationType: "default",
	}
	if h.End != nil {
		it.EndDateType = "limited"
	}
	if h.Kind == "capacity-block" {
		it.ReservationType, it.InstanceMatchCriteria = "capacity-block", "targeted"
	}
	used := 0
	for _, l := range s.inv.InScope(heldRegion(h), h.Account) {
		if l.Instance.Commitment != nil && l.Instance.Commitment.ID == h.ID && l.State == "running" {
			used++
		}
	}
	it.AvailableInstanceCount = max(it.TotalInstanceCount-used, 0)
	return it
}

func (s *Server) describeCapacityReservations(w http.ResponseWriter, req request) {
	filters := parseFilters(req.form)
	if !checkFilters(w, req, filters, func(n string) bool { return crFilters[n] }) {
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
	ids := listParam(req.form, "CapacityReservationId")
	account := s.callerAccount(req)
	var kept []crItem
	for _, h := range s.held {
		if (h.Kind != "capacity-reservation" && h.Kind != "capacity-block") || h.Account != account || heldRegion(h) != req.region {
			continue
		}
		it := s.crItem(h)
		if len(ids) > 0 && !contains(ids, it.CapacityReservationID) {
			continue
		}
		keep := matchFields(filters, map[string]string{"instance-type": it.InstanceType, "owner-id": it.OwnerID,
			"availability-zone": it.AvailabilityZone, "instance-platform": it.InstancePlatform, "tenancy": it.Tenancy,
			"state": it.State, "start-date": it.StartDate, "end-date": it.EndDate, "end-date-type": it.EndDateType,
			"instance-match-criteria": it.InstanceMatchCriteria})
		if keep {
			kept = append(kept, it)
		}
	}
	from, to, next := simkit.Page(len(kept), off, size)
	out := describeCRResponse{RequestID: newRequestID(), Items: append([]crItem{}, kept[from:to]...), NextToken: nextToken(req, next)}
	writeXMLResponse(w, req.op, ec2XMLNamespace, out)
}

// --- Savings Plans DescribeSavingsPlans (REST JSON) ---

type describeSPInput struct {
	SavingsPlanArns []string   `json:"savingsPlanArns,omitempty"`
	SavingsPlanIDs  []string   `json:"savingsPlanIds,omitempty"`
	NextToken       string     `json:"nextToken,omitempty"`
	MaxResults      *int       `json:"maxResults,omitempty"`
	States          []string   `json:"states,omitempty"`
	Filters         []spFilter `json:"filters,omitempty"`
}

type savingsPlan struct {
	OfferingID             string            `json:"offeringId"`
	SavingsPlanID          string            `json:"savingsPlanId"`
	SavingsPlanArn         string            `json:"savingsPlanArn"`
	Description            string            `json:"description"`
	Start                  string            `json:"start,omitempty"`
	End                    string            `json:"end,omitempty"`
	State                  string            `json:"state"`
	Region                 string            `json:"region,omitempty"`
	EC2InstanceFamily      string            `json:"ec2InstanceFamily,omitempty"`
	SavingsPlanType        string            `json:"savingsPlanType"`
	PaymentOption          string            `json:"paymentOption"`
	ProductTypes           []string          `json:"productTypes"`
	Currency               string            `json:"currency"`
	Commitment             string            `json:"commitment"`
	UpfrontPaymentAmount   string            `json:"upfrontPaymentAmount"`
	RecurringPaymentAmount string            `json:"recurringPaymentAmount"`
	TermDurationInSeconds  int64             `json:"termDurationInSeconds"`
	Tags                   map[string]string `json:"tags,omitempty"`
}

// spPlanFilters are the DescribeSavingsPlans filters the model lists.
var spPlanFilters = map[string]bool{"region": true, "ec2-instance-family": true, "commitment": true, "upfront": true, "term": true,
	"savings-plan-type": true, "payment-option": true, "start": true, "end": true, "instance-family": true}

// savingsPlan is a plan as Savings Plans describes it: the upfront payment
// is the commitment times the term's hours for All Upfront, half of it
// for Partial Upfront; the rest is paid hourly.
func (s *Server) savingsPlan(h fleet.Held) savingsPlan {
	id, arn := h.ID, h.ID
	if strings.HasPrefix(h.ID, "arn:") {
		id = h.ID[strings.LastIndexByte(h.ID, '/')+1:]
	} else {
		arn = "arn:aws:savingsplans::" + h.Account + ":savingsplan/" + h.ID
	}
	sp := savingsPlan{
		OfferingID: uuidID("sp-offering", h.Kind, h.Term, h.Payment), SavingsPlanID: id, SavingsPlanArn: arn,
		Start: isoTime(h.Start), End: isoTime(h.End), State: heldState(h, s.opts.Now(), "queued", "active", "retired"),
		SavingsPlanType: "Compute", PaymentOption: offeringTypes[h.Payment], ProductTypes: []string{"EC2", "Fargate", "Lambda"},
		Currency: "USD", TermDurationInSeconds: termSeconds(h.Term),
	}
	if sp.PaymentOption == "" {
		sp.PaymentOption = "No Upfront"
	}
	switch h.Kind {
	case "ec2-instance-savings-plan":
		sp.SavingsPlanType, sp.Region, sp.EC2InstanceFamily, sp.ProductTypes = "EC2Instance", h.Scope.Region, h.InstanceFamily, []string{"EC2"}
	case "sagemaker-savings-plan":
		sp.SavingsPlanType, sp.ProductTypes = "SageMaker", []string{"SageMaker"}
	}
	commit := decimal.Zero
	if h.HourlyCommitment != nil {
		commit = *h.HourlyCommitment
	}
	sp.Commitment = commit.String()
	total := commit.Mul(decimal.NewFromInt(sp.TermDurationInSeconds / 3600))
	upfront, recurring := decimal.Zero, commit
	switch sp.PaymentOption {
	case "All Upfront":
		upfront, recurring = total, decimal.Zero
	case "Partial Upfront":
		upfront, recurring = total.Div(decimal.NewFromInt(2)), commit.Div(decimal.NewFromInt(2))
	}
	sp.UpfrontPaymentAmount, sp.RecurringPaymentAmount = upfront.String(), recurring.String()
	years := "1 year"
	if h.Term == "3y" {
		years = "3 year"
	}
	sp.Description = years + " " + sp.PaymentOption + " " + sp.SavingsPlanType + " Savings Plan"
	return sp
}

func (sp savingsPlan) filterValue(name string) string {
	switch name {
	case "region":
		return sp.Region
	case "ec2-instance-family", "instance-family":
		return sp.EC2InstanceFamily
	case "commitment":
		return sp.Commitment
	case "upfront":
		return sp.UpfrontPaymentAmount
	case "term":
		return strconv.FormatInt(sp.TermDurationInSeconds, 10)
	case "savings-plan-type":
		return sp.SavingsPlanType
	case "payment-option":
		return sp.PaymentOption
	case "start":
		return sp.Start
	case "end":
		return sp.End
	}
	return ""
}

func (s *Server) describeSavingsPlans(w http.ResponseWriter, req request) {
	var in describeSPInput
	if !decodeSP(w, req, &in, &in.Filters, spPlanFilters) {
		return
	}
	size := 1000
	if in.MaxResults != nil {
		// The model's MaxResults is 1 to 1000 (unlike the offering
		// rates' 0 to 1000).
		if *in.MaxResults < 1 || *in.MaxResults > 1000 {
			writeError(w, req, http.StatusBadRequest, "ValidationException", "maxResults must be between 1 and 1000")
			return
		}
		size = *in.MaxResults
	}
	paging := in
	paging.MaxResults, paging.NextToken = nil, ""
	query := jsonFingerprint(paging)
	off, ok := simkit.DecodeToken(in.NextToken, query)
	if !ok {
		writeError(w, req, http.StatusBadRequest, "ValidationException", "invalid nextToken")
		return
	}
	account := s.callerAccount(req)
	var kept []savingsPlan
	for _, h := range s.held {
		if !strings.HasSuffix(h.Kind, "savings-plan") || h.Account != account {
			continue
		}
		sp := s.savingsPlan(h)
		if !anyFold(in.SavingsPlanArns, sp.SavingsPlanArn) || !anyFold(in.SavingsPlanIDs, sp.SavingsPlanID) || !anyFold(in.States, sp.State) {
			continue
		}
		keep := true
		for _, f := range in.Filters {
			keep = keep && len(f.Values) > 0 && anyFold(f.Values, sp.filterValue(f.Name))
		}
		if keep {
			kept = append(kept, sp)
		}
	}
	sort.SliceStable(kept, func(i, j int) bool { return kept[i].Start > kept[j].Start })
	from, to, next := simkit.Page(len(kept), off, size)
	out := struct {
		SavingsPlans []savingsPlan `json:"savingsPlans"`
		NextToken    string        `json:"nextToken,omitempty"`
	}{SavingsPlans: append([]savingsPlan{}, kept[from:to]...)}
	if next >= 0 {
		out.NextToken = simkit.EncodeToken(next, query)
	}
	writeJSONResponse(w, "application/json", out)
}

// matchFields reports whether an item whose filterable fields are fields
// passes every filter; a filter on a field the item lacks matches nothing.
func matchFields(filters []queryFilter, fields map[string]string) bool {
	for _, f := range filters {
		if v, ok := fields[f.name]; !ok || !f.matchAny(v) {
			return false
		}
	}
	return true
}
