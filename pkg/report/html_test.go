package report

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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

// TestHTMLRendersInChromium opens the report in headless Chromium, offline,
// and checks that every chart's bars are in the rendered DOM and that a
// screenshot is taken. It skips where /usr/bin/chromium is missing (.ci/run
// installs Debian's chromium).
func TestHTMLRendersInChromium(t *testing.T) {
	const chromium = "/usr/bin/chromium"
	if _, err := os.Stat(chromium); err != nil {
		t.Skip("no " + chromium + "; .ci/run installs Debian's chromium")
	}
	if testing.Short() {
		t.Skip("starts a browser")
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	if err := os.WriteFile(page, []byte(write(t, testReport(), "html", PrintOptions{})), 0o644); err != nil {
		t.Fatal(err)
	}
	browse := func(args ...string) []byte {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		profile, err := os.MkdirTemp(dir, "profile")
		if err != nil {
			t.Fatal(err)
		}
		all := append(append(append([]string{}, chromiumFlags...), "--user-data-dir="+profile), args...)
		cmd := exec.CommandContext(ctx, chromium, append(all, "file://"+page)...)
		cmd.Env = append(os.Environ(), "HOME="+dir)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("chromium %v: %v\n%s", args, err, stderr.String())
		}
		return out
	}

	dom := string(browse("--dump-dom"))
	for _, id := range HTMLCharts {
		if n := strings.Count(chartSVG(t, dom, id), "<rect"); n == 0 {
			t.Errorf("chart %s has no bars in the rendered DOM", id)
		}
	}
	if !strings.Contains(dom, "GPU cost report: ") {
		t.Error("the rendered DOM lacks the title")
	}

	shot := filepath.Join(dir, "out.png")
	browse("--screenshot="+shot, "--window-size=1200,2000")
	info, err := os.Stat(shot)
	if err != nil || info.Size() < 10_000 {
		t.Fatalf("no screenshot (%v, %v bytes)", err, info)
	}
	if keep := os.Getenv("GPUFINOPS_KEEP_SCREENSHOT"); keep != "" {
		data, _ := os.ReadFile(shot)
		_ = os.WriteFile(keep, data, 0o644)
	}
}
