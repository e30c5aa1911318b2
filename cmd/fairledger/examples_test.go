package main

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/schemas"
)

// demoHistory runs `fairledger demo` once into a temp dir and returns it.
func demoHistory(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "demo")
	var out, errb bytes.Buffer
	if code := run([]string{"fairledger", "demo", "--history", dir}, &out, &errb); code != 0 {
		t.Fatalf("demo: exit %d\n%s", code, errb.String())
	}
	for _, want := range []string{"$ fairledger run", "$ fairledger sshare", "GPU-hours per lab per month", "Accounts (labs and schools) over their share", " report --history "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
	return dir
}

// sqlCSV runs a query through `fairledger sql --format csv`.
func sqlCSV(t *testing.T, hist, query string) [][]string {
	t.Helper()
	var out, errb bytes.Buffer
	// After "--": a query may start with a "--" comment.
	if code := run([]string{"fairledger", "sql", "--history", hist, "--format", "csv", "--", query}, &out, &errb); code != 0 {
		t.Fatalf("sql: exit %d\n%s", code, errb.String())
	}
	recs, err := csv.NewReader(&out).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs[1:]
}

// TestExampleQueriesInSQLDocs: every example query is in docs/sql.md verbatim.
func TestExampleQueriesInSQLDocs(t *testing.T) {
	doc, err := os.ReadFile("../../docs/sql.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range exampleQueries() {
		if !strings.Contains(string(doc), q.SQL) {
			t.Errorf("docs/sql.md lacks the example %q verbatim:\n%s", q.Title, q.SQL)
		}
	}
}

// TestExampleQueries runs docs/sql.md's queries on the demo history and
// checks each result against the same figure computed another way: GPU
// hours from the demo's sacct file itself, the fair-share figures from the
// Parquet files read with parquet-go.
func TestExampleQueries(t *testing.T) {
	hist := demoHistory(t)
	qs := exampleQueries()

	t.Run("gpu hours", func(t *testing.T) {
		want := gpuHoursFromSacct(t, filepath.Join(hist, "input", "sacct.psv"), demoOptions().Now)
		got := sqlCSV(t, hist, qs[0].SQL)
		if len(got) != len(want) || len(got) < 20 {
			t.Fatalf("%d rows, want %d", len(got), len(want))
		}
		for _, r := range got {
			k := r[0] + " " + r[1]
			g, _ := strconv.ParseFloat(r[2], 64)
			if w, ok := want[k]; !ok || math.Abs(g-w) > 0.051 {
				t.Errorf("%s: %s GPU-hours, sacct gives %.2f", k, r[2], want[k])
			}
		}
	})

	rows := fairshareRows(t, hist, "demo")
	var last time.Time
	for _, r := range rows {
		if r.Snapshot.After(last) {
			last = r.Snapshot
		}
	}

	t.Run("labs over share", func(t *testing.T) {
		sum, n := map[string]float64{}, map[string]int{}
		for _, r := range rows {
			if r.IsUser || r.Depth < 1 || r.NormShares == nil || *r.NormShares <= 0 || !r.Snapshot.After(last.AddDate(0, 0, -7)) {
				continue
			}
			sum[r.Account] += *r.EffectvUsage / *r.NormShares
			n[r.Account]++
		}
		var want []string
		for a, s := range sum {
			if s/float64(n[a]) > 1 {
				want = append(want, fmt.Sprintf("%s %.2f", a, s/float64(n[a])))
			}
		}
		var got []string
		for _, r := range sqlCSV(t, hist, qs[1].SQL) {
			v, _ := strconv.ParseFloat(r[1], 64)
			got = append(got, fmt.Sprintf("%s %.2f", r[0], v))
		}
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) || len(got) < 3 {
			t.Errorf("labs over share:\n got %v\nwant %v", got, want)
		}
	})

	t.Run("user history", func(t *testing.T) {
		user := ""
		for _, r := range rows {
			if r.IsUser && (user == "" || r.User < user) {
				user = r.User
			}
		}
		from := time.Date(2025, 3, 25, 0, 0, 0, 0, time.UTC)
		var want []string
		for _, r := range rows {
			if r.User == user && !r.Snapshot.Before(from) {
				want = append(want, fmt.Sprintf("%s %s %.6f %d", r.Snapshot.Format(time.DateOnly), r.Account, *r.FairShare, *r.Rank))
			}
		}
		var got []string
		for _, r := range sqlCSV(t, hist, qs[2].SQL) {
			f, _ := strconv.ParseFloat(r[2], 64)
			got = append(got, fmt.Sprintf("%s %s %.6f %s", r[0], r[1], f, r[3]))
		}
		slices.Sort(want)
		if !slices.Equal(got, want) || len(got) != 8 {
			t.Errorf("history of %s:\n got %v\nwant %v", user, got, want)
		}
	})
}

// fairshareRows reads every fairshare file of cluster with parquet-go,
// from one pinned generation (a partition may have several files).
func fairshareRows(t *testing.T, hist, cluster string) []record.FairshareRow {
	return tableRows[record.FairshareRow](t, hist, schemas.TableFairshare, cluster)
}

// tableRows reads every file of table and cluster with parquet-go, from one
// pinned generation.
func tableRows[T any](t *testing.T, hist, table, cluster string) []T {
	t.Helper()
	h, err := history.Open(hist)
	if err != nil {
		t.Fatal(err)
	}
	v, err := h.View()
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	var all []T
	for _, p := range v.Files(table, cluster) {
		var rows []T
		if err := v.Read(p, &rows); err != nil {
			t.Fatal(err)
		}
		all = append(all, rows...)
	}
	return all
}

// gpuHoursFromSacct sums, straight from a sacct -P file (UTC times), the
// GPUs × hours of every job allocation per account and UTC month, running
// jobs counted up to now.
func gpuHoursFromSacct(t *testing.T, path string, now time.Time) map[string]float64 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	col := map[string]int{}
	for i, h := range strings.Split(lines[0], "|") {
		col[h] = i
	}
	out := map[string]float64{}
	for _, l := range lines[1:] {
		f := strings.Split(l, "|")
		if strings.Contains(f[col["JobID"]], ".") || f[col["Start"]] == "Unknown" || f[col["State"]] == "PENDING" {
			continue
		}
		gpus := 0.0
		for _, kv := range strings.Split(f[col["AllocTRES"]], ",") {
			if v, ok := strings.CutPrefix(kv, "gres/gpu="); ok {
				gpus, _ = strconv.ParseFloat(v, 64)
			}
		}
		if gpus == 0 {
			continue
		}
		start, err := time.Parse("2006-01-02T15:04:05", f[col["Start"]])
		if err != nil {
			t.Fatal(err)
		}
		end := now
		if e, err := time.Parse("2006-01-02T15:04:05", f[col["End"]]); err == nil && e.Before(now) {
			end = e
		}
		for s := start; s.Before(end); {
			next := time.Date(s.Year(), s.Month()+1, 1, 0, 0, 0, 0, time.UTC)
			e := end
			if next.Before(e) {
				e = next
			}
			out[f[col["Account"]]+" "+s.Format("2006-01")] += gpus * e.Sub(s).Hours()
			s = e
		}
	}
	for k, v := range out {
		out[k] = math.Round(v*10) / 10
	}
	return out
}
