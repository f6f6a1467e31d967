// Package warehousesim serves a FOCUS export the way the warehouses hold
// it: loaded into a real SQL engine (PostgreSQL, internal/pgserver) as
// an Athena table and a BigQuery table, and queried through the simulated
// Athena (providers/aws/sim/athenasim) and BigQuery (providers/gcp/sim/bqsim) APIs.
// Each API is a simkit.Sim, so cmd/cloudsim mounts both on its one port,
// behind its fault flags and request counters.
package warehousesim

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/gpufinops/gpufinops/internal/pgserver"
	"github.com/gpufinops/gpufinops/providers/aws/sim/athenasim"
	"github.com/gpufinops/gpufinops/providers/gcp/sim/bqsim"
	"github.com/gpufinops/gpufinops/providers/simkit"
)

// The tables served when Options name none.
const (
	DefaultAthena   = "primary/focus.gpu_bill"
	DefaultBigQuery = "sim-billing.focus.gpu_bill"
)

// Options say what to serve.
type Options struct {
	// CSV is the export as a CSV file with a header row of Header's
	// columns (NULL for a null), as focusgen writes it.
	CSV    string
	Header []string
	// Athena is WORKGROUP/DATABASE.TABLE and BigQuery
	// PROJECT.DATASET.TABLE: where the export is served; "" is the default.
	Athena, BigQuery string
	// Kit is the fault middleware and counters the APIs are served through.
	Kit *simkit.Kit
}

// Athena is a parsed WORKGROUP/DATABASE.TABLE.
type Athena struct{ WorkGroup, Database, Table string }

// BigQuery is a parsed PROJECT.DATASET.TABLE.
type BigQuery struct{ Project, Dataset, Table string }

var (
	sqlName   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)
	workGroup = regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)
	project   = regexp.MustCompile(`^[a-z][a-z0-9-]{4,28}[a-z0-9]$`)
)

// ParseAthena parses WORKGROUP/DATABASE.TABLE ("" is DefaultAthena).
func ParseAthena(s string) (Athena, error) {
	if s == "" {
		s = DefaultAthena
	}
	wg, ref, ok := strings.Cut(s, "/")
	db, table, ok2 := strings.Cut(ref, ".")
	if !ok || !ok2 || !workGroup.MatchString(wg) || !sqlName.MatchString(db) || !sqlName.MatchString(table) {
		return Athena{}, fmt.Errorf("%q: want WORKGROUP/DATABASE.TABLE, e.g. %s", s, DefaultAthena)
	}
	return Athena{wg, db, table}, nil
}

// ParseBigQuery parses PROJECT.DATASET.TABLE ("" is DefaultBigQuery).
func ParseBigQuery(s string) (BigQuery, error) {
	if s == "" {
		s = DefaultBigQuery
	}
	parts := strings.Split(s, ".")
	if len(parts) != 3 || !project.MatchString(parts[0]) || !sqlName.MatchString(parts[1]) || !sqlName.MatchString(parts[2]) {
		return BigQuery{}, fmt.Errorf("%q: want PROJECT.DATASET.TABLE (a project id of 6 to 30 lower-case letters, digits and hyphens), e.g. %s", s, DefaultBigQuery)
	}
	return BigQuery{parts[0], parts[1], parts[2]}, nil
}

// String is the source gpufinops reads: athena://WORKGROUP/DATABASE.TABLE.
func (a Athena) String() string { return "athena://" + a.WorkGroup + "/" + a.Database + "." + a.Table }

// String is the source gpufinops reads: bigquery://PROJECT.DATASET.TABLE.
func (b BigQuery) String() string { return "bigquery://" + b.Project + "." + b.Dataset + "." + b.Table }

// Warehouse is the running engine and the two APIs over it.
type Warehouse struct {
	db       *pgserver.Server
	athena   Athena
	bigquery BigQuery
	// AthenaSim and BigQuerySim are the API simulators (their Calls and
	// Queries, their PageSize).
	AthenaSim   *athenasim.Server
	BigQuerySim *bqsim.Server
	sims        []simkit.Sim
}

// Start starts PostgreSQL, loads the export as the Athena table, makes the
// BigQuery table a view of it, and builds the APIs. A missing PostgreSQL
// is a *pgserver.NotInstalledError. Close stops it all.
func Start(ctx context.Context, o Options) (*Warehouse, error) {
	a, err := ParseAthena(o.Athena)
	if err != nil {
		return nil, fmt.Errorf("Athena table %w", err)
	}
	b, err := ParseBigQuery(o.BigQuery)
	if err != nil {
		return nil, fmt.Errorf("BigQuery table %w", err)
	}
	if o.Kit == nil {
		return nil, fmt.Errorf("warehousesim: Options.Kit is nil")
	}
	db, err := pgserver.Start(ctx)
	if err != nil {
		return nil, err
	}
	w := &Warehouse{db: db, athena: a, bigquery: b}
	athenaTable, bqTable := a.Database+"."+a.Table, b.Dataset+"."+b.Table
	if err := db.LoadFOCUS(athenaTable, o.Header, o.CSV); err != nil {
		_ = db.Stop()
		return nil, fmt.Errorf("loading %s into PostgreSQL: %w", o.CSV, err)
	}
	if bqTable != athenaTable {
		for _, q := range []string{"CREATE SCHEMA IF NOT EXISTS " + pgserver.Ident(b.Dataset),
			"CREATE VIEW " + pgserver.Ident(bqTable) + " AS SELECT * FROM " + pgserver.Ident(athenaTable)} {
			if _, err := db.Run("-c", q); err != nil {
				_ = db.Stop()
				return nil, fmt.Errorf("PostgreSQL: %w", err)
			}
		}
	}
	w.AthenaSim = athenasim.New(db.Query)
	w.AthenaSim.WorkGroups = []string{a.WorkGroup}
	w.BigQuerySim = bqsim.New(pgserver.GoogleSQL(db), b.Project)
	w.sims = []simkit.Sim{
		&api{kit: o.Kit, h: w.AthenaSim, claims: isAthena, call: athenaCall},
		&api{kit: o.Kit, h: w.BigQuerySim, claims: isBigQuery, call: bigQueryCall},
	}
	return w, nil
}

