package tableprinter

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestRender(t *testing.T) {
	for _, tc := range []struct {
		name string
		tty  bool
		want string
	}{
		{"terminal", true, "NAME         ON-DEMAND $/H\ng5.xlarge            1.006\np5.48xlarge          55.04\n"},
		{"pipe", false, "name\ton-demand $/h\ng5.xlarge\t1.006\np5.48xlarge\t55.04\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			tp := New(&b, tc.tty, "name", "on-demand $/h")
			tp.AlignRight(1)
			tp.AddRow("g5.xlarge", "1.006")
			tp.AddRow("p5.48xlarge", "55.04")
			if err := tp.Render(); err != nil {
				t.Fatal(err)
			}
			if b.String() != tc.want {
				t.Errorf("got %q want %q", b.String(), tc.want)
			}
		})
	}
}

func TestFit(t *testing.T) {
	build := func(width int) string {
		var b bytes.Buffer
		tp := New(&b, true, "resource", "action", "current", "savings", "confidence")
		tp.SetWidth(width)
		tp.Key(0)
		tp.TruncateStart(0, 8)
		tp.Truncate(1, 10)
		tp.AlignRight(2, 3)
		tp.DropOrder(4, 2)
		tp.AddRow("/subscriptions/abc/vm/nd-h100-eval", "schedule Mon–Fri 08–18", "$71,773.60", "$71,773.60", "high")
		tp.AddRow("nb-g4dn-8", "stop", "$383.98", "$383.98", "medium")
		if err := tp.Render(); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	for _, tc := range []struct {
		width int
		want  string
	}{
		{0, "RESOURCE                            ACTION                     CURRENT     SAVINGS  CONFIDENCE\n" +
			"/subscriptions/abc/vm/nd-h100-eval  schedule Mon–Fri 08–18  $71,773.60  $71,773.60  high\n" +
			"nb-g4dn-8                           stop                       $383.98     $383.98  medium\n"},
		// Shortening first, the most room first: resource keeps its end.
		{80, "RESOURCE              ACTION                     CURRENT     SAVINGS  CONFIDENCE\n" +
			"…abc/vm/nd-h100-eval  schedule Mon–Fri 08–18  $71,773.60  $71,773.60  high\n" +
			"nb-g4dn-8             stop                       $383.98     $383.98  medium\n"},
		// Then the columns in drop order, as few as make it fit.
		{50, "RESOURCE     ACTION            CURRENT     SAVINGS\n" +
			"…-h100-eval  schedule Mon…  $71,773.60  $71,773.60\n" +
			"nb-g4dn-8    stop              $383.98     $383.98\n"},
		{40, "RESOURCE      ACTION             SAVINGS\n" +
			"…d-h100-eval  schedule Mon–…  $71,773.60\n" +
			"nb-g4dn-8     stop               $383.98\n"},
	} {
		got := build(tc.width)
		if got != tc.want {
			t.Errorf("width %d: got\n%s\nwant\n%s", tc.width, got, tc.want)
		}
		if tc.width > 0 {
			for _, l := range strings.Split(got, "\n") {
				if n := Width(l); n > tc.width {
					t.Errorf("width %d: line of %d: %q", tc.width, n, l)
				}
			}
		}
	}
}

func TestSectionsShareWidthsAndStyle(t *testing.T) {
	var b bytes.Buffer
	tp := New(&b, true, "name", "n")
	tp.AlignRight(1)
	tp.Style(func(row, col int, s string) string {
		if col == 1 {
			return "<" + s + ">"
		}
		return s
	})
	tp.Section("first")
	tp.AddRow("a", "1")
	tp.Section("\nsecond")
	tp.AddRow("longer-name", "22")
	if err := tp.Render(); err != nil {
		t.Fatal(err)
	}
	want := "first\nNAME          N\na             <1>\n\nsecond\nNAME          N\nlonger-name  <22>\n"
	if b.String() != want {
		t.Errorf("got %q want %q", b.String(), want)
	}
	b.Reset()
	tp.tty = false
	if err := tp.Render(); err != nil {
		t.Fatal(err)
	}
	if want := "first\nname\tn\na\t1\n\nsecond\nname\tn\nlonger-name\t22\n"; b.String() != want {
		t.Errorf("pipe: got %q want %q", b.String(), want)
	}
}

// FuzzFit: whatever the cells and the width, no terminal line is wider than
// the width (when the columns can shrink that far), key columns are never
// hidden, and a pipe keeps every cell whole.
func FuzzFit(f *testing.F) {
	f.Add("i-0123456789abcdef0", "schedule Mon–Fri 08–18", "$71,773.60", "high", uint8(80))
	f.Add("/subscriptions/0/vm/nd-h100", "→ g5.xlarge", "1", "", uint8(20))
	f.Add("", "", "", "", uint8(0))
	f.Fuzz(func(t *testing.T, a, b, c, d string, w uint8) {
		width := int(w)
		var out bytes.Buffer
		tp := New(&out, true, "resource", "action", "savings", "risk")
		tp.SetWidth(width)
		tp.Key(0, 2)
		tp.TruncateStart(0, 6)
		tp.Truncate(1, 8)
		tp.AlignRight(2)
		tp.DropOrder(3, 1)
		tp.AddRow(a, b, c, d)
		tp.AddRow(d, c, b, a)
		if err := tp.Render(); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		if len(lines) != 3 {
			t.Fatalf("%d lines: %q", len(lines), out.String())
		}
		if !strings.HasPrefix(lines[0], "R") {
			t.Errorf("key column hidden: %q", lines[0])
		}
		if !strings.Contains(lines[0], "S") {
			t.Errorf("savings hidden: %q", lines[0])
		}
		if width >= 2*gap+3 {
			for _, l := range lines {
				if n := Width(l); n > width {
					t.Errorf("line of %d at width %d: %q", n, width, l)
				}
			}
		}
		var pipe bytes.Buffer
		tp.w, tp.tty = &pipe, false
		if err := tp.Render(); err != nil {
			t.Fatal(err)
		}
		if want := tsvCell.Replace(a); !strings.Contains(pipe.String(), want) {
			t.Errorf("pipe lost %q: %q", want, pipe.String())
		}
	})
}

// Long identifiers of every cloud lose their middle: the head and the tail,
// which tell them apart, stay, and the result is exactly the width.
func TestFitMiddle(t *testing.T) {
	for _, tc := range []struct{ id, want string }{
		{"arn:aws:ec2:us-east-1:123456789012:instance/i-0abc123def4567890", "arn:aws…abc123def4567890"},
		{"/subscriptions/0000-1111/resourceGroups/ml/providers/Microsoft.Compute/virtualMachines/nd-h100-eval", "/subscr…nes/nd-h100-eval"},
		{"https://www.googleapis.com/compute/v1/projects/p/zones/us-central1-a/instances/gcp-a100-train", "https:/…s/gcp-a100-train"},
		{"i-0000a00000000019b", "i-0000a00000000019b"},
		{"0123456789abcdef0123456789abcdef", "01234…456789abcdef"},
	} {
		width := min(Width(tc.id), 24)
		if strings.HasPrefix(tc.id, "0123") {
			width = 18
		}
		got := fitMiddle(tc.id, width)
		if Width(got) != width {
			t.Errorf("%s: %q is %d columns, want %d", tc.id, got, Width(got), width)
		}
		if got != tc.want && !(Width(tc.id) <= width && got == tc.id) {
			t.Errorf("%s: got %q want %q", tc.id, got, tc.want)
		}
		head, tail, cut := strings.Cut(got, "…")
		if cut && (!strings.HasPrefix(tc.id, head) || !strings.HasSuffix(tc.id, tail) || len(tail) < len(head)) {
			t.Errorf("%s: %q does not keep the head and a longer tail", tc.id, got)
		}
	}
}

// A wrapped column narrows before a minor column hides, never cuts a word of
// its cells, and puts the rest on continuation lines under itself.
func TestWrapColumn(t *testing.T) {
	build := func(width int) string {
		var b bytes.Buffer
		tp := New(&b, true, "resource", "action", "savings", "risk")
		tp.SetWidth(width)
		tp.Key(0, 1, 2)
		tp.TruncateMiddle(0, 10)
		tp.WrapColumn(1, 16)
		tp.AlignRight(2)
		tp.DropOrder(3)
		tp.AddRow("nb-g4dn-2", "schedule Mon 09–18, Tue 10–18, Wed–Fri 08–18 + share nb-g4dn-3 (4/GPU)", "$383.98", "low")
		tp.AddRow("i-0000a00000000019b", "stop", "$71,773.60", "medium")
		if err := tp.Render(); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	for _, tc := range []struct {
		width int
		want  string
	}{
		{200, "RESOURCE             ACTION                                                                     SAVINGS  RISK\n" +
			"nb-g4dn-2            schedule Mon 09–18, Tue 10–18, Wed–Fri 08–18 + share nb-g4dn-3 (4/GPU)     $383.98  low\n" +
			"i-0000a00000000019b  stop                                                                    $71,773.60  medium\n"},
		// The action wraps; the resource keeps all of itself.
		{60, "RESOURCE             ACTION                  SAVINGS  RISK\n" +
			"nb-g4dn-2            schedule Mon 09–18,     $383.98  low\n" +
			"                     Tue 10–18, Wed–Fri\n" +
			"                     08–18 + share\n" +
			"                     nb-g4dn-3 (4/GPU)\n" +
			"i-0000a00000000019b  stop                 $71,773.60  medium\n"},
		// Past the action's minimum the minor column hides, the resource
		// loses its middle, and the action wraps further.
		{44, "RESOURCE        ACTION               SAVINGS\n" +
			"nb-g4dn-2       schedule Mon         $383.98\n" +
			"                09–18, Tue\n" +
			"                10–18, Wed–Fri\n" +
			"                08–18 + share\n" +
			"                nb-g4dn-3\n" +
			"                (4/GPU)\n" +
			"i-00…00000019b  stop              $71,773.60\n"},
	} {
		got := build(tc.width)
		if got != tc.want {
			t.Errorf("width %d: got\n%s\nwant\n%s", tc.width, got, tc.want)
		}
		for _, l := range strings.Split(got, "\n") {
			if n := Width(l); n > tc.width {
				t.Errorf("width %d: line of %d: %q", tc.width, n, l)
			}
		}
	}
}

// FuzzWrapCell: the lines are no wider than the width, and together they hold
// every character of the cell but the spaces between words.
func FuzzWrapCell(f *testing.F) {
	f.Add("schedule Mon 09–18, Tue 10–18, Wed–Fri 08–18", uint8(12))
	f.Add("1y CUD $0.445/h, 1×g2-standard-4", uint8(5))
	f.Add("verylongwordwithoutanyspace", uint8(1))
	f.Add("", uint8(0))
	f.Fuzz(func(t *testing.T, s string, w uint8) {
		if !utf8.ValidString(s) {
			return // cells are text
		}
		s = oneLine(s)
		width := int(w)
		lines := wrapCell(s, width)
		if len(lines) == 0 {
			t.Fatal("no line")
		}
		for _, l := range lines {
			if Width(l) > max(1, width) && len([]rune(l)) > 1 {
				t.Errorf("line %q wider than %d", l, width)
			}
		}
		strip := func(x string) string { return strings.Join(strings.Fields(x), "") }
		if got, want := strip(strings.Join(lines, "")), strip(s); got != want {
			t.Errorf("lost text: %q from %q", got, want)
		}
	})
}

// FuzzFitWrap: with a wrapped action and a resource shortened in the middle,
// no terminal line is wider than the width (when the columns can narrow that
// far) and the action's text is all there, over however many lines.
func FuzzFitWrap(f *testing.F) {
	f.Add("arn:aws:ec2:us-east-1:123456789012:instance/i-0abc", "schedule Mon 09–18, Tue 10–18 + share nb-1 (4/GPU)", "$3,828.48", uint8(80))
	f.Add("nb-1", "stop", "$1.00", uint8(30))
	f.Add("", "", "", uint8(0))
	f.Fuzz(func(t *testing.T, resource, action, savings string, w uint8) {
		if !utf8.ValidString(resource + action + savings) {
			return
		}
		width := int(w)
		var out bytes.Buffer
		tp := New(&out, true, "resource", "type", "action", "savings")
		tp.SetWidth(width)
		tp.Key(0, 2, 3)
		tp.TruncateMiddle(0, 8)
		tp.Truncate(1, 6)
		tp.WrapColumn(2, 12)
		tp.AlignRight(3)
		tp.DropOrder(1)
		tp.AddRow(resource, "g5.2xlarge", action, savings)
		if err := tp.Render(); err != nil {
			t.Fatal(err)
		}
		got := out.String()
		if width >= 3*gap+8 {
			for _, l := range strings.Split(got, "\n") {
				if n := Width(l); n > width {
					t.Errorf("line of %d at width %d: %q", n, width, l)
				}
			}
		}
		strip := func(x string) string { return strings.Join(strings.Fields(x), "") }
		if a := strip(oneLine(action)); !strings.Contains(strip(got), a) && !wrappedIn(got, a) {
			t.Errorf("action %q lost in\n%s", action, got)
		}
	})
}

// wrappedIn reports whether the action's characters appear, in order, in the
// text with the other columns between its lines.
func wrappedIn(got, action string) bool {
	i := 0
	r := []rune(action)
	for _, c := range got {
		if i < len(r) && c == r[i] {
			i++
		}
	}
	return i == len(r)
}
