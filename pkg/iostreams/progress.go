package iostreams

import (
	"fmt"
	"io"
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
	return startProgress(s.ErrOut, s.TerminalWidth(), provider, time.Now, progressTick)
}

func startProgress(w io.Writer, width int, provider string, now func() time.Time, tick time.Duration) *Progress {
	p := &Progress{w: w, width: width, provider: provider, now: now, start: now(), stop: make(chan struct{})}
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
	if max := p.width - 1; max > 0 && utf8.RuneCountInString(line) > max {
		line = string([]rune(line)[:max-1]) + "…"
	}
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
