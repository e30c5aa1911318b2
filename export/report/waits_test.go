package report

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fairledger/fairledger/export/query"
)

// TestWaitsByHand checks every figure of the section "Why did our jobs
// wait" against tinyPriority worked out by hand. Percentiles are
// nearest-rank: the ⌈p·n⌉-th of the n sorted waits.
//
// labA, waits per month (the rest of the cluster is labB; labC has none):
//
//	2025-01 lab 2001 2 h, 2003 6 h, 2002 10 h → n 3: median 2nd = 6.0, p90 ⌈2.7⌉ = 3rd = 10.0,
//	        rank 1: 2001, 2003 → 2/3 = 66.7 %
//	        rest 3008 1 h, 3006 3 h, 3005 5 h, 3001 7 h → n 4: median 2nd = 3.0,
//	        p90 ⌈3.6⌉ = 4th = 7.0, rank 1: 3 of 4 = 75.0 %
//	2025-02 lab 2004 12 h rank 4 → 12.0, 12.0, 0.0 %; rest 3007 0.5 h rank 1 → 0.5, 0.5, 100.0 %
//	2025-03 lab none; rest 3010 2 h rank 1, 3011 4 h rank 3 → median 1st = 2.0, p90 2nd = 4.0, 50.0 %
//	period  lab 2, 6, 10, 12 → median 2nd = 6.0, p90 4th = 12.0, 2/4 = 50.0 %
//	        rest 0.5, 1, 2, 3, 4, 5, 7 → median ⌈3.5⌉ = 4th = 3.0, p90 ⌈6.3⌉ = 7th = 7.0, 5/7 = 71.4 %
//	(2000, started before From, and 2009, at To, are outside the period.)
//
// labA's factors: it waited at S1 (2002) and S2 (2004), 2 snapshots; the
// others there are 3005, 3006, 3008 (S1) and 3007 (S2), 4 rows (S3 has no
// labA job; the submit row of 3005 at S1 is not a waiting job).
//
//	          lab (2 rows)               others (4 rows)                      lab − others
//	Age       (100+50)/2 = 75            (300+200+0+400)/4 = 225              −150
//	Assoc     10                         20                                   −10
//	FairShare (1000+2000)/2 = 1500       (4000+3000+1000+2500)/4 = 2625       −1125
//	JobSize   (50+25)/2 = 37.5           (50+25+50+25)/4 = 37.5               0
//	Partition (100+200)/2 = 150          (100+200+100+200)/4 = 150            0
//	QOS       0                          (0+500+0+500)/4 = 250                −250
//	TRES      (15+40)/2 = 27.5           (20+45+20+80)/4 = 41.25              −13.75
//	Site      0                          10/4 = 2.5                           −2.5
//	Nice      −(0+100)/2 = −50           0                                    −50
//	Priority  (1275+2225)/2 = 1750       (4490+4000+1190+3725)/4 = 3351.25    −1601.25
//
// The largest shortfall is fair share's, 1125 points.
//
// labB waited at S3 (3001), S1 (3005, 3006, 3008) and S2 (3007): 3
// snapshots, 5 rows against labA's 2 (the means above):
//
//	Age (10+300+200+0+400)/5 = 182, Assoc 20, FairShare 19500/5 = 3900,
//	JobSize 200/5 = 40, Partition 700/5 = 140, QOS 1000/5 = 200,
//	TRES 185/5 = 37, Site 10/5 = 2, Nice 0, Priority 22605/5 = 4521
//
// labB is behind only on partition: 150 − 140 = 10 points.
//
// labA's longest waits, longest first: 2004 (12 h), 2002 (10 h), 2003
// (6 h), 2001 (2 h).
//
//	2004 gpu, last snapshot S2: the other job waiting in gpu is 3007 alone,
//	  median priority 3725; gaps (3007 − 2004 at its start): age 400−60 = 340,
//	  assoc 10, fair share 2500−2000 = 500, QOS 500, TRES 80−40 = 40, nice
//	  0−(−100) = 100: fair share and QOS tie at 500, fair share is listed first.
//	2002 cpu, last snapshot S1: the others waiting in cpu are 3005 and 3008
//	  (3006 waited in gpu); lower medians: priority of 1190, 4490 → 1190, age
//	  of 0, 300 → 0, assoc 20, fair share of 1000, 4000 → 1000, job size 50,
//	  partition 100, TRES 20; gaps against 2002 (120 10 1000 50 100 0 15):
//	  assoc 10, TRES 5 (age −120).
//	2003 and 2001: nobody waiting at their last snapshots.
func TestWaitsByHand(t *testing.T) {
	t.Parallel()
	r := buildTiny(t, "labA", period)
	w := r.Waits
	if !w.Recorded || !w.LabRows {
		t.Fatalf("labA waits: recorded %v, lab rows %v", w.Recorded, w.LabRows)
	}
	h := int64(3600)
	want := []WaitMonth{
		{"2025-01", WaitStats{3, 2, 6 * h, 10 * h}, WaitStats{4, 3, 3 * h, 7 * h}},
		{"2025-02", WaitStats{1, 0, 12 * h, 12 * h}, WaitStats{1, 1, h / 2, h / 2}},
		{"2025-03", WaitStats{}, WaitStats{2, 1, 2 * h, 4 * h}},
		{"period", WaitStats{4, 2, 6 * h, 12 * h}, WaitStats{7, 5, 3 * h, 7 * h}},
	}
	if !slices.Equal(w.Months, want) {
		t.Errorf("labA waits per month\n got %+v\nwant %+v", w.Months, want)
	}
	c := w.Compare
	if c.Snapshots != 2 || c.LabRows != 2 || c.OtherRows != 4 {
		t.Errorf("labA comparison over %d snapshots, %d and %d rows; want 2, 2, 4", c.Snapshots, c.LabRows, c.OtherRows)
	}
	wantLab := Factors{75, 10, 1500, 37.5, 150, 0, 27.5, 0, -50}
	wantOthers := Factors{225, 20, 2625, 37.5, 150, 250, 41.25, 2.5, 0}
	for f := range numFactors {
		if !near(c.Lab[f], wantLab[f], 1e-12) || !near(c.Others[f], wantOthers[f], 1e-12) {
			t.Errorf("labA %s: lab %v others %v, want %v %v", f, c.Lab[f], c.Others[f], wantLab[f], wantOthers[f])
		}
	}
	if !near(c.LabPriority, 1750, 1e-12) || !near(c.OthersPriority, 3351.25, 1e-12) {
		t.Errorf("labA priority: lab %v others %v, want 1750 3351.25", c.LabPriority, c.OthersPriority)
	}
	if f, ok := c.Dominant(); !ok || f != FactorFairShare || !near(c.Shortfall(f), 1125, 1e-12) {
		t.Errorf("labA dominant %v %v (%v), want fair share 1125", f, ok, c.Shortfall(f))
	}
	if got, want := r.dominantText(), "Fair share held your jobs back most: 1125.0 priority points below the other jobs waiting with them on average."; got != want {
		t.Errorf("labA dominant sentence\n got %q\nwant %q", got, want)
	}

	var ids []int64
	for _, l := range w.Longest {
		ids = append(ids, l.JobID)
	}
	if !slices.Equal(ids, []int64{2004, 2002, 2003, 2001}) {
		t.Fatalf("labA longest waits %v, want [2004 2002 2003 2001]", ids)
	}
	l := w.Longest[0]
	if l.WaitSec != 12*h || l.Rank != 4 || l.Waiting != 4 || l.Priority != 2235 || l.Others != 1 || l.OthersPriority != 3725 ||
		!slices.Equal(l.Gaps(), []Factor{FactorFairShare, FactorQOS, FactorAge, FactorNice, FactorTRES, FactorAssoc}) {
		t.Errorf("2004: %+v, gaps %v", l, l.Gaps())
	}
	l = w.Longest[1]
	if l.Others != 2 || l.OthersPriority != 1190 || l.OthersFactors != (Factors{0, 20, 1000, 50, 100, 0, 20, 0, 0}) ||
		!slices.Equal(l.Gaps(), []Factor{FactorAssoc, FactorTRES}) {
		t.Errorf("2002: %+v, gaps %v", l, l.Gaps())
	}
	for _, l := range w.Longest[2:] {
		if l.Others != 0 || l.Snapshot == nil || l.Gaps() != nil {
			t.Errorf("%d: %d others, snapshot %v, want none waiting at a snapshot", l.JobID, l.Others, l.Snapshot)
		}
	}
	lines := []string{
		"Job 2004 (alice, gpu) waited 12.0 hours before it started on 2025-02-10 06:00 UTC with 3 jobs of higher priority " +
			"still waiting in gpu (it went ahead of them: backfill, or they did not fit). Its priority then was 2235; the 1 " +
			"other job waiting in gpu at the last snapshot before it started (2025-02-10 00:00 UTC) had priority 3725, and it " +
			"was furthest behind on fair share (500.0 points below that job's) and QOS (500.0 points).",
		"Job 2002 (bob, cpu) waited 10.0 hours before it started on 2025-01-20 09:00 UTC with 1 job of higher priority " +
			"still waiting in cpu (it went ahead of it: backfill, or it did not fit). Its priority then was 1295; the 2 other " +
			"jobs waiting in cpu at the last snapshot before it started (2025-01-20 00:00 UTC) had a median priority of 1190, " +
			"and it was furthest behind on association (10.0 points below their median) and TRES (5.0 points).",
		"Job 2003 (alice, cpu) waited 6.0 hours before it started on 2025-01-25 12:00 UTC, the only job waiting in cpu. " +
			"Its priority then was 2500; no other job was waiting in cpu at the last snapshot before it started (2025-01-25 00:00 UTC).",
		"Job 2001 (alice, cpu) waited 2.0 hours before it started on 2025-01-10 06:00 UTC, first in line of the 2 jobs " +
			"waiting in cpu. Its priority then was 3000; no other job was waiting in cpu at the last snapshot before it " +
			"started (2025-01-10 00:00 UTC).",
	}
	for i, want := range lines {
		if got := w.Longest[i].line(); got != want {
			t.Errorf("line %d\n got %q\nwant %q", i, got, want)
		}
	}

	// labB: January against labA's, and the one factor it is behind on.
	b := buildTiny(t, "labB", period).Waits
	if got, want := b.Months[0], (WaitMonth{"2025-01", WaitStats{4, 3, 3 * h, 7 * h}, WaitStats{3, 2, 6 * h, 10 * h}}); got != want {
		t.Errorf("labB January %+v, want %+v", got, want)
	}
	wantB := Factors{182, 20, 3900, 40, 140, 200, 37, 2, 0}
	if bc := b.Compare; bc.Snapshots != 3 || bc.LabRows != 5 || bc.OtherRows != 2 || bc.Lab != wantB ||
		bc.Others != wantLab || bc.LabPriority != 4521 {
		t.Errorf("labB comparison %+v, want 3 snapshots, 5 and 2 rows, lab %v, others %v", bc, wantB, wantLab)
	}
	if f, ok := b.Compare.Dominant(); !ok || f != FactorPartition || b.Compare.Shortfall(f) != 10 {
		t.Errorf("labB dominant %v %v, want partition 10", f, ok)
	}

	// --longest 2 keeps the two longest.
	r2 := buildTiny(t, "labA", Options{From: period.From, To: period.To, LongestWaits: 2})
	if len(r2.Waits.Longest) != 2 || r2.Waits.Longest[0].JobID != 2004 || r2.Waits.Longest[1].JobID != 2002 {
		t.Errorf("LongestWaits 2: %+v", r2.Waits.Longest)
	}
}

