package sim_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/providers/gcp/sim"
	"github.com/gpufinops/gpufinops/providers/gcp/sim/models"
	"github.com/gpufinops/gpufinops/providers/gcp/simcat"
)

// TestRESTTimeSeriesTakesWhatTheModelDocuments: every query parameter and
// enum value that Monitoring's discovery document gives
// projects.timeSeries.list is either served or refused as something the
// simulator does not serve; none is refused as unknown or invalid, as an
// undocumented one is.
func TestRESTTimeSeriesTakesWhatTheModelDocuments(t *testing.T) {
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	f := contractFleet()
	opts := simcat.Options(f, cat)
	opts.Now = func() time.Time { return contractNow }
	srv := httptest.NewServer(sim.New(f, opts))
	t.Cleanup(srv.Close)
	get := func(q url.Values) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/v3/projects/proj-contract/timeSeries?"+q.Encode(), nil)
		req.Header.Set("Authorization", "Bearer contract")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	base := func() url.Values {
		return url.Values{
			"filter":             {`metric.type = "agent.googleapis.com/gpu/utilization" AND resource.type = "gce_instance"`},
			"interval.startTime": {contractNow.Add(-6 * time.Hour).Format(time.RFC3339)},
			"interval.endTime":   {contractNow.Format(time.RFC3339)},
		}
	}
	refusedAsInvalid := func(body string) bool {
		return strings.Contains(body, "Unknown name") || strings.Contains(body, "Invalid value at")
	}
	d := models.MustLoad("monitoring")
	m := d.Method("monitoring.projects.timeSeries.list")
	if m == nil {
		t.Fatal("no projects.timeSeries.list in the monitoring document")
	}
	params := map[string]*models.Param{}
	for k, p := range d.Parameters {
		params[k] = p
	}
	for k, p := range m.Parameters {
		params[k] = p
	}
	names := make([]string, 0, len(params))
	for k := range params {
		names = append(names, k)
	}
	sort.Strings(names)
	tried := 0
	for _, k := range names {
		p := params[k]
		if p.Location == "path" || k == "filter" || k == "pageToken" || strings.HasPrefix(k, "interval.") {
			continue
		}
		values := p.Enum
		if len(values) == 0 {
			switch {
			case p.Format == "google-duration":
				values = []string{"3600s"}
			case p.Type == "integer":
				values = []string{"10"}
			case p.Type == "boolean":
				values = []string{"true"}
			case strings.HasSuffix(k, "groupByFields"):
				values = []string{"resource.label.instance_id"}
			default:
				values = []string{"x"}
			}
		}
		for _, v := range values {
			q := base()
			q.Set(k, v)
			if agg, field, _ := strings.Cut(k, "."); field == "crossSeriesReducer" || field == "perSeriesAligner" {
				// An aligner needs a period, a reducer an aligner.
				q.Set(agg+".alignmentPeriod", "3600s")
				if field == "crossSeriesReducer" {
					q.Set(agg+".perSeriesAligner", "ALIGN_MEAN")
				}
			}
			tried++
			st, body := get(q)
			if st != 200 && (refusedAsInvalid(body) || !strings.Contains(body, "simulator")) {
				t.Errorf("%s=%s (documented): HTTP %d %s", k, v, st, body)
			}
		}
	}
	if tried < 40 {
		t.Errorf("%d documented parameter values tried", tried)
	}
	// What the document does not name is refused as such.
	for k, v := range map[string]string{"bogus": "1", "aggregation.perSeriesAligner": "ALIGN_SOMETIMES", "view": "SOME"} {
		q := base()
		q.Set(k, v)
		if st, body := get(q); st != 400 || !refusedAsInvalid(body) {
			t.Errorf("%s=%s (not documented): HTTP %d %s", k, v, st, body)
		}
	}
}
