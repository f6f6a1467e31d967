package billing

import (
	"bufio"
	"compress/gzip"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// Error is a problem in an export: the file, the data row (1 is the first
// row after the header; 0 for the file as a whole) and the column.
type Error struct {
	File   string
	Row    int64
	Column string
	Err    error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Row > 0 {
		fmt.Fprintf(&b, ": row %d", e.Row)
	}
	if e.Column != "" {
		fmt.Fprintf(&b, ": column %s", e.Column)
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// table is one export file read record by record.
type table interface {
	header() []string
	// next is the next record; io.EOF after the last.
	next() ([]string, error)
	close() error
}

// Files lists the export files of path: the file itself, or every CSV,
// gzip CSV and Parquet file under a folder (the Data Exports layout, with
// its manifests and other files skipped), in name order.
func Files(path string) ([]string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return []string{path}, nil
	}
	var files []string
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && kindOf(p) != "" {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no .csv, .csv.gz or .parquet file in the folder", path)
	}
	sort.Strings(files)
	return files, nil
}

// kindOf is a file's format by its name: csv, csv.gz, parquet or "".
func kindOf(p string) string {
	n := strings.ToLower(filepath.Base(p))
	switch {
	case strings.HasSuffix(n, ".csv.gz"), strings.HasSuffix(n, ".csv.gzip"):
		return "csv.gz"
	case strings.HasSuffix(n, ".csv"):
		return "csv"
	case strings.HasSuffix(n, ".parquet"), strings.HasSuffix(n, ".snappy.parquet"):
		return "parquet"
	}
	return ""
}

// open opens one export file by its name; a name of no known kind is read
// by its first bytes (gzip magic, Parquet magic, else CSV).
func open(p string) (table, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	kind := kindOf(p)
	if kind == "" {
		var magic [4]byte
		n, _ := io.ReadFull(f, magic[:])
		switch {
		case n >= 2 && magic[0] == 0x1f && magic[1] == 0x8b:
			kind = "csv.gz"
		case n == 4 && string(magic[:]) == "PAR1":
			kind = "parquet"
		default:
			kind = "csv"
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			f.Close()
			return nil, err
		}
	}
	switch kind {
	case "parquet":
		t, err := openParquet(f)
		if err != nil {
			f.Close()
			return nil, err
		}
		return t, nil
	case "csv.gz":
		z, err := gzip.NewReader(bufio.NewReaderSize(f, 1<<16))
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("not gzip: %w", err)
		}
		return newCSV(z, func() error { z.Close(); return f.Close() })
	default:
		return newCSV(bufio.NewReaderSize(f, 1<<16), f.Close)
	}
}

type csvTable struct {
	r    *csv.Reader
	head []string
	done func() error
}

// newCSV reads FOCUS CSV from r; done closes what r reads from.
func newCSV(r io.Reader, done func() error) (*csvTable, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	cr.LazyQuotes = true
	head, err := cr.Read()
	if err != nil {
		done()
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty file: no header")
		}
		return nil, err
	}
	return &csvTable{r: cr, head: append([]string(nil), head...), done: done}, nil
}

func (t *csvTable) header() []string        { return t.head }
func (t *csvTable) next() ([]string, error) { return t.r.Read() }
func (t *csvTable) close() error            { return t.done() }

type parquetTable struct {
	f      *os.File
	pf     *parquet.File
	head   []string
	conv   []func(parquet.Value) string
	groups []parquet.RowGroup
	g      int
	rows   parquet.Rows
	buf    []parquet.Row
	n, i   int
	rec    []string
}

func openParquet(f *os.File) (*parquetTable, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	pf, err := parquet.OpenFile(f, st.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil, fmt.Errorf("not a Parquet file: %w", err)
	}
	t := &parquetTable{f: f, pf: pf, groups: pf.RowGroups(), buf: make([]parquet.Row, 256)}
	for _, path := range pf.Schema().Columns() {
		leaf, _ := pf.Schema().Lookup(path...)
		t.head = append(t.head, strings.Join(path, "."))
		t.conv = append(t.conv, converter(leaf.Node.Type()))
	}
	t.rec = make([]string, len(t.head))
	return t, nil
}

