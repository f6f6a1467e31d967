// Package tableprinter renders rows for people and for pipes: on a terminal an
// aligned, borderless table with upper-case headers that fits the terminal's
// width; elsewhere tab-separated values with a header line, easy to cut and
// awk, never shortened.
//
// A table that is wider than its width first narrows the columns that may
// give way (Truncate, TruncateStart, TruncateMiddle, WrapColumn), the most
// room first, down to their minimum; if that is not enough it hides columns
// in DropOrder, as few as it can, and narrows again. A wrapped column loses
// nothing: its cells break between words onto continuation lines. Key
// columns are never hidden; they narrow like the others when the caller
// allows it, and otherwise only when everything else is already as narrow as
// it may be.
//
// A table that says nothing of this has defaults: the first column is the
// key and loses its middle, text columns may shorten to ten characters, numbers
// (right-aligned) never shorten, and columns give way from the right.
package tableprinter

import (
	"io"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/mattn/go-runewidth"
)

// cw measures text as a Western terminal shows it: the ambiguous-width
// characters the tables use (…, –, →, ·) take one column whatever the locale.
var cw = func() *runewidth.Condition {
	c := runewidth.NewCondition()
	c.EastAsianWidth = false
	return c
}()

// Width is how many terminal columns s takes, colour codes aside.
func Width(s string) int { return cw.StringWidth(ansi.ReplaceAllString(s, "")) }

// gap is the space between two columns.
const gap = 2

// Table collects rows and renders them once.
type Table struct {
	w        io.Writer
	tty      bool
	width    int
	headers  []string
	rows     [][]string
	sections []section
	right    map[int]bool
	key      map[int]bool
	trunc    map[int]truncation
	drop     []int
	style    func(row, col int, s string) string
}

// section is a run of rows under a title, each with its own header line.
type section struct {
	title   string
	start   int
	headers []string
}

// truncation is how far a column may shrink and how: losing its end, its
// start or its middle, or wrapping onto continuation lines.
type truncation struct {
	min    int
	start  bool
	middle bool
	wrap   bool
}

// New starts a table; tty selects the aligned rendering.
func New(w io.Writer, tty bool, headers ...string) *Table {
	return &Table{w: w, tty: tty, headers: headers, right: map[int]bool{}, key: map[int]bool{}, trunc: map[int]truncation{}}
}

// SetWidth makes the terminal rendering fit width columns; 0 means no limit.
// Pipes are never shortened.
func (t *Table) SetWidth(width int) { t.width = width }

// AlignRight right-aligns the given columns (numbers, money) on a terminal.
func (t *Table) AlignRight(cols ...int) {
	for _, c := range cols {
		t.right[c] = true
	}
}

// Key marks the columns that identify a row: never hidden, and shortened
// before the end only when Truncate or TruncateStart allows it.
func (t *Table) Key(cols ...int) {
	for _, c := range cols {
		t.key[c] = true
	}
}

// Truncate lets col lose its end, marked "…", down to min characters.
func (t *Table) Truncate(col, min int) { t.trunc[col] = truncation{min: max(1, min)} }

// TruncateStart lets col lose its start, marked "…", down to min characters:
// for identifiers whose end tells them apart.
func (t *Table) TruncateStart(col, min int) {
	t.trunc[col] = truncation{min: max(1, min), start: true}
}

// TruncateMiddle lets col lose its middle, marked "…", down to min
// characters: for long identifiers (ARNs, resource IDs, self-links) whose
// head and tail tell them apart; the tail keeps two thirds.
func (t *Table) TruncateMiddle(col, min int) {
	t.trunc[col] = truncation{min: max(3, min), middle: true}
}

// WrapColumn lets col narrow down to min characters by breaking its cells
// between words onto continuation lines, so nothing of it is cut: the
// column to act on. A word wider than the column is broken across lines.
func (t *Table) WrapColumn(col, min int) {
	t.trunc[col] = truncation{min: max(1, min), wrap: true}
}

// DropOrder lists the columns that may be hidden when the table does not fit,
// the first to go first.
func (t *Table) DropOrder(cols ...int) { t.drop = cols }

