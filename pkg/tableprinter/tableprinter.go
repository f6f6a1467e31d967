// Package tableprinter renders rows for people and for pipes: on a terminal an
// aligned, borderless table with upper-case headers; elsewhere tab-separated
// values with a header line, easy to cut and awk.
package tableprinter

import (
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// Table collects rows and renders them once.
type Table struct {
	w       io.Writer
	tty     bool
	headers []string
	rows    [][]string
	right   map[int]bool
}

// New starts a table; tty selects the aligned rendering.
func New(w io.Writer, tty bool, headers ...string) *Table {
	return &Table{w: w, tty: tty, headers: headers, right: map[int]bool{}}
}

// AlignRight right-aligns the given columns (numbers, money) on a terminal.
func (t *Table) AlignRight(cols ...int) {
	for _, c := range cols {
		t.right[c] = true
	}
}

// AddRow appends one row; it must have as many cells as there are headers.
func (t *Table) AddRow(cells ...string) { t.rows = append(t.rows, cells) }

// Len is the number of rows added.
func (t *Table) Len() int { return len(t.rows) }

// Render writes the table.
func (t *Table) Render() error {
	if !t.tty {
		return t.renderTSV()
	}
	aligns := make([]tw.Align, len(t.headers))
	for i := range aligns {
		aligns[i] = tw.AlignLeft
		if t.right[i] {
			aligns[i] = tw.AlignRight
		}
	}
	var buf strings.Builder
	table := tablewriter.NewTable(&buf,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders: tw.BorderNone,
			Settings: tw.Settings{
				Separators: tw.SeparatorsNone,
				Lines:      tw.LinesNone,
			},
		})),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: aligns}),
		tablewriter.WithHeaderAlignmentConfig(tw.CellAlignment{PerColumn: aligns}),
		tablewriter.WithPadding(tw.Padding{Left: "", Right: "  ", Overwrite: true}),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
		tablewriter.WithTrimSpace(tw.Off),
		tablewriter.WithHeaderAutoFormat(tw.Off),
	)
	upper := make([]string, len(t.headers))
	for i, h := range t.headers {
		upper[i] = strings.ToUpper(h)
	}
	table.Header(upper)
	if err := table.Bulk(t.rows); err != nil {
		return err
	}
	if err := table.Render(); err != nil {
		return err
	}
	lines := strings.Split(buf.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	_, err := io.WriteString(t.w, strings.Join(lines, "\n"))
	return err
}

// tsvCell keeps a cell on its line and in its column.
var tsvCell = strings.NewReplacer("\t", " ", "\n", " ")

func (t *Table) renderTSV() error {
	var b strings.Builder
	b.WriteString(strings.Join(t.headers, "\t"))
	b.WriteByte('\n')
	for _, r := range t.rows {
		clean := make([]string, len(r))
		for i, c := range r {
			clean[i] = tsvCell.Replace(c)
		}
		b.WriteString(strings.Join(clean, "\t"))
		b.WriteByte('\n')
	}
	_, err := io.WriteString(t.w, b.String())
	return err
}
