package iostreams

import (
	"os"
	"testing"
)

func TestColorAllowed(t *testing.T) {
	t.Setenv("TERM", "xterm-256color")
	os.Unsetenv("NO_COLOR")
	if !colorAllowed(os.Getenv) {
		t.Error("colour off on a plain xterm")
	}
	t.Setenv("NO_COLOR", "") // set, even empty, means no colour (no-color.org)
	if colorAllowed(os.Getenv) {
		t.Error("NO_COLOR set but colour on")
	}
	os.Unsetenv("NO_COLOR")
	t.Setenv("TERM", "dumb")
	if colorAllowed(os.Getenv) {
		t.Error("TERM=dumb but colour on")
	}
}

func TestColorScheme(t *testing.T) {
	ios, _, _, _ := Test()
	if got := ios.ColorScheme().Green("x"); got != "x" {
		t.Errorf("colour disabled, got %q", got)
	}
	ios.SetColorEnabled(true)
	if got := ios.ColorScheme().Green("x"); got != "\x1b[32mx\x1b[0m" {
		t.Errorf("colour enabled, got %q", got)
	}
}