// Style colours cells on a terminal: f gets the row's index (counting every
// row added), the column and the cell's text as printed, and returns it
// styled. Widths are measured before styling.
func (t *Table) Style(f func(row, col int, s string) string) { t.style = f }

// Section starts a titled group of rows; on a terminal all groups share the
// column widths. The title is printed as given, on its own line, followed by
// the header line: the table's, or headers when given (one per column).
func (t *Table) Section(title string, headers ...string) {
	t.sections = append(t.sections, section{title: title, start: len(t.rows), headers: headers})
}

// sectionHeaders are the header line of s.
func (t *Table) sectionHeaders(s section) []string {
	if len(s.headers) == len(t.headers) {
		return s.headers
	}
	return t.headers
}

// AddRow appends one row; it must have as many cells as there are headers.
func (t *Table) AddRow(cells ...string) { t.rows = append(t.rows, cells) }

// Len is the number of rows added.
func (t *Table) Len() int { return len(t.rows) }

// Render writes the table.
func (t *Table) Render() error {
	var b strings.Builder
	if t.tty {
		t.renderTTY(&b)
	} else {
		t.renderTSV(&b)
	}
	_, err := io.WriteString(t.w, b.String())
	return err
}

// groups are the sections to print, one untitled group when there are none.
func (t *Table) groups() []section {
	if len(t.sections) == 0 || t.sections[0].start > 0 {
		return append([]section{{title: "\x00"}}, t.sections...)
	}
	return t.sections
}

func (t *Table) renderTTY(b *strings.Builder) {
	cells := make([][]string, len(t.rows))
	for i, r := range t.rows {
		cells[i] = make([]string, len(t.headers))
		for j := range t.headers {
			if j < len(r) {
				cells[i][j] = oneLine(r[j])
			}
		}
	}
	upper := func(hs []string) []string {
		out := make([]string, len(hs))
		for j, h := range hs {
			out[j] = strings.ToUpper(h)
		}
		return out
	}
	measured := cells
	for _, s := range t.sections {
		measured = append(measured, upper(t.sectionHeaders(s)))
	}
	visible, widths := t.layout(upper(t.headers), measured)
	line := func(row []string, rowIndex int) {
		// Each visible cell as the lines it takes: one, or more when a
		// wrapped column breaks it.
		parts := make([][]string, len(visible))
		height := 1
		for k, j := range visible {
			tr := t.trunc[j]
			switch {
			case tr.wrap && rowIndex >= 0:
				parts[k] = wrapCell(row[j], widths[j])
			case tr.middle && rowIndex >= 0:
				parts[k] = []string{fitMiddle(row[j], widths[j])}
			default:
				// Headers lose their end, whichever end the cells lose.
				parts[k] = []string{fit(row[j], widths[j], tr.start && rowIndex >= 0)}
			}
			height = max(height, len(parts[k]))
		}
		last := len(visible) - 1
		for n := 0; n < height; n++ {
			var l strings.Builder
			for k, j := range visible {
				text := ""
				if n < len(parts[k]) {
					text = parts[k][n]
				}
				pad := strings.Repeat(" ", max(0, widths[j]-cw.StringWidth(text)))
				if rowIndex >= 0 && t.style != nil && text != "" {
					text = t.style(rowIndex, j, text)
				}
				switch {
				case t.right[j]:
					l.WriteString(pad + text)
				case k < last:
					l.WriteString(text + pad)
				default:
					l.WriteString(text)
				}
				if k < last {
					l.WriteString(strings.Repeat(" ", gap))
				}
			}
			b.WriteString(strings.TrimRight(l.String(), " ") + "\n")
		}
	}
	groups := t.groups()
	for g, s := range groups {
		end := len(t.rows)
		if g+1 < len(groups) {
			end = groups[g+1].start
		}
		if s.title != "\x00" {
			b.WriteString(s.title + "\n")
		}
		line(upper(t.sectionHeaders(s)), -1)
		for i := s.start; i < end; i++ {
			line(cells[i], i)
		}
	}
}

