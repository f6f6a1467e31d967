// Package iostreams owns the standard streams and what the terminal can do:
// TTY detection per stream, colour (honouring NO_COLOR) and terminal width.
package iostreams

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/mattn/go-isatty"
	"golang.org/x/term"

	"github.com/gpufinops/gpufinops/pkg/tableprinter"
)

// IOStreams are the streams a command reads and writes.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	stdoutTTY    bool
	stderrTTY    bool
	colorEnabled bool
	width        int
	height       int
}

// System returns the process's streams with TTY and colour detected.
func System() *IOStreams {
	outTTY := isTerminal(os.Stdout)
	s := &IOStreams{
		In:        os.Stdin,
		Out:       os.Stdout,
		ErrOut:    os.Stderr,
		stdoutTTY: outTTY,
		stderrTTY: isTerminal(os.Stderr),
	}
	s.colorEnabled = outTTY && colorAllowed(os.Getenv)
	if outTTY {
		if w, h, err := term.GetSize(int(os.Stdout.Fd())); err == nil && w > 0 {
			s.width, s.height = w, h
		}
	}
	if s.height == 0 && outTTY {
		if l, err := strconv.Atoi(os.Getenv("LINES")); err == nil && l > 0 {
			s.height = l
		}
	}
	if s.width == 0 {
		if c, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && c > 0 {
			s.width = c
		}
	}
	return s
}

// Test returns streams backed by buffers: not a TTY, no colour, width 120.
func Test() (*IOStreams, *bytes.Buffer, *bytes.Buffer, *bytes.Buffer) {
	in, out, errOut := &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut, width: 120}, in, out, errOut
}

func isTerminal(f *os.File) bool {
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}

// colorAllowed applies the NO_COLOR convention (no-color.org) and TERM=dumb.
func colorAllowed(getenv func(string) string) bool {
	if _, set := os.LookupEnv("NO_COLOR"); set {
		return false
	}
	return getenv("TERM") != "dumb"
}

// IsStdoutTTY reports whether stdout is a terminal.
func (s *IOStreams) IsStdoutTTY() bool { return s.stdoutTTY }

// SetStdoutTTY overrides TTY detection for stdout (tests).
func (s *IOStreams) SetStdoutTTY(v bool) { s.stdoutTTY = v }

// IsStderrTTY reports whether stderr is a terminal.
func (s *IOStreams) IsStderrTTY() bool { return s.stderrTTY }

// SetStderrTTY overrides TTY detection for stderr (tests).
func (s *IOStreams) SetStderrTTY(v bool) { s.stderrTTY = v }

// ColorEnabled reports whether output may use ANSI colour.
func (s *IOStreams) ColorEnabled() bool { return s.colorEnabled }

// SetColorEnabled turns colour on or off.
func (s *IOStreams) SetColorEnabled(v bool) { s.colorEnabled = v }

// TerminalWidth is the width of the terminal, or 80 when unknown.
func (s *IOStreams) TerminalWidth() int {
	if s.width > 0 {
		return s.width
	}
	return 80
}

// SetTerminalWidth overrides the detected terminal width (tests).
func (s *IOStreams) SetTerminalWidth(w int) { s.width = w }

// TerminalHeight is the height of the terminal stdout is, in lines; 0 when
// it is not a terminal or the height is unknown.
func (s *IOStreams) TerminalHeight() int { return s.height }

// SetTerminalHeight overrides the detected terminal height (tests).
func (s *IOStreams) SetTerminalHeight(h int) { s.height = h }

// ColorScheme returns colour helpers that are no-ops when colour is off.
func (s *IOStreams) ColorScheme() *ColorScheme { return &ColorScheme{enabled: s.colorEnabled} }

// ColorScheme wraps text in ANSI colours when enabled.
type ColorScheme struct{ enabled bool }

func (c *ColorScheme) wrap(code, s string) string {
	if !c.enabled || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// Bold makes s bold.
func (c *ColorScheme) Bold(s string) string { return c.wrap("1", s) }

// Green colours s green.
func (c *ColorScheme) Green(s string) string { return c.wrap("32", s) }

// Yellow colours s yellow.
func (c *ColorScheme) Yellow(s string) string { return c.wrap("33", s) }

// Red colours s red.
func (c *ColorScheme) Red(s string) string { return c.wrap("31", s) }

// Gray colours s gray.
func (c *ColorScheme) Gray(s string) string { return c.wrap("90", s) }

// Cyan colours s cyan.
func (c *ColorScheme) Cyan(s string) string { return c.wrap("36", s) }

// Notef writes a note, warning or footer for people to stderr; on a terminal
// its lines are wrapped between words to the terminal's width.
func (s *IOStreams) Notef(format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	if s.stderrTTY {
		msg = tableprinter.Wrap(msg, s.TerminalWidth())
	}
	_, _ = io.WriteString(s.ErrOut, msg)
}