// TestWaitsNoPriority: without the priority table, or with none of its
// rows in the period, the section is one sentence; a lab none of whose
// jobs waited or started (labC) gets its own sentence.
func TestWaitsNoPriority(t *testing.T) {
	t.Parallel()
	dir := fixtureDir(t, "nopriority", func() fxHistory {
		h := tinyHistory()
		h.priority = nil
		return h
	})
	none := "The history holds no job priorities for this period: runs record them with fairledger run --priority."
	r1, err := Build(t.Context(), dir, "labA", period)
	if err != nil {
		t.Fatal(err)
	}
	// 2025-03-05 to 2025-03-09: no job waited at a snapshot or started.
	r2 := buildTiny(t, "labA", Options{From: day("2025-03-05"), To: day("2025-03-10")})
	r3 := buildTiny(t, "labC", period)
	for _, tc := range []struct {
		name string
		r    *Report
		want string
	}{
		{"no table", r1, none},
		{"none in period", r2, none},
		{"labC", r3, "None of the lab's jobs waited at a fair-share snapshot or started in the period, so there is no wait to explain."},
	} {
		if got := tc.r.waitsParagraphs(); !slices.Equal(got, []string{tc.want}) {
			t.Errorf("%s: paragraphs %q, want %q", tc.name, got, tc.want)
		}
		if tabs := tc.r.waitsTables(); len(tabs) != 0 {
			t.Errorf("%s: %d tables, want none", tc.name, len(tabs))
		}
		var html, md bytes.Buffer
		if err := tc.r.WriteHTML(&html); err != nil {
			t.Fatal(err)
		}
		if err := tc.r.WriteMarkdown(&md); err != nil {
			t.Fatal(err)
		}
		sec := html.String()[strings.Index(html.String(), `<section id="waits">`):]
		sec = sec[:strings.Index(sec, "</section>")]
		if want := "<section id=\"waits\">\n<h2>Why did our jobs wait</h2>\n<p>" + esc(tc.want) + "</p>\n"; sec != want {
			t.Errorf("%s: HTML section\n%s\nwant\n%s", tc.name, sec, want)
		}
		if want := "\n## Why did our jobs wait\n\n" + mdText(tc.want) + "\n\n## Site settings"; !strings.Contains(md.String(), want) {
			t.Errorf("%s: Markdown lacks %q", tc.name, want)
		}
	}
}