// layout chooses the columns shown and their widths: the fewest hidden
// columns with which shortening makes the table fit.
func (t *Table) layout(headers []string, cells [][]string) ([]int, []int) {
	t.defaults()
	natural := make([]int, len(headers))
	for j, h := range headers {
		natural[j] = cw.StringWidth(h)
	}
	for _, r := range cells {
		for j, c := range r {
			natural[j] = max(natural[j], cw.StringWidth(c))
		}
	}
	// A wrapped column keeps its longest word whole while other columns can
	// still give way.
	longest := map[int]int{}
	for j, tr := range t.trunc {
		if !tr.wrap {
			continue
		}
		for _, r := range cells {
			if j < len(r) {
				for _, word := range strings.Fields(r[j]) {
					longest[j] = max(longest[j], cw.StringWidth(word))
				}
			}
		}
	}
	var droppable []int
	for _, j := range t.drop {
		if j >= 0 && j < len(headers) && !t.key[j] {
			droppable = append(droppable, j)
		}
	}
	var visible, widths []int
	for k := 0; k <= len(droppable); k++ {
		visible = visible[:0]
		for j := range headers {
			if !contains(droppable[:k], j) {
				visible = append(visible, j)
			}
		}
		widths = append(widths[:0], natural...)
		if t.width <= 0 || t.shrink(visible, widths, func(j int) (int, bool) {
			tr, ok := t.trunc[j]
			return max(tr.min, min(longest[j], natural[j])), ok
		}) {
			return visible, widths
		}
	}
	// Nothing else can give: shorten the key columns, then anything at all.
	if t.shrink(visible, widths, func(j int) (int, bool) { return 1, t.key[j] || t.trunc[j].min > 0 }) {
		return visible, widths
	}
	t.shrink(visible, widths, func(int) (int, bool) { return 1, true })
	return visible, widths
}

// defaultMin is how short a text column may get by default.
const defaultMin = 10

// defaults fills in what the caller left unsaid (see the package comment).
func (t *Table) defaults() {
	if len(t.headers) == 0 {
		return
	}
	if len(t.key) == 0 {
		t.key[0] = true
		if _, ok := t.trunc[0]; !ok {
			t.trunc[0] = truncation{min: defaultMin, middle: true}
		}
	}
	if len(t.trunc) <= 1 {
		for j := range t.headers {
			if _, ok := t.trunc[j]; !ok && !t.right[j] && !t.key[j] {
				t.trunc[j] = truncation{min: defaultMin}
			}
		}
	}
	if t.drop == nil {
		for j := len(t.headers) - 1; j > 0; j-- {
			if !t.key[j] {
				t.drop = append(t.drop, j)
			}
		}
	}
}

// middleComfort is how wide a column shortened in the middle stays while
// other columns can still give way: enough to tell most identifiers apart.
const middleComfort = 24

// shrink takes a character at a time from the visible column with the most
// room above its minimum until the table fits; it reports whether it does.
// Columns shortened in the middle (identifiers to copy) count their room
// above middleComfort first, and below it only when no other column has any.
func (t *Table) shrink(visible, widths []int, limit func(int) (int, bool)) bool {
	for total(visible, widths) > t.width {
		best, room := -1, 0
		for _, phase := range []bool{false, true} {
			for _, j := range visible {
				min, ok := limit(j)
				if !ok {
					continue
				}
				if t.trunc[j].middle && !phase {
					min = max(min, middleComfort)
				}
				if widths[j]-min > room {
					best, room = j, widths[j]-min
				}
			}
			if best >= 0 {
				break
			}
		}
		if best < 0 {
			return false
		}
		widths[best]--
	}
	return true
}

