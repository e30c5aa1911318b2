package pipeline_test

import (
	"cmp"
	"context"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/pipeline"
	"github.com/fairledger/fairledger/schemas"
)

// TestMonthsInPieces: months merged and written in pieces of a few dozen
// records — one run over the whole window, and night by night (jobs given
// again, running across nights and the month boundary) — give the same
// jobs, usage, fair-share and association rows, bit for bit, as one run
// holding each month in one table; only the jobs are cut into more
// segments.
func TestMonthsInPieces(t *testing.T) {
	t.Parallel()
	dir, from, end := nightlyCluster(t, 3000)
	in := siteInputs(t, dir, filepath.Join(dir, "sacct.psv"))
	whole := t.TempDir()
	if _, err := pipeline.Run(context.Background(), in, runOpts(whole, end)); err != nil {
		t.Fatal(err)
	}
	tables := []string{schemas.TableJobs, schemas.TableUsage, schemas.TableFairshare, schemas.TableAssociations}
	for _, piece := range []int{64, 1001} {
		hist := t.TempDir()
		if _, err := pipeline.Run(context.Background(), in, pipeline.WithPieceRecords(runOpts(hist, end), piece)); err != nil {
			t.Fatal(err)
		}
		for _, table := range tables {
			sameFiles(t, table, tableFiles(t, hist, table), tableFiles(t, whole, table))
		}
		mh, mw := manifestOf(t, hist), manifestOf(t, whole)
		got, want := len(mh.Files(schemas.TableJobs, "")), len(mw.Files(schemas.TableJobs, ""))
		if got <= want {
			t.Errorf("pieces of %d: %d jobs segments, want more than the %d of whole months", piece, got, want)
		}
		verifyClean(t, hist)
	}

	nightly := t.TempDir()
	nightsWith(t, dir, nightly, from, end, func(h string, to time.Time) pipeline.Options {
		return pipeline.WithPieceRecords(runOpts(h, to), 64)
	})
	for _, table := range tables[1:] {
		sameFiles(t, table, tableFiles(t, nightly, table), tableFiles(t, whole, table))
	}
	verifyClean(t, nightly)
	g, w := sortedJobs(jobsWithoutSource(t, nightly, "synth")), sortedJobs(jobsWithoutSource(t, whole, "synth"))
	if len(g) != len(w) {
		t.Fatalf("jobs: %d rows night by night in pieces, want %d", len(g), len(w))
	}
	for i := range w {
		if !reflect.DeepEqual(g[i], w[i]) {
			t.Fatalf("jobs row %d:\n got %v\nwant %v", i, g[i], w[i])
		}
	}
}

// verifyClean fails the test unless verify finds no problem in hist.
func verifyClean(t *testing.T, hist string) {
	t.Helper()
	h, err := history.Open(hist)
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := h.Verify(""); err != nil || len(rep.Problems) != 0 {
		t.Errorf("verify: %v %v", err, rep.Problems)
	}
}

// sortedJobs sorts rows into the jobs table's order, whatever segments
// they were read from.
func sortedJobs(rows []record.JobRow) []record.JobRow {
	slices.SortFunc(rows, func(a, b record.JobRow) int {
		return cmp.Or(cmp.Compare(a.Account, b.Account), cmp.Compare(a.User, b.User), a.Start.Compare(b.Start),
			cmp.Compare(a.JobIDRaw, b.JobIDRaw), cmp.Compare(a.JobID, b.JobID))
	})
	return rows
}
