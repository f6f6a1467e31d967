package prometheus

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// The HTTP API is read with the client_golang api package's Client and
// decoded here (the typed v1 package needs prometheus/common, which the
// module does not carry).

// apiError is an error answer of the HTTP API.
type apiError struct {
	code      int
	errorType string
	msg       string
}

func (e *apiError) Error() string {
	switch {
	case e.errorType != "" && e.msg != "":
		return e.errorType + ": " + e.msg
	case e.msg != "":
		return e.msg
	}
	return fmt.Sprintf("HTTP %d", e.code)
}

// envelope is every API answer.
type envelope struct {
	Status    string          `json:"status"`
	Data      json.RawMessage `json:"data"`
	ErrorType string          `json:"errorType"`
	Error     string          `json:"error"`
}

// series is one series of a range query's matrix.
type series struct {
	Metric map[string]string `json:"metric"`
	Values []sample          `json:"values"`
}

// sample is a [unix seconds, "value"] pair.
type sample struct {
	T time.Time
	V float64
}

// UnmarshalJSON reads [1700000000.123, "42.5"].
func (p *sample) UnmarshalJSON(b []byte) error {
	var raw [2]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	var ts float64
	if err := json.Unmarshal(raw[0], &ts); err != nil {
		return fmt.Errorf("sample time: %w", err)
	}
	var vs string
	if err := json.Unmarshal(raw[1], &vs); err != nil {
		return fmt.Errorf("sample value: %w", err)
	}
	v, err := strconv.ParseFloat(vs, 64)
	if err != nil {
		return fmt.Errorf("sample value: %w", err)
	}
	p.T = time.UnixMilli(int64(ts*1000 + 0.5)).UTC()
	p.V = v
	return nil
}

// call GETs an API endpoint and decodes its data into into.
func (s *Source) call(ctx context.Context, ep string, args url.Values, into any) error {
	u := s.client.URL(ep, nil)
	u.RawQuery = args.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return err
	}
	resp, body, err := s.client.Do(ctx, req)
	if err != nil {
		return err
	}
	var env envelope
	jerr := json.Unmarshal(body, &env)
	if resp.StatusCode/100 != 2 || env.Status == "error" {
		e := &apiError{code: resp.StatusCode, errorType: env.ErrorType, msg: env.Error}
		if jerr != nil || env.Error == "" {
			e.msg = fmt.Sprintf("HTTP %d", resp.StatusCode)
			if line := firstLine(string(body)); line != "" && len(line) < 200 {
				e.msg += ": " + line
			}
		}
		return e
	}
	if jerr != nil {
		return fmt.Errorf("not a Prometheus API answer (%v)", jerr)
	}
	if err := json.Unmarshal(env.Data, into); err != nil {
		return fmt.Errorf("not a Prometheus API answer (%v)", err)
	}
	return nil
}

func formatTime(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', -1, 64)
}

// queryRange runs a range query and returns its matrix.
func (s *Source) queryRange(ctx context.Context, expr string, start, end time.Time, step time.Duration) ([]series, error) {
	var data struct {
		ResultType string   `json:"resultType"`
		Result     []series `json:"result"`
	}
	err := s.call(ctx, "/api/v1/query_range", url.Values{
		"query": {expr}, "start": {formatTime(start)}, "end": {formatTime(end)},
		"step": {strconv.FormatFloat(step.Seconds(), 'f', -1, 64)},
	}, &data)
	if err != nil {
		return nil, err
	}
	if data.ResultType != "matrix" {
		return nil, fmt.Errorf("got a %q result, want a matrix", data.ResultType)
	}
	return data.Result, nil
}

// labelValues lists a label's values among the series matching match.
func (s *Source) labelValues(ctx context.Context, label, match string, start, end time.Time) ([]string, error) {
	var out []string
	err := s.call(ctx, "/api/v1/label/"+url.PathEscape(label)+"/values", url.Values{
		"match[]": {match}, "start": {formatTime(start)}, "end": {formatTime(end)},
	}, &out)
	return out, err
}

// seriesSets lists the label sets of the series matching match.
func (s *Source) seriesSets(ctx context.Context, match string, start, end time.Time) ([]map[string]string, error) {
	var out []map[string]string
	err := s.call(ctx, "/api/v1/series", url.Values{
		"match[]": {match}, "start": {formatTime(start)}, "end": {formatTime(end)},
	}, &out)
	return out, err
}
