package report

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// chromiumFlags run Debian's chromium headless as root in a sandbox with no
// network: no background connections, a fresh profile per run.
var chromiumFlags = []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
	"--enable-logging=stderr", "--v=0"}

// findChromium returns the chromium binary, skipping the test when there
// is none unless FAIRLEDGER_REQUIRE_CHROMIUM=1 (CI installs it with
// `apt-get install -y chromium`).
func findChromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("FAIRLEDGER_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("FAIRLEDGER_REQUIRE_CHROMIUM") == "1" {
		t.Fatal("chromium not found and FAIRLEDGER_REQUIRE_CHROMIUM=1 (install it: apt-get install -y chromium)")
	}
	t.Skip("chromium not found (apt-get install -y chromium); set FAIRLEDGER_REQUIRE_CHROMIUM=1 to fail instead")
	return ""
}

// runChromium runs chromium on a file with extra flags and returns its
// stdout and stderr.
func runChromium(t *testing.T, bin, file string, extra ...string) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := append(append(append([]string{}, chromiumFlags...), "--user-data-dir="+t.TempDir()), extra...)
	args = append(args, "file://"+file)
	cmd := exec.CommandContext(ctx, bin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\n%s", strings.Join(extra, " "), err, errb.String())
	}
	return out.String(), errb.String()
}

var (
	svgRe      = regexp.MustCompile(`(?s)<svg class="chart" id="([^"]+)".*?</svg>`)
	polylineRe = regexp.MustCompile(`<polyline[^>]* points="(\d[^"]*)"`)
	rectRe     = regexp.MustCompile(`<rect [^>]*height="([0-9.]+)"`)
	circleRe   = regexp.MustCompile(`<circle `)
	// pageErrRe matches what chromium logs for a page that failed: a
	// console message, a script error or a failed load.
	pageErrRe = regexp.MustCompile(`CONSOLE|Uncaught|net::ERR_|Failed to load|Not allowed to load`)
)

// drawnCharts returns, per chart id in the DOM, whether it has a drawn
// element: a polyline with points, a dot, or a bar of non-zero height.
func drawnCharts(dom string) map[string]bool {
	out := map[string]bool{}
	for _, m := range svgRe.FindAllStringSubmatch(dom, -1) {
		drawn := circleRe.MatchString(m[0])
		for _, p := range polylineRe.FindAllStringSubmatch(m[0], -1) {
			if len(strings.Fields(p[1])) >= 2 {
				drawn = true
			}
		}
		for _, r := range rectRe.FindAllStringSubmatch(m[0], -1) {
			if r[1] != "0.0" && r[1] != "0" {
				drawn = true
			}
		}
		out[m[1]] = drawn
	}
	return out
}

// chromiumCheck renders an HTML report in headless Chromium: the page
// loads without errors, the whole document is there, every chart in want
// is in the DOM with drawn elements, the section "Why did our jobs wait"
// is there with every table in tables, and screenshots at phone and
// desktop widths are plausible PNGs. It returns the desktop screenshot
// and the DOM.
func chromiumCheck(t *testing.T, bin, file string, want, tables []string, desktop string) (shot []byte, dom string) {
	t.Helper()
	dom = chromiumDOM(t, bin, file)
	charts := drawnCharts(dom)
	for _, id := range want {
		drawn, ok := charts[id]
		switch {
		case !ok:
			t.Errorf("chart %s missing from the DOM", id)
		case !drawn:
			t.Errorf("chart %s has no drawn element", id)
		}
	}
	if len(charts) != len(want) {
		t.Errorf("charts in the DOM %v, want %v", charts, want)
	}
	sec, ok := waitsSection(dom)
	if !ok {
		t.Errorf("the section %q is not in the DOM", waitsTitle)
	}
	for _, id := range tables {
		if !tableRe(id).MatchString(sec) {
			t.Errorf("table %s is not in the section %q of the DOM (or has no row)", id, waitsTitle)
		}
	}
	return chromiumShots(t, bin, file, desktop), dom
}

// chromiumDOM loads a page in headless Chromium and returns its DOM,
// failing the test on a page error or an incomplete document.
func chromiumDOM(t *testing.T, bin, file string) string {
	t.Helper()
	dom, logs := runChromium(t, bin, file, "--dump-dom")
	for _, line := range strings.Split(logs, "\n") {
		if pageErrRe.MatchString(line) {
			t.Errorf("chromium reports a page error: %s", line)
		}
	}
	if !strings.Contains(dom, "<footer>") || !strings.Contains(dom, "</body>") {
		t.Fatalf("dumped DOM is incomplete (%d bytes)", len(dom))
	}
	return dom
}