// TestWaitsFormats: the Markdown and CSV forms carry every cell of the
// section's tables and each of its paragraphs; the HTML holds its heading
// and tables.
func TestWaitsFormats(t *testing.T) {
	t.Parallel()
	r := buildTiny(t, "labA", period)
	var html, md, cs bytes.Buffer
	for f, b := range map[string]*bytes.Buffer{FormatHTML: &html, FormatMarkdown: &md, FormatCSV: &cs} {
		if err := r.Write(b, f); err != nil {
			t.Fatal(err)
		}
	}
	cells := csvCells(t, &cs)
	tabs := r.waitsTables()
	if len(tabs) != 3 {
		t.Fatalf("labA: %d tables, want 3", len(tabs))
	}
	for _, tb := range tabs {
		if !strings.Contains(html.String(), `<table id="`+tb.ID+`">`) {
			t.Errorf("HTML lacks the table %s", tb.ID)
		}
		for _, row := range tb.Rows {
			for i := 1; i < len(row); i++ {
				if !cells[[4]string{tb.ID, row[0], tb.Head[i], row[i]}] {
					t.Errorf("CSV lacks %s/%s/%s = %q", tb.ID, row[0], tb.Head[i], row[i])
				}
			}
			if line := "| " + strings.Join(mdRow(row), " | ") + " |"; !strings.Contains(md.String(), line) {
				t.Errorf("Markdown lacks the row %s", line)
			}
		}
	}
	for i, p := range r.waitsParagraphs() {
		if !cells[[4]string{"wait_text", fmtCount(int64(i + 1)), "Text", p}] {
			t.Errorf("CSV lacks paragraph %d %q", i+1, p)
		}
		if !strings.Contains(md.String(), mdText(p)) || !strings.Contains(html.String(), esc(p)) {
			t.Errorf("Markdown or HTML lacks %q", p)
		}
	}
	// Hand-checked rows (TestWaitsByHand).
	for _, want := range []string{
		"| 2025-01 | 3 | 6.0 | 10.0 | 66.7% | 4 | 3.0 | 7.0 | 75.0% |",
		"| 2025-03 | 0 | – | – | – | 2 | 2.0 | 4.0 | 50.0% |",
		"| period | 4 | 6.0 | 12.0 | 50.0% | 7 | 3.0 | 7.0 | 71.4% |",
		"| Fair share | 1500.0 | 2625.0 | -1125.0 |",
		"| 1 | 2004 | alice | gpu | 2025-02-09 18:00 | 2025-02-10 06:00 | 12.0 | 4 of 4 | 2235 | 1 | 3725 | Fair share 500.0, QOS 500.0 |",
		"| 2 | 2002 | bob | cpu | 2025-01-19 23:00 | 2025-01-20 09:00 | 10.0 | 2 of 3 | 1295 | 2 | 1190 | Association 10.0, TRES 5.0 |",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("Markdown lacks %q", want)
		}
	}
}

