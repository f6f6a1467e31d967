package iostreams

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock moves only when told.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// frames are the lines drawn, one per redraw.
func frames(out string) []string {
	var fs []string
	for _, f := range strings.Split(out, "\r\x1b[K") {
		if f != "" {
			fs = append(fs, f)
		}
	}
	return fs
}

func TestProgressLifecycle(t *testing.T) {
	var w bytes.Buffer
	clock := &fakeClock{t: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	p := startProgress(&w, 200, "aws", clock.now, 0, nil)
	for range 3 {
		p.Request()
	}
	clock.add(1500 * time.Millisecond)
	p.Discovered(17)
	for i := range 17 {
		for range 25 {
			p.Request()
		}
		clock.add(300 * time.Millisecond)
		p.ScopeDone(2, i == 4)
	}
	p.Finish()
	fs := frames(w.String())
	want := []string{
		"aws: listing scopes… 0 requests, 0.0s",
		"aws: 0/17 scopes, 0 GPU instances, 3 requests, 1.5s",
		"aws: 1/17 scopes, 2 GPU instances, 28 requests, 1.8s",
	}
	for i, wnt := range want {
		if i >= len(fs) || fs[i] != wnt {
			t.Fatalf("frame %d = %q, want %q\nall: %q", i, at(fs, i), wnt, fs)
		}
	}
	if got := fs[len(fs)-2]; got != "aws: 17/17 scopes, 34 GPU instances, 1 failed, 428 requests, 6.6s" {
		t.Errorf("last frame %q", got)
	}
	if got := fs[len(fs)-1]; got != "aws: 17 scopes scanned, 34 GPU instances, 1 failed, 428 requests in 6.6s\n" {
		t.Errorf("summary %q", got)
	}
	if !strings.HasSuffix(w.String(), "\n") || strings.Count(w.String(), "\n") != 1 {
		t.Errorf("want exactly one line left on the terminal: %q", w.String())
	}
}

func TestProgressFitsTheTerminal(t *testing.T) {
	var w bytes.Buffer
	clock := &fakeClock{t: time.Unix(0, 0)}
	p := startProgress(&w, 30, "azure", clock.now, 0, nil)
	p.Discovered(120)
	p.ScopeDone(1000, false)
	for _, f := range frames(w.String()) {
		if n := len([]rune(f)); n > 29 {
			t.Errorf("frame %q is %d wide on a 30-column terminal", f, n)
		}
	}
	p.Finish()
}

// The ticker redraws the elapsed time while a slow scope runs.
func TestProgressTicks(t *testing.T) {
	var mu sync.Mutex
	var w lockedBuffer
	w.mu = &mu
	p := startProgress(&w, 100, "gcp", time.Now, 10*time.Millisecond, nil)
	time.Sleep(120 * time.Millisecond)
	p.Finish()
	if n := len(frames(w.String())); n < 3 {
		t.Errorf("%d frames in 120 ms at a 10 ms tick: %q", n, w.String())
	}
}

type lockedBuffer struct {
	mu *sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
func (l *lockedBuffer) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

func TestProgressOffWhenNotForPeople(t *testing.T) {
	ios, _, _, errOut := Test()
	if p := ios.StartProgress("aws", false); p != nil {
		t.Error("progress on a stderr that is not a terminal")
	}
	ios.SetStderrTTY(true)
	if p := ios.StartProgress("aws", true); p != nil {
		t.Error("progress under machine output")
	}
	var p *Progress
	p.Discovered(3)
	p.ScopeDone(1, false)
	p.Request()
	p.Finish()
	if errOut.Len() != 0 {
		t.Errorf("a nil Progress wrote %q", errOut.String())
	}
}

func TestCommas(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567"} {
		if got := commas(n); got != want {
			t.Errorf("commas(%d) = %q, want %q", n, got, want)
		}
	}
}

func at(fs []string, i int) string {
	if i < len(fs) {
		return fs[i]
	}
	return "(none)"
}

// Providers scanned at once share one line, each status in the order they
// started; each finished provider's summary is written above the line, and
// the line keeps the others.
func TestProgressGroupSharesOneLine(t *testing.T) {
	var w lockedBuffer
	w.mu = &sync.Mutex{}
	clock := &fakeClock{t: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	g := &ProgressGroup{w: &w, width: 200, now: clock.now, lines: map[string]string{}}
	aws, gcp := g.Start("aws"), g.Start("gcp")
	aws.Discovered(3)
	gcp.Discovered(2)
	if !strings.HasSuffix(w.String(), "\r\x1b[Kaws: 0/3 scopes, 0 GPU instances, 0 requests, 0.0s · gcp: 0/2 scopes, 0 GPU instances, 0 requests, 0.0s") {
		t.Fatalf("shared line %q", w.String())
	}
	aws.ScopeDone(4, false)
	gcp.ScopeDone(1, false)
	gcp.ScopeDone(0, true)
	gcp.Finish()
	out := w.String()
	if !strings.Contains(out, "\r\x1b[Kgcp: 2 scopes scanned, 1 GPU instance, 1 failed, 0 requests in") {
		t.Errorf("no gcp summary: %q", out)
	}
	// (aws's 1/3 came within a tick of its last draw, so the line still
	// shows 0/3.)
	if !strings.HasSuffix(out, "\r\x1b[Kaws: 0/3 scopes, 0 GPU instances, 0 requests, 0.0s") {
		t.Errorf("the line after gcp finished: %q", out)
	}
	aws.Finish()
	if out = w.String(); !strings.HasSuffix(out, "\r\x1b[Kaws: 1 scope scanned, 4 GPU instances, 0 requests in 0.0s\n") {
		t.Errorf("after both finished: %q", out)
	}
	var none *ProgressGroup
	none.Start("aws").Finish() // nothing shown, no panic
}
