// Package bqsim serves the BigQuery REST API v2 a query needs (jobs.query
// and jobs.getQueryResults with pageToken pages, BigQuery's JSON rows and
// error bodies) over a SQL engine the caller supplies, so that the
// push-down is tested through cloud.google.com/go/bigquery against a real
// engine. Standard library only: it shares no code with the client.
package bqsim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Column is a result column with its BigQuery type (STRING, INTEGER,
// BIGNUMERIC, TIMESTAMP).
type Column struct {
	Name, Type string
}

// Exec runs one query: its columns and rows as text, nil for a NULL.
// TIMESTAMP cells are "YYYY-MM-DD hh:mm:ss[.ffffff]" in UTC.
type Exec func(query string) ([]Column, [][]*string, error)

// Server is the simulated endpoint; give the client its URL + "/".
type Server struct {
	// Projects are the projects that exist.
	Projects []string
	// PageSize caps the rows of a page.
	PageSize int
	exec     Exec

	mu    sync.Mutex
	jobs  map[string]*job
	calls map[string]int
	sqls  []string
}

type job struct {
	project string
	cols    []Column
	rows    [][]*string
}

// New serves exec for the projects.
func New(exec Exec, projects ...string) *Server {
	return &Server{exec: exec, Projects: projects, PageSize: 1000, jobs: map[string]*job{}, calls: map[string]int{}}
}

// Calls counts the requests per method (jobs.query, jobs.getQueryResults).
func (s *Server) Calls() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for k, v := range s.calls {
		out[k] = v
	}
	return out
}

// Queries are the SQL texts received.
func (s *Server) Queries() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.sqls...)
}

// rpcStatus is the google.rpc.Code name Google's JSON errors give an HTTP
// status (https://cloud.google.com/apis/design/errors).
var rpcStatus = map[int]string{
	http.StatusBadRequest: "INVALID_ARGUMENT", http.StatusUnauthorized: "UNAUTHENTICATED", http.StatusForbidden: "PERMISSION_DENIED",
	http.StatusNotFound: "NOT_FOUND", http.StatusConflict: "ALREADY_EXISTS", http.StatusTooManyRequests: "RESOURCE_EXHAUSTED",
	http.StatusInternalServerError: "INTERNAL", http.StatusNotImplemented: "UNIMPLEMENTED", http.StatusServiceUnavailable: "UNAVAILABLE",
	http.StatusGatewayTimeout: "DEADLINE_EXCEEDED",
}

// WriteError writes a BigQuery error: the HTTP status code and Google's
// JSON error body, its status the code's google.rpc.Code name and its one
// entry the BigQuery reason (notFound, invalidQuery, rateLimitExceeded, …).
func WriteError(w http.ResponseWriter, code int, reason, msg string) {
	status, ok := rpcStatus[code]
	if !ok {
		status = "UNKNOWN"
	}
	fail(w, code, reason, status, msg)
}

func fail(w http.ResponseWriter, code int, reason, status, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
		"code": code, "message": msg, "status": status,
		"errors": []map[string]string{{"reason": reason, "message": msg, "domain": "global"}},
	}})
}