// TestDominant: the largest shortfall wins, the factor listed first among
// equal ones; none when the lab is ahead or level on every factor.
func TestDominant(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		lab, other Factors
		want       Factor
		ok         bool
	}{
		{"fair share", Factors{FactorFairShare: 100}, Factors{FactorFairShare: 400, FactorAge: 200}, FactorFairShare, true},
		{"tie: age listed first", Factors{}, Factors{FactorAge: 300, FactorQOS: 300}, FactorAge, true},
		{"nice", Factors{FactorNice: -100}, Factors{}, FactorNice, true},
		{"ahead or level", Factors{FactorAge: 10, FactorFairShare: 5}, Factors{FactorFairShare: 5}, 0, false},
	} {
		c := FactorComparison{Snapshots: 1, LabRows: 1, OtherRows: 1, Lab: tc.lab, Others: tc.other}
		if f, ok := c.Dominant(); f != tc.want || ok != tc.ok {
			t.Errorf("%s: Dominant() = %v, %v; want %v, %v", tc.name, f, ok, tc.want, tc.ok)
		}
	}
	r := &Report{Waits: Waits{Recorded: true, LabRows: true, Compare: FactorComparison{Snapshots: 1, LabRows: 1, OtherRows: 1}}}
	if got, want := r.dominantText(), "No factor held your jobs back: on every factor their mean was at or above that of the other jobs waiting with them."; got != want {
		t.Errorf("level: %q, want %q", got, want)
	}
}

