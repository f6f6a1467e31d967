package sim

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/aws/smithy-go/encoding/cbor"

	"github.com/gpufinops/gpufinops/providers/aws/sim/models"
)

// The contract checks must be able to fail: each test here takes a real
// answer of the simulator, breaks it in one way and wants a violation.

// corruptText replaces the first match of re in s, failing the test when
// there is none (the corruption would prove nothing).
func corruptText(t *testing.T, s, re, repl string) []byte {
	t.Helper()
	rx := regexp.MustCompile(re)
	loc := rx.FindStringSubmatchIndex(s)
	if loc == nil {
		t.Fatalf("nothing matches %s in the answer", re)
	}
	var out []byte
	out = rx.ExpandString(out, repl, s, loc)
	return []byte(s[:loc[0]] + string(out) + s[loc[1]:])
}

// corruptCBOR decodes a CBOR answer, edits it and encodes it again.
func corruptCBOR(t *testing.T, b []byte, edit func(cbor.Map)) []byte {
	t.Helper()
	v, err := cbor.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	m := v.(cbor.Map)
	edit(m)
	return cbor.Encode(m)
}

func TestContractCatchesCorruptAnswers(t *testing.T) {
	rec, _ := driveEveryOperation(t)
	answer := func(key string) recorded {
		t.Helper()
		x, ok := rec.answers[key]
		if !ok {
			t.Fatalf("no %s recorded", key)
		}
		if err := CheckAnswer(x.r, x.req, x.status, x.header, x.body); err != nil {
			t.Fatalf("%s: the uncorrupted answer fails: %v", key, err)
		}
		return x
	}
	instances := answer("ec2:DescribeInstances answer")
	role := answer("sts:AssumeRole answer")
	data := answer("monitoring:GetMetricData answer") // the query protocol ran last
	products := answer("pricing:GetProducts answer")
	rates := answer("savingsplans:DescribeSavingsPlansOfferingRates answer")
	ec2Err := answer("ec2:DescribeInstances error")
	pricingErr := answer("pricing:GetProducts error")
	stsErr := answer("sts:AssumeRole error")
	regions := answer("ec2:DescribeRegions answer")
	ris := answer("ec2:DescribeReservedInstances answer")
	crs := answer("ec2:DescribeCapacityReservations answer")
	plans := answer("savingsplans:DescribeSavingsPlans answer")

	cborData := cborAnswer(t, rec)
	cases := []struct {
		name string
		x    recorded
		body []byte
	}{
		{"xml unknown member", instances, corruptText(t, string(instances.body), `<instanceId>`, `<bogusMember>1</bogusMember><instanceId>`)},
		{"xml wrong type", instances, corruptText(t, string(instances.body), `<code>\d+</code>`, `<code>sixteen</code>`)},
		{"xml bad enum", instances, corruptText(t, string(instances.body), `<name>(running|stopped)</name>`, `<name>sprinting</name>`)},
		{"xml bad timestamp", instances, corruptText(t, string(instances.body), `<timestamp>[^<]*</timestamp>|<launchTime>[^<]*</launchTime>`, `<launchTime>yesterday</launchTime>`)},
		{"xml wrong list item", regions, corruptText(t, string(regions.body), `(?s)<item>(.*?)</item>`, `<member>$1</member>`)},
		{"xml wrong root", regions, []byte(strings.ReplaceAll(string(regions.body), "DescribeRegionsResponse", "DescribeRegionResponse"))},
		{"xml wrong namespace", regions, []byte(strings.ReplaceAll(string(regions.body), "ec2.amazonaws.com/doc/2016-11-15", "ec2.amazonaws.com/doc/2015-10-01"))},
		{"query missing required", role, corruptText(t, string(role.body), `<AccessKeyId>[^<]*</AccessKeyId>`, ``)},
		{"query unwrapped result", role, []byte(strings.ReplaceAll(string(role.body), "AssumeRoleResult>", "AssumeRoleOutput>"))},
		{"query list not in members", data, corruptText(t, string(data.body), `<Timestamps>(\s*)<member>([^<]*)</member>`, `<Timestamps>$1<item>$2</item>`)},
		{"cbor unknown member", cborData, corruptCBOR(t, cborData.body, func(m cbor.Map) { m["Bogus"] = cbor.String("x") })},
		{"cbor wrong type", cborData, corruptCBOR(t, cborData.body, func(m cbor.Map) {
			r := m["MetricDataResults"].(cbor.List)[0].(cbor.Map)
			r["Values"] = cbor.List{cbor.String("0.5")}
		})},
		{"cbor bad enum", cborData, corruptCBOR(t, cborData.body, func(m cbor.Map) {
			m["MetricDataResults"].(cbor.List)[0].(cbor.Map)["StatusCode"] = cbor.String("Done")
		})},
		{"cbor timestamp not tagged", cborData, corruptCBOR(t, cborData.body, func(m cbor.Map) {
			r := m["MetricDataResults"].(cbor.List)[0].(cbor.Map)
			r["Timestamps"] = cbor.List{cbor.Float64(1.7e9)}
		})},
		{"json unknown member", products, corruptText(t, string(products.body), `^\{`, `{"Bogus":1,`)},
		{"json wrong type", products, corruptText(t, string(products.body), `"FormatVersion":"[^"]*"`, `"FormatVersion":2`)},
		{"json null member", products, corruptText(t, string(products.body), `"FormatVersion":"[^"]*"`, `"FormatVersion":null`)},
		{"rest-json bad enum", rates, corruptText(t, string(rates.body), `"unit":"[^"]*"`, `"unit":"Hours"`)},
		{"rest-json wrong type", rates, corruptText(t, string(rates.body), `"rate":"([0-9.]+)"`, `"rate":$1`)},
		{"reserved instance bad enum", ris, corruptText(t, string(ris.body), `<scope>[^<]*</scope>`, `<scope>Zone</scope>`)},
		{"reserved instance wrong type", ris, corruptText(t, string(ris.body), `<fixedPrice>[^<]*</fixedPrice>`, `<fixedPrice>free</fixedPrice>`)},
		{"capacity reservation bad enum", crs, corruptText(t, string(crs.body), `<state>[^<]*</state>`, `<state>running</state>`)},
		{"capacity reservation wrong type", crs, corruptText(t, string(crs.body), `<totalInstanceCount>\d+</totalInstanceCount>`, `<totalInstanceCount>two</totalInstanceCount>`)},
		{"savings plan bad enum", plans, corruptText(t, string(plans.body), `"paymentOption":"[^"]*"`, `"paymentOption":"Monthly"`)},
		{"savings plan arn not a uuid", plans, corruptText(t, string(plans.body), `savingsplan/[0-9a-f-]+"`, `savingsplan/sp-1"`)},
		{"savings plan term wrong type", plans, corruptText(t, string(plans.body), `"termDurationInSeconds":(\d+)`, `"termDurationInSeconds":"$1"`)},
		{"ec2 error in query envelope", ec2Err, []byte(`<ErrorResponse><Error><Type>Sender</Type><Code>InvalidPaginationToken</Code><Message>m</Message></Error><RequestId>r</RequestId></ErrorResponse>`)},
		{"ec2 error without request id", ec2Err, corruptText(t, string(ec2Err.body), `<RequestID>[^<]*</RequestID>`, ``)},
		{"ec2 unknown error code", ec2Err, corruptText(t, string(ec2Err.body), `<Code>[^<]*</Code>`, `<Code>NoSuchThing</Code>`)},
		{"query error wrong fault", stsErr, corruptText(t, string(stsErr.body), `<Type>Sender</Type>`, `<Type>Receiver</Type>`)},
		{"json error without __type", pricingErr, []byte(`{"message":"slow down"}`)},
		{"json error extra member", pricingErr, corruptText(t, string(pricingErr.body), `^\{`, `{"Code":"x",`)},
	}
	for _, c := range cases {
		err := CheckAnswer(c.x.r, c.x.req, c.x.status, c.x.header, c.body)
		if err == nil {
			t.Errorf("%s: the corrupted answer passes", c.name)
			continue
		}
		t.Logf("%s: %v", c.name, strings.ReplaceAll(err.Error(), "\n", "; "))
	}

	// Error envelopes broken outside the body.
	cborErr := answer("monitoring:ListMetrics error")
	cw := models.MustLoad("monitoring")
	w := httptest.NewRecorder()
	writeCBORError(w, http.StatusBadRequest, "InvalidParameterValue", "bad token")
	if vs := cw.ErrorAnswer("ListMetrics", models.CBOR, w.Code, w.Header(), w.Body.Bytes()); len(vs) > 0 {
		t.Fatalf("the simulator's CBOR error fails: %v", vs)
	}
	h0 := w.Header().Clone()
	h0.Set("X-Amzn-Query-Error", "InvalidNextToken;Sender")
	if vs := cw.ErrorAnswer("ListMetrics", models.CBOR, w.Code, h0, w.Body.Bytes()); len(vs) == 0 {
		t.Error("a CBOR error whose x-amzn-query-error code is another than its __type's passes")
	} else {
		t.Logf("query error of another code: %v", models.Join(vs))
	}
	h0.Del("Smithy-Protocol")
	if vs := cw.ErrorAnswer("ListMetrics", models.CBOR, w.Code, h0, w.Body.Bytes()); len(vs) == 0 {
		t.Error("a CBOR error without Smithy-Protocol passes")
	}
	h := cborErr.header.Clone()
	h.Set("Content-Type", "application/json")
	if err := CheckAnswer(pricingErr.r, pricingErr.req, pricingErr.status, h, pricingErr.body); err == nil {
		t.Error("json error with the wrong Content-Type passes")
	}
	if err := CheckAnswer(ec2Err.r, ec2Err.req, http.StatusOK, ec2Err.header, ec2Err.body); err == nil {
		t.Error("an error body with HTTP 200 passes")
	}
	if err := CheckAnswer(ec2Err.r, ec2Err.req, http.StatusNotModified, ec2Err.header, ec2Err.body); err == nil {
		t.Error("an error body with HTTP 304 passes")
	}
}

