package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/export/whatif"
)

// whatIfResult is a comparison of 30 daily snapshots of labs A and B,
// one user each, whose users' FairShare the replay swaps halfway, and a
// name that must stay text.
func whatIfResult(t *testing.T) *whatif.Result {
	t.Helper()
	p := func(v float64) *float64 { return &v }
	rows := func(at time.Time, fsA, fsB, nuA float64) []record.FairshareRow {
		row := func(acct, user, parent string, isUser bool, fs *float64, nu float64) record.FairshareRow {
			return record.FairshareRow{Snapshot: at, Algorithm: "fair_tree", Account: acct, User: user, Parent: parent, IsUser: isUser,
				NormShares: p(0.5), RawUsage: p(10), NormUsage: p(nu), EffectvUsage: p(nu), FairShare: fs, LevelFS: p(0.5 / nu)}
		}
		return []record.FairshareRow{
			row("root", "", "", false, nil, 1),
			row("A", "", "root", false, nil, nuA),
			row("A", "ua", "A", true, p(fsA), 1),
			row("<b>B</b>", "", "root", false, nil, 1-nuA),
			row("<b>B</b>", "ub", "<b>B</b>", true, p(fsB), 1),
		}
	}
	c, err := whatif.New(whatif.Options{Cluster: "c", Change: []string{"PriorityDecayHalfLife=1-0"}})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	for d := range 30 {
		at := t0.AddDate(0, 0, d)
		alt := rows(at, 1, 0.5, 0.3)
		if d < 15 {
			alt = rows(at, 0.5, 1, 0.7)
		}
		if err := c.Add(at, rows(at, 0.5, 1, 0.6), alt); err != nil {
			t.Fatal(err)
		}
	}
	// Two jobs wait in one queue at the last snapshot; the replay swaps
	// them.
	job := func(id, prio int64, fs float64) record.PriorityRow {
		return record.PriorityRow{Event: record.EventPending, JobID: id, Partition: "p", Account: "A", User: "ua", Priority: prio, FairShareW: fs}
	}
	last := t0.AddDate(0, 0, 29)
	if err := c.AddQueue(last, []record.PriorityRow{job(1, 10, 5), job(2, 8, 3)}, []record.PriorityRow{job(1, 6, 1), job(2, 9, 4)}); err != nil {
		t.Fatal(err)
	}
	res, err := c.Result()
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestWhatIfHTMLInChromium renders a what-if page in headless Chromium:
// it loads without a page error, both labs' charts are drawn (the one
// that gains, then the one that loses), the tables of every lab and of
// the moved jobs have their rows, the hostile name is text, and
// screenshots at phone and desktop widths are plausible PNGs.
func TestWhatIfHTMLInChromium(t *testing.T) {
	bin := findChromium(t)
	var b bytes.Buffer
	if err := WriteWhatIfHTML(&b, whatIfResult(t)); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "whatif.html")
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := chromiumDOM(t, bin, file)
	charts := drawnCharts(dom)
	for _, id := range []string{"fairshare_0", "normusage_0", "fairshare_1", "normusage_1"} {
		if !charts[id] {
			t.Errorf("chart %s is missing or has no drawn element (charts: %v)", id, charts)
		}
	}
	if len(charts) != 4 {
		t.Errorf("charts in the DOM %v, want 4", charts)
	}
	if !tableRe("labs_table").MatchString(dom) || !tableRe("settings").MatchString(dom) || !tableRe("moved_jobs").MatchString(dom) {
		t.Errorf("the labs, settings or moved jobs table is not in the DOM with rows")
	}
	if strings.Contains(dom, "<b>B</b>") || !strings.Contains(dom, "&lt;b&gt;B&lt;/b&gt;") {
		t.Errorf("the lab name <b>B</b> became markup")
	}
	for _, want := range []string{"Gain most: A (+0.250000).", "Lose most: &lt;b&gt;B&lt;/b&gt; (-0.250000).", "<h2>What a replay cannot know</h2>"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the DOM lacks %q", want)
		}
	}
	chromiumShots(t, bin, file, "1280,2400")
}
