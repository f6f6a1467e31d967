// Package athenasim serves the Amazon Athena query API (the awsJson1_1
// protocol: StartQueryExecution, GetQueryExecution, GetQueryResults with
// NextToken pages) over a SQL engine the caller supplies, so that the
// push-down is tested through the real AWS SDK against a real engine. It
// shares no code with the client it checks: standard library only.
package athenasim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// Exec runs one query: its column names and rows, nil for a NULL.
type Exec func(query string) (columns []string, rows [][]*string, err error)

// Server is the simulated Athena endpoint.
type Server struct {
	// WorkGroups are the workgroups that exist.
	WorkGroups []string
	// PageSize caps the rows of a GetQueryResults page (the API's own cap
	// is 1,000); small values exercise the paging.
	PageSize int
	// Polls is how many GetQueryExecution calls see RUNNING before SUCCEEDED.
	Polls int
	exec  Exec

	mu      sync.Mutex
	queries map[string]*query
	calls   map[string]int
}

type query struct {
	sql     string
	columns []string
	rows    [][]*string
	err     error
	polls   int
}

// New serves exec.
func New(exec Exec) *Server {
	return &Server{exec: exec, PageSize: 1000, Polls: 1, WorkGroups: []string{"primary"}, queries: map[string]*query{}, calls: map[string]int{}}
}

// Calls is how many requests each operation received.
func (s *Server) Calls() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for k, v := range s.calls {
		out[k] = v
	}
	return out
}

// Queries are the SQL texts received, in order of their ids.
func (s *Server) Queries() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, len(s.queries))
	for id, q := range s.queries {
		n, _ := strconv.Atoi(strings.TrimPrefix(id, "q-"))
		out[n-1] = q.sql
	}
	return out
}

func fail(w http.ResponseWriter, status int, typ, msg string) { WriteError(w, status, typ, msg) }

// WriteError writes an Athena error: the status, X-Amzn-ErrorType and the
// json protocol's body, {"__type": typ, "Message": msg}.
func WriteError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.Header().Set("X-Amzn-ErrorType", typ)
	w.WriteHeader(status)
	// The member is Message, as the model's error shapes name it (the SDKs
	// also read "message").
	_ = json.NewEncoder(w).Encode(map[string]string{"__type": typ, "Message": msg})
}

func reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	_ = json.NewEncoder(w).Encode(v)
}

// ServeHTTP implements the API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	target := r.Header.Get("X-Amz-Target")
	op, ok := strings.CutPrefix(target, "AmazonAthena.")
	if r.Method != http.MethodPost || !ok {
		fail(w, http.StatusBadRequest, "UnknownOperationException", "unknown operation "+target)
		return
	}
	if !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 ") {
		fail(w, http.StatusForbidden, "MissingAuthenticationTokenException", "request is not signed")
		return
	}
	var in struct {
		QueryString      string
		WorkGroup        string
		QueryExecutionId string
		NextToken        string
		MaxResults       int
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		fail(w, http.StatusBadRequest, "SerializationException", err.Error())
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[op]++
	switch op {
	case "StartQueryExecution":
		known := false
		for _, wg := range s.WorkGroups {
			known = known || wg == in.WorkGroup
		}
		if !known {
			fail(w, http.StatusBadRequest, "InvalidRequestException", fmt.Sprintf("WorkGroup %s is not found.", in.WorkGroup))
			return
		}
		id := fmt.Sprintf("q-%d", len(s.queries)+1)
		q := &query{sql: in.QueryString}
		q.columns, q.rows, q.err = s.exec(in.QueryString)
		s.queries[id] = q
		reply(w, map[string]string{"QueryExecutionId": id})
	case "GetQueryExecution":
		q := s.queries[in.QueryExecutionId]
		if q == nil {
			fail(w, http.StatusBadRequest, "InvalidRequestException", "QueryExecution "+in.QueryExecutionId+" was not found")
			return
		}
		status := map[string]any{"State": "SUCCEEDED"}
		switch {
		case q.polls < s.Polls:
			status["State"] = "RUNNING"
		case q.err != nil:
			status = map[string]any{"State": "FAILED", "StateChangeReason": q.err.Error()}
		}
		q.polls++
		reply(w, map[string]any{"QueryExecution": map[string]any{"QueryExecutionId": in.QueryExecutionId, "Query": q.sql, "Status": status}})
	case "GetQueryResults":
		q := s.queries[in.QueryExecutionId]
		switch {
		case q == nil:
			fail(w, http.StatusBadRequest, "InvalidRequestException", "QueryExecution "+in.QueryExecutionId+" was not found")
			return
		case q.err != nil || q.polls <= s.Polls:
			fail(w, http.StatusBadRequest, "InvalidRequestException", "Query has not yet finished. Current state: RUNNING")
			return
		}
		// Row 0 is the header row, as Athena returns for a SELECT.
		all := append([][]*string{nil}, q.rows...)
		from := 0
		if in.NextToken != "" {
			n, err := strconv.Atoi(strings.TrimPrefix(in.NextToken, "tok-"))
			if err != nil || n <= 0 || n > len(all) {
				fail(w, http.StatusBadRequest, "InvalidRequestException", "invalid NextToken")
				return
			}
			from = n
		}
		size := s.PageSize
		if in.MaxResults > 0 && in.MaxResults < size {
			size = in.MaxResults
		}
		to := min(from+size, len(all))
		var rows []map[string]any
		for i := from; i < to; i++ {
			var data []map[string]any
			for j, c := range q.columns {
				v := &c
				if i > 0 {
					v = all[i][j]
				}
				if v == nil {
					data = append(data, map[string]any{})
				} else {
					data = append(data, map[string]any{"VarCharValue": *v})
				}
			}
			rows = append(rows, map[string]any{"Data": data})
		}
		var info []map[string]any
		for _, c := range q.columns {
			info = append(info, map[string]any{"Name": c, "Label": c, "Type": "varchar"})
		}
		out := map[string]any{"ResultSet": map[string]any{"Rows": rows, "ResultSetMetadata": map[string]any{"ColumnInfo": info}}, "UpdateCount": 0}
		if to < len(all) {
			out["NextToken"] = fmt.Sprintf("tok-%d", to)
		}
		reply(w, out)
	default:
		fail(w, http.StatusBadRequest, "UnknownOperationException", "unknown operation "+op)
	}
}