// cborAnswer is the last CBOR GetMetricData exchange.
func cborAnswer(t *testing.T, rec *contractRecorder) recorded {
	t.Helper()
	x, ok := rec.cbor["GetMetricData"]
	if !ok {
		t.Fatal("no CBOR GetMetricData answer recorded")
	}
	return x
}

func TestContractCatchesBadRequests(t *testing.T) {
	ec2m, cw, sp := models.MustLoad("ec2"), models.MustLoad("monitoring"), models.MustLoad("savingsplans")
	form := func(s string) url.Values {
		v, err := url.ParseQuery(s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	good := []struct {
		m     *models.Model
		op    string
		proto string
		form  string
		body  string
	}{
		{ec2m, "DescribeInstanceTypes", models.EC2, "Action=DescribeInstanceTypes&Version=2016-11-15&MaxResults=5&Filter.1.Name=instance-type&Filter.1.Value.1=g5.*", ""},
		{cw, "GetMetricData", models.Query, "Action=GetMetricData&Version=2010-08-01&StartTime=2026-03-15T00:00:00Z&EndTime=2026-03-15T01:00:00Z&MetricDataQueries.member.1.Id=q0&ScanBy=TimestampAscending", ""},
		{sp, "DescribeSavingsPlansOfferingRates", models.RESTJSON, "", `{"maxResults":1000,"savingsPlanTypes":["Compute"]}`},
	}
	for _, g := range good {
		if vs := g.m.Request(g.op, g.proto, form(g.form), []byte(g.body)); len(vs) > 0 {
			t.Fatalf("%s: a valid request fails: %v", g.op, vs)
		}
	}
	bad := []struct {
		name  string
		m     *models.Model
		op    string
		proto string
		form  string
		body  string
	}{
		{"unknown parameter", ec2m, "DescribeInstanceTypes", models.EC2, "Action=DescribeInstanceTypes&Version=2016-11-15&Bogus=1", ""},
		{"below minimum", ec2m, "DescribeInstanceTypes", models.EC2, "Action=DescribeInstanceTypes&Version=2016-11-15&MaxResults=4", ""},
		{"above maximum", ec2m, "DescribeInstanceTypes", models.EC2, "Action=DescribeInstanceTypes&Version=2016-11-15&MaxResults=101", ""},
		{"wrong type", ec2m, "DescribeInstanceTypes", models.EC2, "Action=DescribeInstanceTypes&Version=2016-11-15&MaxResults=ten", ""},
		{"query-style list in ec2", ec2m, "DescribeInstanceTypes", models.EC2, "Action=DescribeInstanceTypes&Version=2016-11-15&InstanceType.member.1=g5.xlarge", ""},
		{"wrong version", ec2m, "DescribeInstanceTypes", models.EC2, "Action=DescribeInstanceTypes&Version=2015-10-01", ""},
		{"missing required", cw, "GetMetricData", models.Query, "Action=GetMetricData&Version=2010-08-01&StartTime=2026-03-15T00:00:00Z&MetricDataQueries.member.1.Id=q0", ""},
		{"bad enum", cw, "GetMetricData", models.Query, "Action=GetMetricData&Version=2010-08-01&StartTime=2026-03-15T00:00:00Z&EndTime=2026-03-15T01:00:00Z&MetricDataQueries.member.1.Id=q0&ScanBy=Sideways", ""},
		{"bad timestamp", cw, "GetMetricData", models.Query, "Action=GetMetricData&Version=2010-08-01&StartTime=today&EndTime=2026-03-15T01:00:00Z&MetricDataQueries.member.1.Id=q0", ""},
		{"period below minimum", cw, "GetMetricData", models.Query, "Action=GetMetricData&Version=2010-08-01&StartTime=2026-03-15T00:00:00Z&EndTime=2026-03-15T01:00:00Z&MetricDataQueries.member.1.Id=q0&MetricDataQueries.member.1.Period=0", ""},
		{"documented period", cw, "GetMetricData", models.Query, "Action=GetMetricData&Version=2010-08-01&StartTime=2026-03-15T00:00:00Z&EndTime=2026-03-15T01:00:00Z&MetricDataQueries.member.1.Id=q0&MetricDataQueries.member.1.MetricStat.Period=90&MetricDataQueries.member.1.MetricStat.Stat=Average&MetricDataQueries.member.1.MetricStat.Metric.MetricName=m", ""},
		{"501 queries", cw, "GetMetricData", models.Query, "Action=GetMetricData&Version=2010-08-01&StartTime=2026-03-15T00:00:00Z&EndTime=2026-03-15T01:00:00Z" + manyQueries(501), ""},
		{"documented MaxResults", ec2m, "DescribeInstances", models.EC2, "Action=DescribeInstances&Version=2016-11-15&MaxResults=1001", ""},
		{"json unknown member", sp, "DescribeSavingsPlansOfferingRates", models.RESTJSON, "", `{"MaxResults":10}`},
		{"json page size", sp, "DescribeSavingsPlansOfferingRates", models.RESTJSON, "", `{"maxResults":1001}`},
		{"json bad enum", sp, "DescribeSavingsPlansOfferingRates", models.RESTJSON, "", `{"savingsPlanTypes":["Everything"]}`},
		{"wrong protocol", ec2m, "DescribeInstanceTypes", models.JSON, "", `{}`},
	}
	for _, b := range bad {
		vs := b.m.Request(b.op, b.proto, form(b.form), []byte(b.body))
		if len(vs) == 0 {
			t.Errorf("%s: the bad request passes", b.name)
			continue
		}
		t.Logf("%s: %v", b.name, models.Join(vs))
	}
}

// manyQueries is n GetMetricData queries in query-protocol form.
func manyQueries(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "&MetricDataQueries.member.%d.Id=q%d&MetricDataQueries.member.%d.Expression=SEARCH", i, i, i)
	}
	return b.String()
}
