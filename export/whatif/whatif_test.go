package whatif

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/fairledger/fairledger/export/record"
)

func p(v float64) *float64 { return &v }

// snap builds a Fair Tree snapshot of root, labs A and B (one user each)
// with the users' FairShare and the labs' LevelFS given.
func snap(at time.Time, fsA, fsB, lfA, lfB float64) []record.FairshareRow {
	row := func(acct, user, parent string, isUser bool, fs, lf *float64) record.FairshareRow {
		return record.FairshareRow{Snapshot: at, Algorithm: "fair_tree", Account: acct, User: user, Parent: parent, IsUser: isUser,
			NormShares: p(0.5), RawUsage: p(10), NormUsage: p(0.5), EffectvUsage: p(0.5), FairShare: fs, LevelFS: lf}
	}
	return []record.FairshareRow{
		row("root", "", "", false, nil, nil),
		row("A", "", "root", false, nil, p(lfA)),
		row("A", "ua", "A", true, p(fsA), p(1)),
		row("B", "", "root", false, nil, p(lfB)),
		row("B", "ub", "B", true, p(fsB), p(1)),
	}
}

// TestComparison: two snapshots; lab A's user goes from FairShare 0.5
// and 0.5 recorded to 1 and 0.75 replayed (mean +0.375), B's from 1 and
// 1 to 0.5 and 0.5 (mean −0.5). The CSV has a line per association and
// snapshot, recorded beside replayed; the Markdown puts A first, names A
// as gaining and B as losing, and prints the last snapshot's values.
func TestComparison(t *testing.T) {
	t1, t2 := time.Date(2025, 3, 2, 0, 0, 0, 0, time.UTC), time.Date(2025, 3, 3, 0, 0, 0, 0, time.UTC)
	var csvOut, pqOut bytes.Buffer
	c, err := New(Options{Cluster: "c", Change: []string{"PriorityDecayHalfLife=1-0"}, CSV: &csvOut, Parquet: &pqOut,
		Recover: func(rows []record.FairshareRow, lab string, half int64, damp float64) (Recovery, error) {
			if lab == "A" {
				return Recovery{Days: float64(half) / 86400}, nil
			}
			return Recovery{Days: math.NaN(), Text: "within share"}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Add(t1, snap(t1, 0.5, 1, 0.8, 2), snap(t1, 1, 0.5, 1.5, 0.9)); err != nil {
		t.Fatal(err)
	}
	// The replay lacks B's user at t2 (a tree change), and has a user C/uc
	// the recording lacks.
	alt := snap(t2, 0.75, 0.5, 1.25, 0.7)[:4]
	alt = append(alt, record.FairshareRow{Snapshot: t2, Account: "C", User: "uc", Parent: "C", IsUser: true, FairShare: p(0.25)})
	if err := c.Add(t2, snap(t2, 0.5, 1, 0.8, 2), alt); err != nil {
		t.Fatal(err)
	}
	c.SetSettings(Settings{HalfLifeSec: 7 * 86400, CalcPeriodSec: 300, ResetPeriod: "NONE", Algorithm: "fair_tree", Dampening: 1},
		Settings{HalfLifeSec: 86400, CalcPeriodSec: 300, ResetPeriod: "NONE", Algorithm: "fair_tree", Dampening: 1})
	lines := strings.Split(strings.TrimSpace(csvOut.String()), "\n")
	if len(lines) != 1+5+6 || lines[0] != strings.Join(CSVHeader, ",") {
		t.Fatalf("csv: %d lines:\n%s", len(lines), csvOut.String())
	}
	for _, want := range []string{
		"2025-03-02T00:00:00Z,A,ua,,true,10,10,0.5,0.5,0.5,0.5,0.5,0.5,1,1,0.5,1",
		"2025-03-02T00:00:00Z,B,,,false,10,10,0.5,0.5,0.5,0.5,0.5,0.5,2,0.9,,",
		"2025-03-03T00:00:00Z,B,ub,,true,10,,0.5,,0.5,,0.5,,1,,1,",
		"2025-03-03T00:00:00Z,C,uc,,true,,,,,,,,,,,,0.25",
	} {
		found := false
		for _, l := range lines {
			found = found || l == want
		}
		if !found {
			t.Errorf("csv lacks %q:\n%s", want, csvOut.String())
		}
	}
	// The Parquet form holds the same rows.
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	rows, err := parquet.Read[Row](bytes.NewReader(pqOut.Bytes()), int64(pqOut.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(lines)-1 {
		t.Fatalf("parquet: %d rows, csv %d lines", len(rows), len(lines)-1)
	}
	for i := range rows {
		if got := strings.Join(rows[i].csvLine(), ","); got != lines[i+1] {
			t.Errorf("parquet row %d: %s, csv line %s", i, got, lines[i+1])
		}
	}
	labs, err := c.Labs()
	if err != nil {
		t.Fatal(err)
	}
	// C has no account row: no lab.
	if len(labs) != 2 || labs[0].Account != "A" || labs[1].Account != "B" {
		t.Fatalf("%d labs", len(labs))
	}
	a, b := labs[0], labs[1]
	if a.MeanFairShare != [2]float64{0.5, 0.875} || b.MeanFairShare != [2]float64{1, 0.5} {
		t.Errorf("mean FairShare A %v B %v, want [0.5 0.875] [1 0.5]", a.MeanFairShare, b.MeanFairShare)
	}
	if a.Replayed.LevelFS != 1.25 || a.Recorded.LevelFS != 0.8 || !math.IsNaN(b.Replayed.FairShare) || b.Recorded.FairShare != 1 {
		t.Errorf("last values A %+v %+v, B %+v %+v", a.Recorded, a.Replayed, b.Recorded, b.Replayed)
	}
	if a.Recovery[0].Days != 7 || a.Recovery[1].Days != 1 || b.Recovery[0].String() != "within share" || b.Recovery[1].String() != "no such lab" {
		t.Errorf("recoveries A %v B %v", a.Recovery, b.Recovery)
	}
	var md bytes.Buffer
	if err := c.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"2 snapshots compared, 2025-03-02 00:00 UTC to 2025-03-03 00:00 UTC.",
		"- `PriorityDecayHalfLife=1-0`",
		"| PriorityDecayHalfLife | 7-00:00:00 | 1-00:00:00 |",
		"Gain most: A (+0.375000).",
		"Lose most: B (-0.500000).",
		"| A | 0.500000 | 0.875000 | +0.375000 | 0.500000 | 0.750000 | 0.800000 | 1.250000 |",
		"## What a replay cannot know",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
}