// total is the printed width of the visible columns.
func total(visible, widths []int) int {
	n := -gap
	for _, j := range visible {
		n += widths[j] + gap
	}
	return max(n, 0)
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// fit shortens s to width display columns, marking the cut with "…" at the
// end, or at the start when start is set.
func fit(s string, width int, start bool) string {
	if cw.StringWidth(s) <= width {
		return s
	}
	if width <= 1 {
		return cw.Truncate(s, width, "")
	}
	if !start {
		return cw.Truncate(s, width, "…")
	}
	r := []rune(s)
	w := 1
	i := len(r)
	for i > 0 && w+cw.RuneWidth(r[i-1]) <= width {
		i--
		w += cw.RuneWidth(r[i])
	}
	return "…" + string(r[i:])
}

// fitMiddle shortens s to width display columns by cutting its middle,
// marked "…": the head keeps a third of what is left, the tail the rest.
func fitMiddle(s string, width int) string {
	if cw.StringWidth(s) <= width {
		return s
	}
	if width <= 2 {
		return fit(s, width, true)
	}
	room := width - 1
	head := cw.Truncate(s, room/3, "")
	tail := fit(s, room-cw.StringWidth(head)+1, true)
	return head + tail
}

// wrapCell breaks s into lines of at most width display columns between
// words; a word wider than width is broken across lines. Nothing is lost
// but the spaces at the breaks.
func wrapCell(s string, width int) []string {
	width = max(1, width)
	if cw.StringWidth(s) <= width {
		return []string{s}
	}
	var lines []string
	cur := ""
	for _, word := range strings.Fields(s) {
		if cur != "" && cw.StringWidth(cur)+1+cw.StringWidth(word) <= width {
			cur += " " + word
			continue
		}
		if cur != "" {
			lines = append(lines, cur)
			cur = ""
		}
		for cw.StringWidth(word) > width {
			// The longest head of whole runes that fits, one rune at least.
			n, w := 0, 0
			for n < len(word) {
				r, size := utf8.DecodeRuneInString(word[n:])
				if n > 0 && w+cw.RuneWidth(r) > width {
					break
				}
				n, w = n+size, w+cw.RuneWidth(r)
			}
			lines = append(lines, word[:n])
			word = word[n:]
		}
		cur = word
	}
	if cur != "" || len(lines) == 0 {
		lines = append(lines, cur)
	}
	return lines
}

// StripColor is s without its colour codes.
func StripColor(s string) string { return ansi.ReplaceAllString(s, "") }

// WrapWords breaks s into lines of at most width terminal columns between
// words, as a wrapped column does; a word wider than width is broken.
func WrapWords(s string, width int) []string { return wrapCell(s, width) }

// ansi matches the colour sequences a cell may carry.
var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

// oneLine keeps a cell on its line; colour codes are dropped (use Style).
func oneLine(s string) string {
	return tsvCell.Replace(ansi.ReplaceAllString(s, ""))
}

// tsvCell keeps a cell on its line and in its column.
var tsvCell = strings.NewReplacer("\t", " ", "\r\n", " ", "\n", " ", "\r", " ")

func (t *Table) renderTSV(b *strings.Builder) {
	groups := t.groups()
	for g, s := range groups {
		end := len(t.rows)
		if g+1 < len(groups) {
			end = groups[g+1].start
		}
		if s.title != "\x00" {
			b.WriteString(s.title + "\n")
		}
		b.WriteString(strings.Join(t.sectionHeaders(s), "\t"))
		b.WriteByte('\n')
		for _, r := range t.rows[s.start:end] {
			clean := make([]string, len(r))
			for i, c := range r {
				clean[i] = tsvCell.Replace(c)
			}
			b.WriteString(strings.Join(clean, "\t"))
			b.WriteByte('\n')
		}
	}
}

// Wrap breaks the lines of s wider than width between words, indenting the
// continuation lines by two spaces; a word longer than a line is cut. Tables
// that fit are left as they are, so it can wrap a whole page of prose and
// tables at once.
func Wrap(s string, width int) string {
	const indent = "  "
	lines := strings.Split(s, "\n")
	var out []string
	for _, l := range lines {
		if Width(l) <= width {
			out = append(out, l)
			continue
		}
		cur, prefix := "", ""
		for _, word := range strings.Split(l, " ") {
			for Width(prefix+word) > width {
				// A word longer than a line is cut.
				r := []rune(word)
				n := max(1, width-Width(prefix))
				if cur != "" {
					out = append(out, cur)
					cur, prefix = "", indent
					continue
				}
				out = append(out, prefix+string(r[:min(n, len(r))]))
				word, prefix = string(r[min(n, len(r)):]), indent
			}
			switch {
			case cur == "":
				cur = prefix + word
			case Width(cur+" "+word) <= width:
				cur += " " + word
			default:
				out = append(out, cur)
				cur, prefix = indent+word, indent
			}
		}
		out = append(out, cur)
	}
	return strings.Join(out, "\n")
}