// converter formats a Parquet value as the CSV cell the row parser reads.
func converter(typ parquet.Type) func(parquet.Value) string {
	var lt any
	if l := typ.LogicalType(); l != nil {
		lt = l.Value
	}
	switch l := lt.(type) {
	case *format.DecimalType:
		scale := int(l.Scale)
		return func(v parquet.Value) string {
			switch v.Kind() {
			case parquet.Int32, parquet.Int64:
				return scaled(strconv.FormatInt(v.Int64(), 10), scale)
			default:
				return scaled(bigEndian(v.ByteArray()), scale)
			}
		}
	case *format.TimestampType:
		unit := l.Unit.String()
		return func(v parquet.Value) string {
			n := v.Int64()
			var t time.Time
			switch unit {
			case "MILLIS":
				t = time.UnixMilli(n)
			case "NANOS":
				t = time.Unix(0, n)
			default:
				t = time.UnixMicro(n)
			}
			return t.UTC().Format(time.RFC3339Nano)
		}
	case *format.DateType:
		return func(v parquet.Value) string {
			return time.Unix(0, 0).UTC().AddDate(0, 0, int(v.Int64())).Format("2006-01-02")
		}
	}
	return func(v parquet.Value) string {
		switch v.Kind() {
		case parquet.ByteArray, parquet.FixedLenByteArray:
			return string(v.ByteArray())
		case parquet.Double:
			return strconv.FormatFloat(v.Double(), 'g', -1, 64)
		case parquet.Float:
			return strconv.FormatFloat(float64(v.Float()), 'g', -1, 32)
		case parquet.Int32, parquet.Int64, parquet.Int96:
			return strconv.FormatInt(v.Int64(), 10)
		case parquet.Boolean:
			return strconv.FormatBool(v.Boolean())
		}
		return v.String()
	}
}

// scaled places a decimal point scale digits from the right of an integer.
func scaled(digits string, scale int) string {
	neg := strings.HasPrefix(digits, "-")
	digits = strings.TrimPrefix(digits, "-")
	for len(digits) <= scale {
		digits = "0" + digits
	}
	s := digits
	if scale > 0 {
		s = digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// bigEndian is a two's-complement big-endian integer's decimal digits.
func bigEndian(b []byte) string {
	if len(b) == 0 {
		return "0"
	}
	neg := b[0]&0x80 != 0
	var n []byte
	n = append(n, b...)
	if neg {
		for i := range n {
			n[i] = ^n[i]
		}
	}
	// n as an unsigned number; add one back for the negative.
	digits := toDecimal(n)
	if neg {
		digits = "-" + addOne(digits)
	}
	return digits
}

func toDecimal(b []byte) string {
	out := []byte{0}
	for _, x := range b {
		carry := int(x)
		for i := len(out) - 1; i >= 0; i-- {
			v := int(out[i])*256 + carry
			out[i] = byte(v % 10)
			carry = v / 10
		}
		for carry > 0 {
			out = append([]byte{byte(carry % 10)}, out...)
			carry /= 10
		}
	}
	i := 0
	for i < len(out)-1 && out[i] == 0 {
		i++
	}
	s := make([]byte, len(out)-i)
	for j, d := range out[i:] {
		s[j] = '0' + d
	}
	return string(s)
}

func addOne(d string) string {
	b := []byte(d)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < '9' {
			b[i]++
			return string(b)
		}
		b[i] = '0'
	}
	return "1" + string(b)
}

func (t *parquetTable) header() []string { return t.head }

func (t *parquetTable) next() ([]string, error) {
	for t.i >= t.n {
		if t.rows == nil {
			if t.g >= len(t.groups) {
				return nil, io.EOF
			}
			t.rows = t.groups[t.g].Rows()
			t.g++
		}
		n, err := t.rows.ReadRows(t.buf)
		t.n, t.i = n, 0
		if err != nil {
			if !errors.Is(err, io.EOF) {
				return nil, err
			}
			t.rows.Close()
			t.rows = nil
		}
	}
	row := t.buf[t.i]
	t.i++
	for i := range t.rec {
		t.rec[i] = ""
	}
	for _, v := range row {
		c := v.Column()
		if c < 0 || c >= len(t.rec) || v.IsNull() {
			continue
		}
		t.rec[c] = t.conv[c](v)
	}
	return t.rec, nil
}

func (t *parquetTable) close() error {
	if t.rows != nil {
		t.rows.Close()
	}
	return t.f.Close()
}
