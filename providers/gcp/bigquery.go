package gcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"strconv"
	"strings"
	"time"

	"cloud.google.com/go/bigquery"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"

	"github.com/gpufinops/gpufinops/providers"
)

// BigQuerySource is bigquery://PROJECT.DATASET.TABLE.
type BigQuerySource struct {
	Project, Dataset, Table string
}

// BigQueryForm is a BigQuery --billing source's syntax.
const BigQueryForm = "bigquery://PROJECT.DATASET.TABLE"

// ParseBigQuery reads bigquery://PROJECT.DATASET.TABLE.
func ParseBigQuery(source string) (BigQuerySource, error) {
	rest, ok := strings.CutPrefix(source, "bigquery://")
	parts := strings.Split(rest, ".")
	if !ok || len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" || strings.ContainsAny(rest, "`/ ") {
		return BigQuerySource{}, fmt.Errorf("%w: --billing %s: want %s", providers.ErrBillingSource, source, BigQueryForm)
	}
	return BigQuerySource{Project: parts[0], Dataset: parts[1], Table: parts[2]}, nil
}

// BigQueryEndpointEnv points the BigQuery client at another endpoint (a
// simulator) without credentials.
const BigQueryEndpointEnv = "GPUFINOPS_BIGQUERY_ENDPOINT"

// bigQueryWarehouse is the adapter's billing capability: the FOCUS export
// in a BigQuery table, queried in GoogleSQL.
func bigQueryWarehouse() *providers.Warehouse {
	return &providers.Warehouse{Scheme: "bigquery", Form: BigQueryForm, Dialect: "googlesql", Open: openBigQuery}
}

// openBigQuery reads a bigquery:// source with Application Default
// Credentials, or without any against BigQueryEndpointEnv.
func openBigQuery(ctx context.Context, source string) (providers.WarehouseTable, error) {
	src, err := ParseBigQuery(source)
	if err != nil {
		return nil, err
	}
	var opts []option.ClientOption
	if ep := os.Getenv(BigQueryEndpointEnv); ep != "" {
		opts = append(opts, option.WithEndpoint(ep), option.WithoutAuthentication())
	}
	client, err := bigquery.NewClient(ctx, src.Project, opts...)
	if err != nil {
		return nil, fmt.Errorf("BigQuery client: %w", err)
	}
	return &BigQueryTable{Client: client, Source: src}, nil
}

// BigQueryTable is an export's table in BigQuery, queried through Client.
type BigQueryTable struct {
	Client *bigquery.Client
	Source BigQuerySource
}

// Table is PROJECT.DATASET.TABLE.
func (b *BigQueryTable) Table() string {
	return b.Source.Project + "." + b.Source.Dataset + "." + b.Source.Table
}

// Close closes the client.
func (b *BigQueryTable) Close() error { return b.Client.Close() }

// Query runs sql (jobs.query, then jobs.getQueryResults page by page as
// next asks, through cloud.google.com/go/bigquery).
func (b *BigQueryTable) Query(ctx context.Context, sql string) ([]string, func() ([]string, error), error) {
	it, err := b.Client.Query(sql).Read(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("query: %w", err)
	}
	var row []bigquery.Value
	err = it.Next(&row)
	done := errors.Is(err, iterator.Done)
	if err != nil && !done {
		return nil, nil, fmt.Errorf("reading the result: %w", err)
	}
	header := make([]string, len(it.Schema))
	for i, f := range it.Schema {
		header[i] = f.Name
	}
	next := func() ([]string, error) {
		if done {
			return nil, io.EOF
		}
		rec := make([]string, len(row))
		for i, v := range row {
			rec[i] = bqText(v)
		}
		err := it.Next(&row)
		if errors.Is(err, iterator.Done) {
			done = true
		} else if err != nil {
			return nil, fmt.Errorf("reading the result: %w", err)
		}
		return rec, nil
	}
	return header, next, nil
}

// bqText is a result value as the fold reads it: decimals exactly.
func bqText(v bigquery.Value) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case *big.Rat:
		return ratText(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	case bool:
		return strconv.FormatBool(x)
	}
	return fmt.Sprint(v)
}

// ratText is an exact decimal's digits: BIGNUMERIC has at most 38 places.
func ratText(r *big.Rat) string {
	s := r.FloatString(38)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}
