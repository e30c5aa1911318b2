package report

import (
	"bytes"
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fairledger/fairledger/export/query"
)

// nestedHistoryDir is the Fair Tree fixture with a lab inside a lab: frank
// directly under the department phys makes phys a lab too, over labC, and
// erin (labC) and frank run jobs and wait, so that phys's report holds
// labC's rows as well as its own.
func nestedHistoryDir(t *testing.T) string {
	return fixtureDir(t, "nested", func() fxHistory {
		h := tinyHistory()
		h.users = append(h.users, fxUser{"frank", "phys", 2})
		h.jobs = append(h.jobs,
			fxJob{"1007", "erin", "labC", "cpu", "normal", at("2025-01-15 00:00"), at("2025-01-16 00:00"), 2, 4096, 0, 2, 1},
			fxJob{"1008", "frank", "phys", "gpu", "normal", at("2025-02-20 00:00"), at("2025-02-21 12:00"), 1, 8192, 1, 11, 1})
		f := fxFactors{10, 5, 6000, 50, 100, 0, map[string]float64{"cpu": 5}, 0, 0}
		s1, s2 := day("2025-01-20"), day("2025-02-10")
		h.priority = append(h.priority,
			fxPending(s1, 4001, "erin", "labC", "cpu", 6170, f),
			fxPending(s2, 4002, "frank", "phys", "gpu", 6170, f),
			fxStart(at("2025-01-15 00:00"), 3*time.Hour, 1, 2, 4003, "erin", "labC", "cpu", 6170, f),
			fxStart(at("2025-02-20 00:00"), 9*time.Hour, 2, 3, 4004, "frank", "phys", "gpu", 6170, f))
		return h
	})
}