// chromiumShots takes screenshots of a page at phone and desktop widths,
// failing the test unless each is a plausible PNG, and returns the
// desktop one.
func chromiumShots(t *testing.T, bin, file, desktop string) (shot []byte) {
	t.Helper()
	for _, w := range []string{"390,2400", desktop} {
		png := filepath.Join(t.TempDir(), "shot.png")
		runChromium(t, bin, file, "--window-size="+w, "--screenshot="+png)
		data, err := os.ReadFile(png)
		if err != nil {
			t.Fatalf("screenshot: %v", err)
		}
		if !bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")) || len(data) < 10_000 {
			t.Errorf("screenshot at %s is not a plausible PNG (%d bytes)", w, len(data))
		}
		shot = data
	}
	return shot
}

// waitsSection returns the section "Why did our jobs wait" of a DOM.
func waitsSection(dom string) (string, bool) {
	i := strings.Index(dom, `<section id="waits">`+"\n<h2>"+waitsTitle+"</h2>")
	if i < 0 {
		return "", false
	}
	sec := dom[i:]
	if j := strings.Index(sec, "</section>"); j >= 0 {
		sec = sec[:j]
	}
	return sec, true
}

// tableRe matches a table of the report with at least one body row.
func tableRe(id string) *regexp.Regexp {
	return regexp.MustCompile(`<table id="` + regexp.QuoteMeta(id) + `">(?s:.*?)<tbody>\s*<tr><td`)
}

func writeReport(t *testing.T, r *Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := r.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), r.Account+".html")
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestHTMLInChromium renders the fixture's labs and one lab of the demo
// cluster (see demoLab) in headless Chromium.
//
// The committed screenshot testdata/report-demo.png is the demo lab's
// desktop screenshot; refresh it with
//
//	FAIRLEDGER_REPORT_SCREENSHOT=$PWD/export/report/testdata/report-demo.png \
//	    go test ./export/report -run TestHTMLInChromium/demo
func TestHTMLInChromium(t *testing.T) {
	t.Parallel()
	bin := findChromium(t)
	all := []string{"levelfs", "user-factor", "usage-share", "cpu-hours", "gpu-hours", "mem-hours"}
	waits := []string{"wait_month", "wait_factors", "longest_waits"}
	for _, lab := range []string{"labA", "labB"} {
		t.Run("fixture/"+lab, func(t *testing.T) {
			chromiumCheck(t, bin, writeReport(t, buildTiny(t, lab, period)), all, waits, "1200,4800")
		})
	}
	t.Run("demo", func(t *testing.T) {
		r := demoLab(t)
		// The demo runs with --priority: its lab's jobs waited, started and
		// are compared with the others.
		shot, _ := chromiumCheck(t, bin, writeReport(t, r), all, waits, "1200,5300")
		if out := os.Getenv("FAIRLEDGER_REPORT_SCREENSHOT"); out != "" {
			if err := os.WriteFile(out, shot, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("wrote %s (report of %s)", out, r.Account)
		}
	})
}

// demoLab returns the report of the demo cluster's lab that shows the most:
// among the labs that would need time to recover, the one with the most
// users (then the first by name).
func demoLab(t *testing.T) *Report {
	t.Helper()
	d := loadAll(t, demoHistoryDir(t), Options{})
	var best *Report
	for _, lab := range d.Labs() {
		r, err := d.Report(lab)
		if err != nil {
			t.Fatal(err)
		}
		if r.Recovery.State == RecoveryAfter && r.Total.GPUHours > 0 && (best == nil || len(r.Users) > len(best.Users)) {
			best = r
		}
	}
	if best == nil {
		t.Fatal("no demo lab needs time to recover")
	}
	return best
}

// TestDrawnCharts checks the DOM checker itself on hand-written SVG.
func TestDrawnCharts(t *testing.T) {
	t.Parallel()
	dom := `<svg class="chart" id="a"><polyline fill="none" points="1.0,2.0 3.0,4.0"/></svg>` +
		`<svg class="chart" id="b"><polyline points=""/></svg>` +
		`<svg class="chart" id="c"><rect x="1" y="2" width="3" height="0.0"/></svg>` +
		`<svg class="chart" id="d"><rect x="1" y="2" width="3" height="12.5"/></svg>` +
		`<svg class="chart" id="e"><circle cx="1" cy="2" r="3"/></svg>`
	got := drawnCharts(dom)
	want := map[string]bool{"a": true, "b": false, "c": false, "d": true, "e": true}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("drawn[%s] = %v, want %v", k, got[k], v)
		}
	}
}
