package report

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/recommend"
	"github.com/gpufinops/gpufinops/pkg/testutil"
)

func TestWriteHTMLGolden(t *testing.T) {
	testutil.AssertGolden(t, "testdata/report.html", []byte(write(t, testReport(), "html", PrintOptions{})))
}

// chartSVG returns the markup of the chart figure with id.
func chartSVG(t *testing.T, doc, id string) string {
	t.Helper()
	start := strings.Index(doc, `<figure class="chart" id="`+id+`">`)
	if start < 0 {
		t.Fatalf("no chart %s", id)
	}
	end := strings.Index(doc[start:], "</figure>")
	if end < 0 {
		t.Fatalf("chart %s is not closed", id)
	}
	return doc[start : start+end]
}

func TestWriteHTMLStructure(t *testing.T) {
	doc := write(t, testReport(), "html", PrintOptions{})
	for _, want := range []string{
		"<!DOCTYPE html>", `<html lang="en">`, `<meta charset="utf-8">`, "<style>",
		`<section id="summary">`, `<section id="charts">`, `<section id="recommendations">`, `<section id="warnings">`,
		`id="summary-current"`, `id="summary-savings"`, `<h3 id="strategy-idle-stop">`, `<tr id="rec-spot-gpu-train-01">`,
		"</html>\n",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("no %q in the HTML report", want)
		}
	}
	// Self-contained: no script, no external resource of any kind.
	for _, re := range []string{`(?i)https?:`, `(?i)<script`, `(?i)\bsrc=`, `(?i)\bhref=`, `(?i)url\(`, `(?i)@import`, `//[a-z0-9.-]+\.[a-z]{2,}`} {
		if m := regexp.MustCompile(re).FindString(doc); m != "" {
			t.Errorf("the HTML report references something outside it: %q matches %s", m, re)
		}
	}
	for _, id := range HTMLCharts {
		if n := strings.Count(chartSVG(t, doc, id), "<rect"); n == 0 {
			t.Errorf("chart %s has no bars", id)
		}
	}
	// Summary first: the summary precedes the charts, which precede the details.
	if !(strings.Index(doc, `id="summary"`) < strings.Index(doc, `id="charts"`) &&
		strings.Index(doc, `id="charts"`) < strings.Index(doc, `id="recommendations"`)) {
		t.Error("sections out of order")
	}
}

func TestWriteHTMLEscapes(t *testing.T) {
	r := testReport()
	r.Source.Fleet = `<script>alert("x")</script>`
	r.Recommendations[0].Action = "a < b & c"
	doc := write(t, r, "html", PrintOptions{})
	if strings.Contains(doc, "<script") {
		t.Error("fleet name not escaped")
	}
	if !strings.Contains(doc, "a &lt; b &amp; c") {
		t.Error("action not escaped")
	}
}

func TestWriteHTMLEmpty(t *testing.T) {
	r := New(recommend.Plan{Policy: recommend.DefaultPolicy()}, Meta{GeneratedAt: testutil.FixedNow, FleetName: "empty"})
	doc := write(t, r, "html", PrintOptions{})
	if !strings.Contains(doc, "No savings found.") || !strings.Contains(doc, "No data in this report.") {
		t.Errorf("empty report:\n%s", doc)
	}
	if strings.Contains(doc, `id="warnings"`) {
		t.Error("a warnings section without warnings")
	}
}

// chromiumFlags keep headless Chromium off the network: no background
// services, no QUIC, and every host name resolving to nothing.
var chromiumFlags = []string{
	"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync",
	"--disable-default-apps", "--disable-extensions", "--host-resolver-rules=MAP * ~NOTFOUND",
}