// TestNearestRank: the ⌈p·n⌉-th of the sorted values, of a set and of a
// set minus a subset (with repeated values).
func TestNearestRank(t *testing.T) {
	t.Parallel()
	all := []int64{1, 2, 2, 3, 5, 5, 8, 9, 9, 10}
	// median ⌈5⌉ = 5th = 5; p90 ⌈9⌉ = 9th = 9; p90 of 3 ⌈2.7⌉ = 3rd.
	if m, p := nearestRank(all, 1, 2), nearestRank(all, 9, 10); m != 5 || p != 9 {
		t.Errorf("nearestRank: median %d p90 %d, want 5 9", m, p)
	}
	if p := nearestRank([]int64{4, 6, 7}, 9, 10); p != 7 {
		t.Errorf("p90 of 4 6 7 = %d, want 7", p)
	}
	// all − {2, 5, 9} = 1 2 3 5 8 9 10: median ⌈3.5⌉ = 4th = 5, p90 ⌈6.3⌉ = 7th = 10.
	sub := []int64{2, 5, 9}
	if m, p := restNearestRank(all, sub, 1, 2), restNearestRank(all, sub, 9, 10); m != 5 || p != 10 {
		t.Errorf("restNearestRank: median %d p90 %d, want 5 10", m, p)
	}
	// all − {1, 2, 2, 3} = 5 5 8 9 9 10: median 3rd = 8.
	if m := restNearestRank(all, []int64{1, 2, 2, 3}, 1, 2); m != 8 {
		t.Errorf("restNearestRank: median %d, want 8", m)
	}
}

