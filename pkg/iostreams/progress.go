package iostreams

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// Progress shows a person at a terminal how a scan of one provider goes, on
// one line of stderr redrawn in place: the scopes (regions, subscriptions,
// projects) discovered, done of all, the GPU instances found, the requests
// made and the time taken; while the scopes are still being listed it says
// so. Finish replaces the line with a one-line summary. A nil *Progress, what
// StartProgress returns when stderr is not a terminal or the output is for
// machines, shows nothing, and every method on it is a no-op.
type Progress struct {
	w        io.Writer
	width    int
	provider string
	now      func() time.Time
	start    time.Time
	requests atomic.Int64

	mu                                  sync.Mutex
	discovered, done, failed, instances int
	listed                              bool
	last                                string
	lastDraw                            time.Time
	stop                                chan struct{}
	stopped                             sync.WaitGroup
	// group, when set, shares one line among providers scanned at once.
	group *ProgressGroup
}

// ProgressGroup is the display of several providers scanned at once: one
// line of stderr holding each running provider's status, joined by " · ";
// as each finishes its summary line is written above it. A nil
// *ProgressGroup shows nothing.
type ProgressGroup struct {
	w     io.Writer
	width int
	tick  time.Duration
	now   func() time.Time

	mu    sync.Mutex
	order []string
	lines map[string]string
	last  string
}

// StartProgressGroup starts a shared display, or returns nil (nothing is
// shown) when stderr is not a terminal or quiet is set.
func (s *IOStreams) StartProgressGroup(quiet bool) *ProgressGroup {
	if quiet || !s.stderrTTY {
		return nil
	}
	return &ProgressGroup{w: s.ErrOut, width: s.TerminalWidth(), tick: progressTick, now: time.Now, lines: map[string]string{}}
}

// Start adds provider's part to the shared line.
func (g *ProgressGroup) Start(provider string) *Progress {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	g.order = append(g.order, provider)
	g.mu.Unlock()
	return startProgress(g.w, g.width, provider, g.now, g.tick, g)
}

// update sets one provider's status and redraws the line when it changed.
func (g *ProgressGroup) update(provider, status string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.lines[provider] = status
	g.draw()
}

// finish writes one provider's summary above the line and drops its part.
func (g *ProgressGroup) finish(provider, summary string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.lines, provider)
	g.order = slices.DeleteFunc(g.order, func(p string) bool { return p == provider })
	fmt.Fprintf(g.w, "\r\x1b[K%s\n", summary)
	g.last = ""
	g.draw()
}

func (g *ProgressGroup) draw() {
	var parts []string
	for _, p := range g.order {
		if l := g.lines[p]; l != "" {
			parts = append(parts, l)
		}
	}
	line := fitLine(strings.Join(parts, " · "), g.width)
	if line == g.last {
		return
	}
	g.last = line
	fmt.Fprintf(g.w, "\r\x1b[K%s", line)
}

// fitLine cuts line to the terminal's width so that it never wraps.
func fitLine(line string, width int) string {
	if max := width - 1; max > 0 && utf8.RuneCountInString(line) > max {
		return string([]rune(line)[:max-1]) + "…"
	}
	return line
}

// progressTick is how often the line is redrawn while nothing happens (the
// elapsed time moves); events redraw it at most this often too.
const progressTick = 200 * time.Millisecond

// StartProgress starts the display for provider, or returns nil (nothing is
// shown) when stderr is not a terminal or quiet is set (machine output:
// -o json, csv, yaml).
func (s *IOStreams) StartProgress(provider string, quiet bool) *Progress {
	if quiet || !s.stderrTTY {
		return nil
	}
	return startProgress(s.ErrOut, s.TerminalWidth(), provider, time.Now, progressTick, nil)
}

func startProgress(w io.Writer, width int, provider string, now func() time.Time, tick time.Duration, group *ProgressGroup) *Progress {
	p := &Progress{w: w, width: width, provider: provider, now: now, start: now(), stop: make(chan struct{}), group: group}
	p.mu.Lock()
	p.draw(true)
	p.mu.Unlock()
	if tick > 0 {
		p.stopped.Add(1)
		go func() {
			defer p.stopped.Done()
			t := time.NewTicker(tick)
			defer t.Stop()
			for {
				select {
				case <-p.stop:
					return
				case <-t.C:
					p.mu.Lock()
					p.draw(true)
					p.mu.Unlock()
				}
			}
		}()
	}
	return p
}

// Discovered records that the provider's scopes are listed: n of them.
func (p *Progress) Discovered(n int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.listed, p.discovered = true, n
	p.draw(true)
}

// ScopeDone records one finished scope, the GPU instances it had and
// whether it failed.
func (p *Progress) ScopeDone(instances int, failed bool) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	p.instances += instances
	if failed {
		p.failed++
	}
	p.draw(p.done == p.discovered)
}

// Request counts one request made to the cloud (each attempt of a retried
// call counts). It is safe to call from any goroutine.
func (p *Progress) Request() {
	if p == nil {
		return
	}
	p.requests.Add(1)
}

// Finish stops the display, clears its line and writes the summary line:
// "aws: 17 scopes scanned, 34 GPU instances, 1 failed, 420 requests in 6.2s".
func (p *Progress) Finish() {
	if p == nil {
		return
	}
	close(p.stop)
	p.stopped.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.group != nil {
		p.group.finish(p.provider, p.summary())
		return
	}
	fmt.Fprintf(p.w, "\r\x1b[K%s\n", p.summary())
}

func (p *Progress) elapsed() string {
	d := p.now().Sub(p.start)
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Truncate(time.Second).String()
}

func (p *Progress) summary() string {
	parts := []string{fmt.Sprintf("%s scanned", plural(p.done, "scope")), plural(p.instances, "GPU instance")}
	if p.failed > 0 {
		parts = append(parts, fmt.Sprintf("%d failed", p.failed))
	}
	parts = append(parts, fmt.Sprintf("%s in %s", plural(int(p.requests.Load()), "request"), p.elapsed()))
	return p.provider + ": " + strings.Join(parts, ", ")
}

// status is the live line.
func (p *Progress) status() string {
	if !p.listed {
		return fmt.Sprintf("%s: listing scopes… %s requests, %s", p.provider, commas(int(p.requests.Load())), p.elapsed())
	}
	s := fmt.Sprintf("%s: %d/%d scopes, %s", p.provider, p.done, p.discovered, plural(p.instances, "GPU instance"))
	if p.failed > 0 {
		s += fmt.Sprintf(", %d failed", p.failed)
	}
	return s + fmt.Sprintf(", %s requests, %s", commas(int(p.requests.Load())), p.elapsed())
}

// draw redraws the line when it changed, at most once a tick unless force;
// it is cut to the terminal's width so that it never wraps.
func (p *Progress) draw(force bool) {
	now := p.now()
	if !force && now.Sub(p.lastDraw) < progressTick {
		return
	}
	line := p.status()
	if p.group != nil {
		if line != p.last {
			p.last, p.lastDraw = line, now
			p.group.update(p.provider, line)
		}
		return
	}
	line = fitLine(line, p.width)
	if line == p.last {
		return
	}
	p.last, p.lastDraw = line, now
	fmt.Fprintf(p.w, "\r\x1b[K%s", line)
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return commas(n) + " " + word + "s"
}

// commas writes n with thousands separators.
func commas(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
