package billing

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
)

// BigQuerySource is bigquery://PROJECT.DATASET.TABLE.
type BigQuerySource struct {
	Project, Dataset, Table string
}

// ParseBigQuery reads bigquery://PROJECT.DATASET.TABLE.
func ParseBigQuery(source string) (BigQuerySource, error) {
	rest, ok := strings.CutPrefix(source, "bigquery://")
	parts := strings.Split(rest, ".")
	if !ok || len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" || strings.ContainsAny(rest, "`/ ") {
		return BigQuerySource{}, fmt.Errorf("%w: --billing %s: want bigquery://PROJECT.DATASET.TABLE", ErrSource, source)
	}
	return BigQuerySource{Project: parts[0], Dataset: parts[1], Table: parts[2]}, nil
}

// BigQueryEndpointEnv points the BigQuery client at another endpoint (a
// simulator) without credentials.
const BigQueryEndpointEnv = "GPUFINOPS_BIGQUERY_ENDPOINT"

// ReadBigQuery runs AggregateSQL in BigQuery (jobs.query, then
// jobs.getQueryResults page by page, through cloud.google.com/go/bigquery)
// and folds the result.
func ReadBigQuery(ctx context.Context, client *bigquery.Client, src BigQuerySource, version string, o Options) (*Summary, error) {
	if version == "" {
		version = V12
	}
	name := "bigquery://" + src.Project + "." + src.Dataset + "." + src.Table
	query, err := AggregateSQL(BigQuery, src.Project+"."+src.Dataset+"."+src.Table, version, o)
	if err != nil {
		return nil, err
	}
	it, err := client.Query(query).Read(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: query: %w", name, err)
	}
	var row []bigquery.Value
	err = it.Next(&row)
	done := errors.Is(err, iterator.Done)
	if err != nil && !done {
		return nil, fmt.Errorf("%s: reading the result: %w", name, err)
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
	return FoldAggregates(ctx, name, header, next, o)
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

// loadBigQuery reads a bigquery:// source with Application Default
// Credentials, or without any against BigQueryEndpointEnv.
func loadBigQuery(ctx context.Context, source string, o Options) (*Summary, error) {
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
		return nil, fmt.Errorf("%s: BigQuery client: %w", source, err)
	}
	defer client.Close()
	return ReadBigQuery(ctx, client, src, o.Version, o)
}
