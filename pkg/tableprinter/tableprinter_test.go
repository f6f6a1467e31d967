package tableprinter

import (
	"bytes"
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