// layoutProbe runs in a copy of the report in the browser (the report itself
// has no script) and measures what a person would see: chart labels that
// overlap or leave their chart, boxes whose text spills out, anything wider
// than the page. It writes its findings as JSON into <pre id="layout">.
const layoutProbe = `<script>
(function () {
  const res = {width: window.innerWidth, pageOverflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
    overlaps: [], cut: [], charts: 0, labels: 0, minLabelPx: 1e9, bars: {}};
  const vw = document.documentElement.clientWidth;
  const what = e => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + " " + JSON.stringify((e.textContent || "").trim().slice(0, 40));
  const meets = (a, b) => a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
  document.querySelectorAll("figure.chart svg").forEach(svg => {
    res.charts++;
    const box = svg.getBoundingClientRect();
    res.bars[svg.parentNode.id] = [...svg.querySelectorAll("rect")].filter(r => r.getBoundingClientRect().height > 0).length;
    const texts = [...svg.querySelectorAll("text")].map(t => [t, t.getBoundingClientRect()]);
    texts.forEach(([t, r]) => {
      res.labels++;
      res.minLabelPx = Math.min(res.minLabelPx, r.height);
      if (r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5)
        res.cut.push(what(t) + " leaves its chart " + svg.parentNode.id);
    });
    for (let i = 0; i < texts.length; i++)
      for (let j = i + 1; j < texts.length; j++)
        if (meets(texts[i][1], texts[j][1]))
          res.overlaps.push(what(texts[i][0]) + " and " + what(texts[j][0]) + " in " + svg.parentNode.id);
  });
  document.body.querySelectorAll("*").forEach(e => {
    if (e.closest("svg") || e.tagName === "SCRIPT") return;
    const r = e.getBoundingClientRect();
    if (r.width > 0 && (r.right > vw + 0.5 || r.left < -0.5)) res.cut.push(what(e) + " reaches past the page (" + Math.round(r.left) + "–" + Math.round(r.right) + " of " + vw + ")");
  });
  document.querySelectorAll("td, th, .card, dt, dd, h1, h2, h3, figcaption, li, p").forEach(e => {
    if (e.scrollWidth > e.clientWidth + 1) res.cut.push(what(e) + " spills out of its box (" + e.scrollWidth + " > " + e.clientWidth + ")");
  });
  const pre = parent.document.createElement("pre");
  pre.id = "layout";
  pre.textContent = JSON.stringify(res);
  parent.document.body.appendChild(pre);
})();
</script>`

// framed puts a page in an iframe width px wide, since headless Chromium's
// window is at least 500 px: the page inside is laid out, media queries
// included, at the iframe's width. srcdoc gives the frame the page's origin,
// so that the probe in it can write to the page.
func framed(doc string, width int) string {
	return fmt.Sprintf(`<!DOCTYPE html><html><head><meta charset="utf-8"><style>body{margin:0}iframe{border:0;display:block}</style></head>`+
		`<body><iframe width="%d" height="2400" srcdoc="%s"></iframe></body></html>`, width, html.EscapeString(doc))
}

// layoutResult is what layoutProbe found.
type layoutResult struct {
	Width        int      `json:"width"`
	PageOverflow int      `json:"pageOverflow"`
	Overlaps     []string `json:"overlaps"`
	Cut          []string `json:"cut"`
	Charts       int      `json:"charts"`
	Labels       int      `json:"labels"`
	MinLabelPx   float64  `json:"minLabelPx"`
	// Bars counts the drawn bars (rects of positive size) per chart.
	Bars map[string]int `json:"bars"`
}

// longLabelReport is the test report with the labels that test a layout:
// a team name longer than a chart's label column, a long resource ID.
func longLabelReport() *Report {
	r := testReport()
	if r.Allocation != nil && len(r.Allocation.ByTeam) > 0 {
		r.Allocation.ByTeam[0].Key = "machine-learning-platform-inference-europe"
	}
	r.Recommendations[0].ResourceID = "i-0123456789abcdef0-with-a-long-name-for-the-phone-layout"
	return r
}