// ServeHTTP implements the API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, "/bigquery/v2"), "/")
	parts := strings.Split(path, "/")
	if len(parts) < 3 || parts[0] != "projects" || parts[2] != "queries" {
		fail(w, http.StatusNotFound, "notFound", "NOT_FOUND", "no such method: "+r.Method+" "+r.URL.Path)
		return
	}
	project := parts[1]
	s.mu.Lock()
	defer s.mu.Unlock()
	known := false
	for _, p := range s.Projects {
		known = known || p == project
	}
	if !known {
		fail(w, http.StatusNotFound, "notFound", "NOT_FOUND", "Not found: Project "+project)
		return
	}
	size := s.PageSize
	if m, err := strconv.Atoi(r.URL.Query().Get("maxResults")); err == nil && m > 0 && m < size {
		size = m
	}
	switch {
	case r.Method == http.MethodPost && len(parts) == 3:
		s.calls["jobs.query"]++
		var in struct {
			Query        string `json:"query"`
			UseLegacySQL *bool  `json:"useLegacySql"`
			MaxResults   int    `json:"maxResults"`
		}
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			fail(w, http.StatusBadRequest, "invalid", "INVALID_ARGUMENT", "Invalid JSON payload: "+err.Error())
			return
		}
		if in.UseLegacySQL == nil || *in.UseLegacySQL {
			fail(w, http.StatusBadRequest, "invalidQuery", "INVALID_ARGUMENT", "the simulator runs GoogleSQL only: set useLegacySql false")
			return
		}
		if in.MaxResults > 0 && in.MaxResults < size {
			size = in.MaxResults
		}
		s.sqls = append(s.sqls, in.Query)
		cols, rows, err := s.exec(in.Query)
		if err != nil {
			fail(w, http.StatusBadRequest, "invalidQuery", "INVALID_ARGUMENT", err.Error())
			return
		}
		id := fmt.Sprintf("job_%d", len(s.jobs)+1)
		j := &job{project: project, cols: cols, rows: rows}
		s.jobs[id] = j
		s.page(w, "bigquery#queryResponse", id, j, 0, size)
	case r.Method == http.MethodGet && len(parts) == 4:
		s.calls["jobs.getQueryResults"]++
		j := s.jobs[parts[3]]
		if j == nil || j.project != project {
			fail(w, http.StatusNotFound, "notFound", "NOT_FOUND", "Not found: Job "+project+":"+parts[3])
			return
		}
		from := 0
		if tok := r.URL.Query().Get("pageToken"); tok != "" {
			n, err := strconv.Atoi(strings.TrimPrefix(tok, "p"))
			if err != nil || n <= 0 || n > len(j.rows) {
				fail(w, http.StatusBadRequest, "invalid", "INVALID_ARGUMENT", "Invalid page token")
				return
			}
			from = n
		} else if v := r.URL.Query().Get("startIndex"); v != "" {
			from, _ = strconv.Atoi(v)
		}
		s.page(w, "bigquery#getQueryResultsResponse", parts[3], j, from, size)
	default:
		fail(w, http.StatusNotFound, "notFound", "NOT_FOUND", "no such method: "+r.Method+" "+r.URL.Path)
	}
}

// page writes rows [from, from+size) of a finished job.
func (s *Server) page(w http.ResponseWriter, kind, id string, j *job, from, size int) {
	var fields []map[string]string
	for _, c := range j.cols {
		fields = append(fields, map[string]string{"name": c.Name, "type": c.Type, "mode": "NULLABLE"})
	}
	to := min(from+size, len(j.rows))
	rows := []map[string]any{}
	for _, row := range j.rows[from:to] {
		var cells []map[string]any
		for i, v := range row {
			if v == nil {
				cells = append(cells, map[string]any{"v": nil})
				continue
			}
			text := *v
			if j.cols[i].Type == "TIMESTAMP" {
				// useInt64Timestamp: microseconds since the epoch.
				t, err := time.Parse("2006-01-02 15:04:05.999999", text)
				if err != nil {
					t, err = time.Parse(time.RFC3339Nano, text)
				}
				if err == nil {
					text = strconv.FormatInt(t.UTC().UnixMicro(), 10)
				}
			}
			cells = append(cells, map[string]any{"v": text})
		}
		rows = append(rows, map[string]any{"f": cells})
	}
	out := map[string]any{
		"kind": kind, "jobComplete": true,
		"jobReference": map[string]string{"projectId": j.project, "jobId": id, "location": "US"},
		"schema":       map[string]any{"fields": fields},
		"rows":         rows, "totalRows": strconv.Itoa(len(j.rows)),
	}
	if to < len(j.rows) {
		out["pageToken"] = fmt.Sprintf("p%d", to)
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	_ = json.NewEncoder(w).Encode(out)
}