// TestWaitsQueryInDocs runs the analyst's query of docs/reports.md
// ("median wait and dominant factor per lab and month") on the fixture.
// By hand (tinyPriority), per account and UTC month of the rows:
//
//	labA 2024-12: 2000, 100 h; at 2024-12-31 labA is ahead on every factor → NULL
//	labA 2025-01: 2001 2 h, 2003 6 h, 2002 10 h → 3, median 6 h; S1 only: 2002 against
//	     3005, 3006, 3008: fair share (4000+3000+1000)/3 − 1000 = 1666.67 (QOS 333.33, age 66.67)
//	labA 2025-02: 2004, 12 h; S2: 2004 against 3007: fair share 500 and QOS 500 tie,
//	     fair share listed first
//	labA 2025-04: 2009, 50 h; 2025-04-01: fair share 60000 − 1 = 59999
//	labB 2025-01: 4 starts, median 2nd of 1 3 5 7 h = 3 h; S3 (no other job) and S1:
//	     3001, 3005, 3006, 3008 against 2002: job size 50 − (50+50+25+50)/4 = 6.25, the
//	     only shortfall (age 100 − 127.5, partition 100 − 125 are not)
//	labB 2025-02: 3007, 0.5 h; ahead of 2004 on every factor → NULL
//	labB 2025-03: 2 h and 4 h → median 2 h; no pending row in March → NULL
func TestWaitsQueryInDocs(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "reports.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i := strings.Index(s, "dominant factor per lab and month")
	if i < 0 {
		t.Fatal("docs/reports.md lacks the query \"median wait and dominant factor per lab and month\"")
	}
	s = s[i:]
	i = strings.Index(s, "```sql\n")
	j := strings.Index(s[i+7:], "```")
	if i < 0 || j < 0 {
		t.Fatal("docs/reports.md: no sql block after the query's title")
	}
	sql := s[i+7 : i+7+j]
	db, err := query.OpenDuckDB(t.Context(), tinyHistoryDir(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	res, err := db.Query(t.Context(), sql)
	if err != nil {
		t.Fatalf("the query of docs/reports.md: %v", err)
	}
	type row struct {
		lab, month string
		started    int64
		medianH    float64
		factor     string
		points     float64
	}
	want := []row{
		{"labA", "2024-12", 1, 100, "", math.NaN()},
		{"labA", "2025-01", 3, 6, "Fair share", 5000.0 / 3},
		{"labB", "2025-01", 4, 3, "Job size", 6.25},
		{"labA", "2025-02", 1, 12, "Fair share", 500},
		{"labB", "2025-02", 1, 0.5, "", math.NaN()},
		{"labB", "2025-03", 2, 2, "", math.NaN()},
		{"labA", "2025-04", 1, 50, "Fair share", 59999},
	}
	if len(res.Rows) != len(want) {
		t.Fatalf("the query of docs/reports.md: %d rows %v, want %d", len(res.Rows), res.Rows, len(want))
	}
	for k, w := range want {
		v := res.Rows[k]
		g := row{asString(v[0]), asString(v[1]), asInt(v[2]), asFloat(v[3]), asString(v[4]), asFloat(v[5])}
		if g.lab != w.lab || g.month != w.month || g.started != w.started || !near(g.medianH, w.medianH, 1e-12) ||
			g.factor != w.factor || !(near(g.points, w.points, 1e-9) || math.IsNaN(w.points) && v[5] == nil) {
			t.Errorf("row %d = %+v, want %+v", k, g, w)
		}
	}
}
