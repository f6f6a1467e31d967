package azure

import (
	_ "embed"
	"encoding/csv"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// sizesCSV is the table of GPU models by VM size name (sizes.csv).
//
//go:embed sizes.csv
var sizesCSV string

// sizeRule is one row of the size table.
type sizeRule struct {
	pattern   *regexp.Regexp
	model     string
	memoryGiB float64
	// gpus is the count the size has when Resource SKUs cannot say it (a
	// fraction of a GPU); zero means the SKU's GPUs capability.
	gpus float64
}

// SizeInfo is what the size table says of one VM size.
type SizeInfo struct {
	Model     string
	MemoryGiB float64
	// GPUs is the table's count, zero when the SKU's capability decides.
	GPUs float64
}

// sizeTable is the parsed size table; the embedded file is checked by a test.
var sizeTable = mustSizes(sizesCSV)

func mustSizes(data string) []sizeRule {
	rules, err := parseSizes(strings.NewReader(data))
	if err != nil {
		panic("providers/azure: sizes.csv: " + err.Error())
	}
	return rules
}

// parseSizes reads a size table: comment lines (#), a header, then rows of
// pattern, model, memory_gib, gpus, source.
func parseSizes(r io.Reader) ([]sizeRule, error) {
	cr := csv.NewReader(r)
	cr.Comment = '#'
	cr.FieldsPerRecord = 5
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	if strings.Join(header, ",") != "pattern,model,memory_gib,gpus,source" {
		return nil, fmt.Errorf("header %q; want pattern,model,memory_gib,gpus,source", strings.Join(header, ","))
	}
	var out []sizeRule
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		line, _ := cr.FieldPos(0)
		re, err := regexp.Compile("(?i)" + rec[0])
		if err != nil {
			return nil, fmt.Errorf("line %d: pattern: %w", line, err)
		}
		if strings.TrimSpace(rec[1]) == "" {
			return nil, fmt.Errorf("line %d: empty model", line)
		}
		mem, err := strconv.ParseFloat(rec[2], 64)
		if err != nil || mem <= 0 {
			return nil, fmt.Errorf("line %d: memory_gib %q: want a positive number", line, rec[2])
		}
		var gpus float64
		if rec[3] != "" {
			if gpus, err = strconv.ParseFloat(rec[3], 64); err != nil || gpus <= 0 || gpus > 64 {
				return nil, fmt.Errorf("line %d: gpus %q: want a number in (0, 64] or nothing", line, rec[3])
			}
		}
		if strings.TrimSpace(rec[4]) == "" {
			return nil, fmt.Errorf("line %d: no source", line)
		}
		out = append(out, sizeRule{pattern: re, model: rec[1], memoryGiB: mem, gpus: gpus})
	}
}

// LookupSize returns the size table's row for a VM size name.
func LookupSize(size string) (SizeInfo, bool) {
	for _, r := range sizeTable {
		if r.pattern.MatchString(size) {
			return SizeInfo{Model: r.model, MemoryGiB: r.memoryGiB, GPUs: r.gpus}, true
		}
	}
	return SizeInfo{}, false
}

// gpuCount is the count of a size: the table's fraction, else the SKU's
// GPUs capability, else the table's whole count.
func gpuCount(info SizeInfo, skuGPUs float64) float64 {
	switch {
	case info.GPUs > 0 && info.GPUs < 1:
		return info.GPUs
	case skuGPUs > 0:
		return skuGPUs
	}
	return info.GPUs
}