// openHistory opens a DuckDB session on the history in dir, closed when
// the test ends.
func openHistory(t *testing.T, dir string) *query.DB {
	t.Helper()
	db, err := query.OpenDuckDB(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// sharedDataset is LoadShared, failing the test on an error.
func sharedDataset(t *testing.T, db *query.DB, opt Options) *Dataset {
	t.Helper()
	d, err := LoadShared(context.Background(), db, opt)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// allReportFiles writes what report --all-accounts writes, every lab's
// report in each format and the index, into dir, from reports, which
// calls its fn with each lab's report in the order of labs.
func allReportFiles(t *testing.T, dir string, d *Dataset, labs []string,
	reports func(fn func(i int, r *Report) error) error) {
	t.Helper()
	files, err := FileNames(labs)
	if err != nil {
		t.Fatal(err)
	}
	index := make([]IndexEntry, len(labs))
	err = reports(func(i int, r *Report) error {
		if r.Account != labs[i] {
			t.Errorf("report %d is %q's, want %q's", i, r.Account, labs[i])
		}
		for _, f := range []string{FormatHTML, FormatMarkdown, FormatCSV} {
			var b bytes.Buffer
			if err := r.Write(&b, f); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dir, files[i]+"."+f), b.Bytes(), 0o644); err != nil {
				return err
			}
		}
		index[i] = IndexEntry{Account: labs[i], File: files[i] + "." + FormatHTML}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := d.WriteIndex(&b, index); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, IndexName+".html"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// readDir returns the files of dir by name.
func readDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

// TestReportsInBatches: the reports of every lab written a batch of 1, 2
// or more labs than there are at a time, or of 1 or 16 associations
// (Reports), are, file for file and byte for byte, those of one dataset
// holding every lab's rows (Load of all labs, then Report), on the
// fixtures (a lab inside a lab among them) and the demo cluster, whose
// priorities make the waits section compare each lab with the rest of
// the cluster.
func TestReportsInBatches(t *testing.T) {
	t.Parallel()
	histories := []struct {
		name string
		dir  func(*testing.T) string
		opt  Options
	}{
		{"tiny", tinyHistoryDir, period},
		{"classic", classicHistoryDir, period},
		{"nested", nestedHistoryDir, period},
		{"demo", demoHistoryDir, Options{}},
	}
	for _, h := range histories {
		t.Run(h.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := openHistory(t, h.dir(t))
			all, err := Load(ctx, db, nil, h.opt)
			if err != nil {
				t.Fatal(err)
			}
			labs := all.Labs()
			if len(labs) < 3 {
				t.Fatalf("labs %v: want at least 3, for batches of 2 to split them", labs)
			}
			onePass := t.TempDir()
			allReportFiles(t, onePass, all, labs, func(fn func(int, *Report) error) error {
				for i, lab := range labs {
					r, err := all.Report(lab)
					if err != nil {
						return err
					}
					if err := fn(i, r); err != nil {
						return err
					}
				}
				return nil
			})
			want := readDir(t, onePass)
			if len(want) != 3*len(labs)+1 {
				t.Fatalf("one pass wrote %d files, want %d", len(want), 3*len(labs)+1)
			}
			for _, b := range []struct{ labs, assocs int }{{labs: 1}, {labs: 2}, {labs: len(labs) + 1}, {assocs: 1}, {assocs: 16}} {
				opt := h.opt
				opt.batchLabs, opt.batchAssocs = b.labs, b.assocs
				d := sharedDataset(t, db, opt)
				dir := t.TempDir()
				allReportFiles(t, dir, d, d.Labs(), func(fn func(int, *Report) error) error {
					return d.Reports(ctx, db, d.Labs(), fn)
				})
				got := readDir(t, dir)
				for _, name := range slices.Sorted(maps.Keys(want)) {
					if !bytes.Equal(got[name], want[name]) {
						t.Errorf("batches of %+v: %s differs from the one-pass file", b, name)
					}
				}
				if len(got) != len(want) {
					t.Errorf("batches of %+v: %d files, want %d", b, len(got), len(want))
				}
			}
		})
	}
}

// TestLoadSharedHoldsNoLab: a dataset of LoadShared lists the labs but
// builds no report itself (Reports reads their rows).
func TestLoadSharedHoldsNoLab(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openHistory(t, tinyHistoryDir(t))
	d := sharedDataset(t, db, period)
	if got := d.Labs(); !slices.Equal(got, []string{"labA", "labB", "labC"}) {
		t.Errorf("Labs() = %v, want [labA labB labC]", got)
	}
	if _, err := d.Report("labA"); err == nil || !strings.Contains(err.Error(), `account "labA" was not loaded`) {
		t.Errorf("Report(labA) error = %v, want not loaded", err)
	}
	if err := d.Reports(ctx, db, []string{"labA", "nope"}, func(int, *Report) error { return nil }); err == nil ||
		!strings.Contains(err.Error(), `account "nope" is not in the association tree`) {
		t.Errorf("Reports(labA, nope) error = %v, want nope not in the tree", err)
	}
}

// TestBatches: consecutive labs share a batch while their associations
// fit (tiny: labA with alice and bob is 3, labB 3, labC with erin 2), a
// larger lab is alone, and batchLabs counts labs whatever their size.
func TestBatches(t *testing.T) {
	t.Parallel()
	db := openHistory(t, tinyHistoryDir(t))
	tests := []struct {
		labs, assocs int
		want         [][]string
	}{
		{assocs: 512, want: [][]string{{"labA", "labB", "labC"}}},
		{assocs: 6, want: [][]string{{"labA", "labB"}, {"labC"}}},
		{assocs: 5, want: [][]string{{"labA"}, {"labB", "labC"}}},
		{assocs: 2, want: [][]string{{"labA"}, {"labB"}, {"labC"}}},
		{assocs: 1, want: [][]string{{"labA"}, {"labB"}, {"labC"}}},
		{labs: 2, want: [][]string{{"labA", "labB"}, {"labC"}}},
		{labs: 1, assocs: 512, want: [][]string{{"labA"}, {"labB"}, {"labC"}}},
	}
	for _, tt := range tests {
		opt := period
		opt.batchLabs, opt.batchAssocs = tt.labs, tt.assocs
		d := sharedDataset(t, db, opt)
		got, err := d.batches(d.Labs())
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(got, tt.want, slices.Equal) {
			t.Errorf("batches(labs %d, assocs %d) = %v, want %v", tt.labs, tt.assocs, got, tt.want)
		}
	}
}
