package aws

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/athena"
	"github.com/aws/aws-sdk-go-v2/service/athena/types"

	"github.com/gpufinops/gpufinops/providers"
)

// AthenaAPI is the part of the Athena client the push-down calls.
type AthenaAPI interface {
	StartQueryExecution(context.Context, *athena.StartQueryExecutionInput, ...func(*athena.Options)) (*athena.StartQueryExecutionOutput, error)
	GetQueryExecution(context.Context, *athena.GetQueryExecutionInput, ...func(*athena.Options)) (*athena.GetQueryExecutionOutput, error)
	GetQueryResults(context.Context, *athena.GetQueryResultsInput, ...func(*athena.Options)) (*athena.GetQueryResultsOutput, error)
}

// AthenaSource is athena://WORKGROUP/DATABASE.TABLE.
type AthenaSource struct {
	WorkGroup, Database, Table string
}

// AthenaForm is an Athena --billing source's syntax.
const AthenaForm = "athena://WORKGROUP/DATABASE.TABLE"

// ParseAthena reads athena://WORKGROUP/DATABASE.TABLE.
func ParseAthena(source string) (AthenaSource, error) {
	rest, ok := strings.CutPrefix(source, "athena://")
	wg, tbl, ok2 := strings.Cut(rest, "/")
	db, t, ok3 := strings.Cut(tbl, ".")
	if !ok || !ok2 || !ok3 || wg == "" || db == "" || t == "" || strings.ContainsAny(t, "./\"") || strings.ContainsAny(db, "/\"") {
		return AthenaSource{}, fmt.Errorf("%w: --billing %s: want %s", providers.ErrBillingSource, source, AthenaForm)
	}
	return AthenaSource{WorkGroup: wg, Database: db, Table: t}, nil
}

// AthenaPoll is how often the push-down asks whether its query is done.
var AthenaPoll = 500 * time.Millisecond

// athenaWarehouse is the adapter's billing capability: the FOCUS export in
// an Athena table, queried in Athena's (Trino) SQL.
func athenaWarehouse() *providers.Warehouse {
	return &providers.Warehouse{Scheme: "athena", Form: AthenaForm, Dialect: "trino", Open: openAthena}
}

// openAthena reads an athena:// source with the default AWS configuration
// (AWS_ENDPOINT_URL_ATHENA points it elsewhere, e.g. at a simulator).
func openAthena(ctx context.Context, source string) (providers.WarehouseTable, error) {
	src, err := ParseAthena(source)
	if err != nil {
		return nil, err
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("AWS configuration: %w", err)
	}
	return &AthenaTable{API: athena.NewFromConfig(cfg), Source: src}, nil
}

// AthenaTable is an export's table in Athena, queried through API.
type AthenaTable struct {
	API    AthenaAPI
	Source AthenaSource
}

// Table is DATABASE.TABLE.
func (a *AthenaTable) Table() string { return a.Source.Database + "." + a.Source.Table }

// Close does nothing: the client holds no connection of its own.
func (a *AthenaTable) Close() error { return nil }

// Query runs sql in the source's workgroup and database
// (StartQueryExecution, polled with GetQueryExecution every AthenaPoll,
// the result read with GetQueryResults page by page as next asks).
func (a *AthenaTable) Query(ctx context.Context, sql string) ([]string, func() ([]string, error), error) {
	api, src := a.API, a.Source
	start, err := api.StartQueryExecution(ctx, &athena.StartQueryExecutionInput{
		QueryString: aws.String(sql), WorkGroup: aws.String(src.WorkGroup),
		QueryExecutionContext: &types.QueryExecutionContext{Database: aws.String(src.Database)},
	})
	if err != nil {
		return nil, nil, fmt.Errorf("StartQueryExecution: %w", err)
	}
	id := aws.ToString(start.QueryExecutionId)
	for {
		qe, err := api.GetQueryExecution(ctx, &athena.GetQueryExecutionInput{QueryExecutionId: aws.String(id)})
		if err != nil {
			return nil, nil, fmt.Errorf("GetQueryExecution %s: %w", id, err)
		}
		var state types.QueryExecutionState
		reason := ""
		if qe.QueryExecution != nil && qe.QueryExecution.Status != nil {
			state, reason = qe.QueryExecution.Status.State, aws.ToString(qe.QueryExecution.Status.StateChangeReason)
		}
		if state == types.QueryExecutionStateSucceeded {
			break
		}
		if state == types.QueryExecutionStateFailed || state == types.QueryExecutionStateCancelled {
			return nil, nil, fmt.Errorf("query %s %s: %s", id, strings.ToLower(string(state)), reason)
		}
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-time.After(AthenaPoll):
		}
	}
	var header []string
	var page []types.Row
	var token *string
	first := true
	fetch := func() error {
		out, err := api.GetQueryResults(ctx, &athena.GetQueryResultsInput{QueryExecutionId: aws.String(id), NextToken: token, MaxResults: aws.Int32(1000)})
		if err != nil {
			return fmt.Errorf("GetQueryResults %s: %w", id, err)
		}
		token = out.NextToken
		if out.ResultSet == nil {
			page = nil
			return nil
		}
		page = out.ResultSet.Rows
		if first {
			first = false
			if md := out.ResultSet.ResultSetMetadata; md != nil {
				for _, c := range md.ColumnInfo {
					header = append(header, aws.ToString(c.Name))
				}
			}
			// The first row of a SELECT's first page holds the column names.
			if len(page) > 0 {
				page = page[1:]
			}
		}
		return nil
	}
	if err := fetch(); err != nil {
		return nil, nil, err
	}
	next := func() ([]string, error) {
		for len(page) == 0 {
			if token == nil {
				return nil, io.EOF
			}
			if err := fetch(); err != nil {
				return nil, err
			}
		}
		row := page[0]
		page = page[1:]
		rec := make([]string, len(header))
		for i := range rec {
			if i < len(row.Data) && row.Data[i].VarCharValue != nil {
				rec[i] = *row.Data[i].VarCharValue
			}
		}
		return rec, nil
	}
	return header, next, nil
}