// TestHTMLRendersInChromium opens the report in headless Chromium, offline,
// at a desktop (1400 px) and a phone (390 px) width, checks that every chart
// is drawn, and measures the layout in the page: no chart labels that
// overlap or are cut, no text spilling out of its box, nothing wider than
// the page. It skips where /usr/bin/chromium is missing (.ci/run installs
// Debian's chromium); GPUFINOPS_KEEP_SCREENSHOT=DIR keeps the screenshots.
func TestHTMLRendersInChromium(t *testing.T) {
	const chromium = "/usr/bin/chromium"
	if _, err := os.Stat(chromium); err != nil {
		t.Skip("no " + chromium + "; .ci/run installs Debian's chromium")
	}
	if testing.Short() {
		t.Skip("starts a browser")
	}
	dir := t.TempDir()
	doc := write(t, longLabelReport(), "html", PrintOptions{})
	probed := strings.Replace(doc, "</body>", layoutProbe+"\n</body>", 1)
	browse := func(file string, args ...string) []byte {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		profile, err := os.MkdirTemp(dir, "profile")
		if err != nil {
			t.Fatal(err)
		}
		all := append(append(append([]string{}, chromiumFlags...), "--user-data-dir="+profile), args...)
		cmd := exec.CommandContext(ctx, chromium, append(all, "file://"+file)...)
		cmd.Env = append(os.Environ(), "HOME="+dir)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("chromium %v: %v\n%s", args, err, stderr.String())
		}
		return out
	}

	for _, width := range []int{1400, 390} {
		t.Run(strconv.Itoa(width)+"px", func(t *testing.T) {
			size := fmt.Sprintf("--window-size=%d,2400", max(width, 500))
			page := filepath.Join(dir, fmt.Sprintf("probe-%d.html", width))
			if err := os.WriteFile(page, []byte(framed(probed, width)), 0o644); err != nil {
				t.Fatal(err)
			}
			dom := string(browse(page, "--dump-dom", size))
			m := regexp.MustCompile(`<pre id="layout">(.*?)</pre>`).FindStringSubmatch(dom)
			if m == nil {
				t.Fatal("the layout probe did not run")
			}
			var res layoutResult
			if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &res); err != nil {
				t.Fatalf("layout result %q: %v", m[1], err)
			}
			t.Logf("%d px: %d charts, %d labels (smallest %.1f px high), page overflow %d px, %d overlaps, %d cut",
				res.Width, res.Charts, res.Labels, res.MinLabelPx, res.PageOverflow, len(res.Overlaps), len(res.Cut))
			if res.Width != width {
				t.Errorf("the page was laid out %d px wide, want %d", res.Width, width)
			}
			if res.Charts != len(HTMLCharts) || res.Labels < 30 {
				t.Errorf("measured %d charts and %d labels", res.Charts, res.Labels)
			}
			for id, bars := range res.Bars {
				if bars == 0 {
					t.Errorf("chart %s has no bars drawn", id)
				}
			}
			if res.PageOverflow > 0 {
				t.Errorf("the page is %d px wider than the window", res.PageOverflow)
			}
			for _, o := range res.Overlaps {
				t.Errorf("overlapping labels: %s", o)
			}
			for _, c := range res.Cut {
				t.Errorf("cut: %s", c)
			}
			if res.MinLabelPx < 7 {
				t.Errorf("chart labels %.1f px high: too small to read", res.MinLabelPx)
			}

			shot := filepath.Join(dir, fmt.Sprintf("report-%d.png", width))
			plain := filepath.Join(dir, fmt.Sprintf("report-%d.html", width))
			if err := os.WriteFile(plain, []byte(framed(doc, width)), 0o644); err != nil {
				t.Fatal(err)
			}
			browse(plain, "--screenshot="+shot, fmt.Sprintf("--window-size=%d,2400", width))
			info, err := os.Stat(shot)
			if err != nil || info.Size() < 10_000 {
				t.Fatalf("no screenshot (%v, %v bytes)", err, info)
			}
			if keep := os.Getenv("GPUFINOPS_KEEP_SCREENSHOT"); keep != "" {
				data, _ := os.ReadFile(shot)
				_ = os.WriteFile(filepath.Join(keep, filepath.Base(shot)), data, 0o644)
			}
		})
	}
}