// Sims are the Athena and BigQuery APIs, to mount before the clouds'
// simulators (their claims are narrow: Athena's X-Amz-Target, BigQuery's
// projects/P/queries paths).
func (w *Warehouse) Sims() []simkit.Sim { return w.sims }

// Sources are the --billing sources that read the served tables.
func (w *Warehouse) Sources() (athena, bigquery string) {
	return w.athena.String(), w.bigquery.String()
}

// Notes say how to reach the tables through url.
func (w *Warehouse) Notes(url string) []string {
	return []string{
		fmt.Sprintf("Athena (workgroup %s) serves the FOCUS export as %s.%s on PostgreSQL: AWS_ENDPOINT_URL_ATHENA=%s (or AWS_ENDPOINT_URL) gpufinops billing summary --billing %s (or analyze --billing)",
			w.athena.WorkGroup, w.athena.Database, w.athena.Table, url, w.athena),
		fmt.Sprintf("BigQuery (project %s) serves it as %s.%s: %s=%s/ gpufinops billing summary --billing %s",
			w.bigquery.Project, w.bigquery.Dataset, w.bigquery.Table, "GPUFINOPS_BIGQUERY_ENDPOINT", url, w.bigquery),
	}
}

// Dir is the engine's temporary folder, removed by Close.
func (w *Warehouse) Dir() string { return w.db.Dir() }

// Close stops PostgreSQL and removes its folder.
func (w *Warehouse) Close() error { return w.db.Stop() }

// api is one warehouse API as a simkit.Sim: it serves no instances.
type api struct {
	kit    *simkit.Kit
	h      http.Handler
	claims func(*http.Request) bool
	call   func(*http.Request) simkit.Call
}

func (a *api) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.kit.Serve(w, r, a.call(r), func(w http.ResponseWriter) { a.h.ServeHTTP(w, r) })
}

func (a *api) Claims(r *http.Request, _ []byte) bool       { return a.claims(r) }
func (a *api) Notes() []string                             { return nil }
func (a *api) State() []simkit.InstanceState               { return nil }
func (a *api) SetLoad(id string, gpuPercent float64) error { return simkit.ErrNoInstance }
func (a *api) Now() time.Time                              { return time.Now() }

func isAthena(r *http.Request) bool {
	return strings.HasPrefix(r.Header.Get("X-Amz-Target"), "AmazonAthena.")
}

// bigQueryPath is the project and the rest of a jobs.query or
// jobs.getQueryResults path, with or without the /bigquery/v2 prefix.
func bigQueryPath(r *http.Request) (project string, parts []string, ok bool) {
	p := strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, "/bigquery/v2"), "/")
	parts = strings.Split(p, "/")
	if len(parts) < 3 || parts[0] != "projects" || parts[2] != "queries" {
		return "", nil, false
	}
	return parts[1], parts, true
}

func isBigQuery(r *http.Request) bool {
	_, _, ok := bigQueryPath(r)
	return ok
}

// Ops are the operations the warehouse simulators answer, as "service:Op".
var Ops = []string{
	"athena:StartQueryExecution", "athena:GetQueryExecution", "athena:GetQueryResults",
	"bigquery:jobs.query", "bigquery:jobs.getQueryResults",
}

// athenaDialect words injected faults as Athena does: throttling is a 400
// TooManyRequestsException, which the AWS SDKs retry.
var athenaDialect = &simkit.Dialect{
	Throttle:     func(simkit.Call) (int, string) { return http.StatusBadRequest, "TooManyRequestsException" },
	InternalCode: "InternalServerException",
	ScopeKind:    "region",
}

// credentialScope is SigV4's Credential=AKID/DATE/REGION/SERVICE/aws4_request.
var credentialScope = regexp.MustCompile(`Credential=[^/]+/[0-9]+/([^/]+)/`)

func athenaCall(r *http.Request) simkit.Call {
	op := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "AmazonAthena.")
	region := ""
	if m := credentialScope.FindStringSubmatch(r.Header.Get("Authorization")); m != nil {
		region = m[1]
	}
	return simkit.Call{Service: "athena", Op: op, Scope: region, Dialect: athenaDialect,
		WriteError: athenasim.WriteError}
}

// bigQueryDialect words injected faults as BigQuery does: throttling is a
// 403 rateLimitExceeded, a server error a 500 backendError; the Go client
// retries both.
var bigQueryDialect = &simkit.Dialect{
	Throttle:     func(simkit.Call) (int, string) { return http.StatusForbidden, "rateLimitExceeded" },
	InternalCode: "backendError",
	ScopeKind:    "project",
}

func bigQueryCall(r *http.Request) simkit.Call {
	project, parts, _ := bigQueryPath(r)
	op := "jobs.query"
	if r.Method == http.MethodGet || len(parts) > 3 {
		op = "jobs.getQueryResults"
	}
	return simkit.Call{Service: "bigquery", Op: op, Scope: project, Dialect: bigQueryDialect,
		WriteError: bqsim.WriteError}
}
