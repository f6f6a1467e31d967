package tableprinter

import (
	"bytes"
	"strings"
	"testing"
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
