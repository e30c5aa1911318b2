package report

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/fairledger/fairledger/decay"
	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/export/query"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/schemas"
)

// fixtures are the hand-made histories, each written once per test binary.
var fixtures = struct {
	sync.Mutex
	dirs map[string]string
}{dirs: map[string]string{}}

// fixtureDir writes (once) and returns the history of a fixture.
func fixtureDir(t *testing.T, name string, h func() fxHistory) string {
	t.Helper()
	fixtures.Lock()
	defer fixtures.Unlock()
	if d, ok := fixtures.dirs[name]; ok {
		if d == "" {
			t.Fatalf("fixture %s could not be written (see the first failing test)", name)
		}
		return d
	}
	fixtures.dirs[name] = ""
	dir, err := os.MkdirTemp("", "fairledger-report-")
	if err != nil {
		t.Fatal(err)
	}
	d := filepath.Join(dir, "hist")
	writeHistory(t, d, h())
	fixtures.dirs[name] = d
	return d
}

// tinyHistoryDir is the Fair Tree fixture.
func tinyHistoryDir(t *testing.T) string { return fixtureDir(t, "tiny", tinyHistory) }

// classicHistoryDir is the same cluster under PriorityFlags=NO_FAIR_TREE.
func classicHistoryDir(t *testing.T) string {
	return fixtureDir(t, "classic", func() fxHistory {
		h := tinyHistory()
		h.config.Algorithm, h.config.PriorityFlags = "classic", []string{"NO_FAIR_TREE"}
		return h
	})
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, d := range fixtures.dirs {
		if d != "" {
			os.RemoveAll(filepath.Dir(d))
		}
	}
	if demoDir != "" {
		os.RemoveAll(filepath.Dir(demoDir))
	}
	os.Exit(code)
}

var period = Options{From: day("2025-01-01"), To: day("2025-04-01")}

func buildTiny(t *testing.T, account string, opt Options) *Report {
	t.Helper()
	r, err := Build(context.Background(), tinyHistoryDir(t), account, opt)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b)) }

// TestMonthsByHand checks TRES-hours per month against the fixture's jobs
// worked out by hand (see tinyHistory).
//
// labA, period 2025-01-01 to 2025-03-31:
//
//	January:  J6 12 h in period: 4·12 = 48 CPU-h, 8·12 = 96 GiB-h, billing 4·12 = 48
//	          J1 24 h: 8·24 = 192 CPU-h, 16·24 = 384 GiB-h, billing 192
//	          J3 6 h (18:00–24:00): 16·6 = 96 CPU-h, 64·6 = 384 GiB-h, billing 16·0.5·6 = 48
//	          → CPU 336, GPU 0, mem 864, billing 288
//	February: J3 6 h: 96 CPU-h, 384 GiB-h, billing 48
//	          J2 24 h: 4·24 = 96 CPU-h, 2·24 = 48 GPU-h, 32·24 = 768 GiB-h, billing 24·24 = 576
//	          → CPU 192, GPU 48, mem 1152, billing 624
//	March:    nothing
//
// labB: March only: J4 48 h: 96 CPU-h, 192 GiB-h, billing 96; J5 48 h: 48 CPU-h,
// 48 GPU-h, 384 GiB-h, billing 528 → CPU 144, GPU 48, mem 576, billing 624.
func TestMonthsByHand(t *testing.T) {
	t.Parallel()
	tests := []struct {
		account string
		want    []MonthUsage
	}{
		{"labA", []MonthUsage{{"2025-01", 288, 336, 0, 864}, {"2025-02", 624, 192, 48, 1152}, {"2025-03", 0, 0, 0, 0},
			{"total", 912, 528, 48, 2016}}},
		{"labB", []MonthUsage{{"2025-01", 0, 0, 0, 0}, {"2025-02", 0, 0, 0, 0}, {"2025-03", 624, 144, 48, 576},
			{"total", 624, 144, 48, 576}}},
		{"labC", []MonthUsage{{"2025-01", 0, 0, 0, 0}, {"2025-02", 0, 0, 0, 0}, {"2025-03", 0, 0, 0, 0},
			{"total", 0, 0, 0, 0}}},
		// phys is labC's department: its report covers labC.
		{"phys", []MonthUsage{{"2025-01", 0, 0, 0, 0}, {"2025-02", 0, 0, 0, 0}, {"2025-03", 0, 0, 0, 0},
			{"total", 0, 0, 0, 0}}},
	}
	for _, tc := range tests {
		r := buildTiny(t, tc.account, period)
		got := append(slices.Clone(r.Months), r.Total)
		if len(got) != len(tc.want) {
			t.Fatalf("%s: months %+v, want %+v", tc.account, got, tc.want)
		}
		for i, w := range tc.want {
			g := got[i]
			if g.Month != w.Month || !near(g.BillingHours, w.BillingHours, 1e-9) || !near(g.CPUHours, w.CPUHours, 1e-9) ||
				!near(g.GPUHours, w.GPUHours, 1e-9) || !near(g.MemGiBHours, w.MemGiBHours, 1e-9) {
				t.Errorf("%s month %d = %+v, want %+v", tc.account, i, g, w)
			}
		}
	}
}

// TestDefaultPeriod: with no --from/--to the period starts at the first
// usage day (2024-12-31, J6) and ends at the last snapshot, so J6 counts
// its whole 24 h: labA billing 912 + 48 = 960, CPU 528 + 48 = 576.
func TestDefaultPeriod(t *testing.T) {
	t.Parallel()
	r := buildTiny(t, "labA", Options{})
	if !r.From.Equal(day("2024-12-31")) || !r.To.Equal(day("2025-04-01")) {
		t.Errorf("period = %v .. %v, want 2024-12-31 .. 2025-04-01", r.From, r.To)
	}
	if !near(r.Total.BillingHours, 960, 1e-12) || !near(r.Total.CPUHours, 576, 1e-12) {
		t.Errorf("total = %+v, want billing 960, CPU 576", r.Total)
	}
	if got := r.periodLabel(); got != "2024-12-31 to 2025-03-31" {
		t.Errorf("periodLabel = %q", got)
	}
}

// TestTopTablesByHand: labA's users, partitions and jobs (see
// TestMonthsByHand for the hours).
//
//	alice: J6 48 + J1 192 + J2 576 = 816 billing-h, 816/912 = 89.5 %
//	bob:   J3 96 billing-h, 10.5 %
//	gpu partition: J2 576 (63.2 %); cpu: J1 192 + J3 96 + J6 48 = 336 (36.8 %), 3 jobs
//	biggest jobs: 1002 (576), 1001 (192), 1003 (96), 1006 (48)
func TestTopTablesByHand(t *testing.T) {
	t.Parallel()
	r := buildTiny(t, "labA", period)
	wantUsers := []UserUsage{{"alice", 816, 48 + 192 + 96, 48, 96 + 384 + 768, 816.0 / 912},
		{"bob", 96, 192, 0, 768, 96.0 / 912}}
	if len(r.TopUsers) != len(wantUsers) {
		t.Fatalf("top users %+v", r.TopUsers)
	}
	for i, w := range wantUsers {
		g := r.TopUsers[i]
		if g.User != w.User || !near(g.BillingHours, w.BillingHours, 1e-12) || !near(g.CPUHours, w.CPUHours, 1e-12) ||
			!near(g.GPUHours, w.GPUHours, 1e-12) || !near(g.MemGiBHours, w.MemGiBHours, 1e-12) || !near(g.Share, w.Share, 1e-12) {
			t.Errorf("top user %d = %+v, want %+v", i, g, w)
		}
	}
	wantParts := []PartitionUsage{{"gpu", 1, 576, 96, 48, 768, 576.0 / 912}, {"cpu", 3, 336, 432, 0, 1248, 336.0 / 912}}
	if len(r.TopPartitions) != 2 {
		t.Fatalf("top partitions %+v", r.TopPartitions)
	}
	for i, w := range wantParts {
		g := r.TopPartitions[i]
		if g.Partition != w.Partition || g.Jobs != w.Jobs || !near(g.BillingHours, w.BillingHours, 1e-12) ||
			!near(g.CPUHours, w.CPUHours, 1e-12) || !near(g.GPUHours, w.GPUHours, 1e-12) ||
			!near(g.MemGiBHours, w.MemGiBHours, 1e-12) || !near(g.Share, w.Share, 1e-12) {
			t.Errorf("top partition %d = %+v, want %+v", i, g, w)
		}
	}
	var ids []string
	var hours []float64
	for _, j := range r.BiggestJobs {
		ids, hours = append(ids, j.JobID), append(hours, j.BillingHours)
	}
	if !slices.Equal(ids, []string{"1002", "1001", "1003", "1006"}) || !slices.Equal(hours, []float64{576, 192, 96, 48}) {
		t.Errorf("biggest jobs %v %v, want [1002 1001 1003 1006] [576 192 96 48]", ids, hours)
	}
	// Only the partitions the lab used, with their weights.
	want := []Partition{{"cpu", "CPU=1.0"}, {"gpu", "CPU=1.0,GRES/gpu=10.0"}}
	if !slices.Equal(r.Settings.Partitions, want) {
		t.Errorf("partitions %+v, want %+v", r.Settings.Partitions, want)
	}
	// J5 is still running: its end is blank and it is charged to the window end.
	b := buildTiny(t, "labB", period)
	if len(b.BiggestJobs) != 2 || b.BiggestJobs[0].JobID != "1005" || b.BiggestJobs[0].End != nil ||
		b.BiggestJobs[0].BillingHours != 528 {
		t.Errorf("labB biggest jobs %+v, want 1005 running with 528 billing-h first", b.BiggestJobs)
	}
}

// TestLabs: labs are the accounts with users directly under them; the
// department phys and root are not.
func TestLabs(t *testing.T) {
	t.Parallel()
	db, err := query.OpenDuckDB(context.Background(), tinyHistoryDir(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	d, err := Load(context.Background(), db, nil, period)
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Labs(); !slices.Equal(got, []string{"labA", "labB", "labC"}) {
		t.Errorf("Labs() = %v, want [labA labB labC]", got)
	}
	// A report from the all-labs dataset equals the one-lab report.
	for _, lab := range d.Labs() {
		r, err := d.Report(lab)
		if err != nil {
			t.Fatal(err)
		}
		var all, one bytes.Buffer
		if err := r.WriteHTML(&all); err != nil {
			t.Fatal(err)
		}
		if err := buildTiny(t, lab, period).WriteHTML(&one); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(all.Bytes(), one.Bytes()) {
			t.Errorf("%s: report from the all-labs dataset differs from the one-lab report", lab)
		}
	}
	if _, err := d.Report("nope"); err == nil || !strings.Contains(err.Error(), `account "nope" is not in the association tree of cluster tiny`) {
		t.Errorf("Report(nope) error = %v", err)
	}
}

// sqlFloat runs a query returning one number.
func sqlFloat(t *testing.T, db *query.DB, q string) float64 {
	t.Helper()
	r, err := db.Query(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Rows) != 1 {
		t.Fatalf("%s: %d rows", q, len(r.Rows))
	}
	return asFloat(r.Rows[0][0])
}

// TestAgainstSQL computes the same figures a second way: with SQL written
// here over the views, and by summing the rows history.ReadPartition
// returns.
func TestAgainstSQL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := tinyHistoryDir(t)
	db, err := query.OpenDuckDB(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, lab := range []string{"labA", "labB"} {
		r := buildTiny(t, lab, period)
		// TRES-hours per month: SQL over usage.
		for _, m := range r.Months {
			q := "SELECT coalesce(sum(cpu_sec), 0) / 3600 FROM usage WHERE account = '" + lab +
				"' AND strftime(period_start, '%Y-%m') = '" + m.Month + "'"
			if got := sqlFloat(t, db, q); !near(m.CPUHours, got, 1e-12) {
				t.Errorf("%s %s CPU-hours = %v, SQL says %v", lab, m.Month, m.CPUHours, got)
			}
			q = "SELECT coalesce(sum(gpu_sec), 0) / 3600 FROM usage WHERE account = '" + lab +
				"' AND period_start >= TIMESTAMPTZ '" + m.Month + "-01 00:00:00+00' AND period_start < TIMESTAMPTZ '" +
				m.Month + "-01 00:00:00+00' + INTERVAL 1 MONTH"
			if got := sqlFloat(t, db, q); !near(m.GPUHours, got, 1e-12) {
				t.Errorf("%s %s GPU-hours = %v, SQL says %v", lab, m.Month, m.GPUHours, got)
			}
		}
		// Billing-hours per month: the Go sum of the usage rows.
		h := &history.Store{Dir: dir}
		for _, m := range r.Months {
			month, _ := schemas.ParseMonth(m.Month)
			var rows []record.UsageRow
			if err := h.ReadPartition(schemas.TableUsage, "tiny", month, &rows); err != nil && !errors.Is(err, fs.ErrNotExist) {
				t.Fatal(err)
			}
			sum := 0.0
			for _, u := range rows {
				if u.Account == lab && !u.PeriodStart.Before(period.From) {
					sum += u.BillingSec / 3600
				}
			}
			if !near(m.BillingHours, sum, 1e-12) {
				t.Errorf("%s %s billing-hours = %v, usage rows sum to %v", lab, m.Month, m.BillingHours, sum)
			}
		}
		// Partitions from jobs equal the usage table's total: the two
		// tables bill the same seconds.
		var parts float64
		for _, p := range r.TopPartitions {
			parts += p.BillingHours
		}
		if !near(parts, r.Total.BillingHours, 1e-12) {
			t.Errorf("%s: partitions sum to %v billing-h, months to %v", lab, parts, r.Total.BillingHours)
		}
		// The factor now: the fairshare rows at the last snapshot.
		q := "SELECT level_fs FROM fairshare WHERE account = '" + lab + "' AND \"user\" = '' AND snapshot = TIMESTAMPTZ '2025-04-01 00:00:00+00'"
		if got, lf := sqlFloat(t, db, q), last(r.Lab.LevelFS); got != lf {
			t.Errorf("%s LevelFS now = %v, SQL says %v", lab, lf, got)
		}
		q = "SELECT effectv_usage / norm_shares FROM fairshare WHERE account = '" + lab + "' AND \"user\" = '' AND snapshot = TIMESTAMPTZ '2025-04-01 00:00:00+00'"
		if got := sqlFloat(t, db, q); !near(r.Recovery.Ratio, got, 1e-15) {
			t.Errorf("%s usage/share = %v, SQL says %v", lab, r.Recovery.Ratio, got)
		}
		// The series has a point per daily snapshot: 2025-01-02 .. 2025-04-01.
		if len(r.Snapshots) != 90 || !r.Snapshots[0].Equal(day("2025-01-02")) {
			t.Errorf("%s: %d snapshots from %v, want 90 from 2025-01-02", lab, len(r.Snapshots), r.Snapshots[0])
		}
	}
}

// TestRecoveryAgainstClosedForm: labB used more than its share in March.
// Under Fair Tree, for a lab directly under root with share S, raw usage a
// and everybody else's raw usage o, at zero use (others held constant)
//
//	LevelFS(t) = S / (a·d^t / (a·d^t + o)) ≥ 1  ⇔  d^t ≤ S·o / (a·(1−S))
//
// so t = ln(S·o/(a(1−S))) / ln d. The report finds t by bisection over
// package fairshare's FairTree; the two must agree to the second.
func TestRecoveryAgainstClosedForm(t *testing.T) {
	t.Parallel()
	db, err := query.OpenDuckDB(context.Background(), tinyHistoryDir(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	snap := "snapshot = TIMESTAMPTZ '2025-04-01 00:00:00+00'"
	a := sqlFloat(t, db, "SELECT raw_usage FROM fairshare WHERE account = 'labB' AND \"user\" = '' AND "+snap)
	root := sqlFloat(t, db, "SELECT raw_usage FROM fairshare WHERE account = 'root' AND "+snap)
	S := 20.0 / 100
	want := math.Log(S*(root-a)/(a*(1-S))) / math.Log(decay.Factor(7*86400))
	r := buildTiny(t, "labB", period)
	if r.Recovery.State != RecoveryAfter {
		t.Fatalf("labB recovery state %v, want RecoveryAfter (ratio %v)", r.Recovery.State, r.Recovery.Ratio)
	}
	if got := float64(r.Recovery.Seconds); got < want || got > want+1 {
		t.Errorf("labB recovers in %v s, closed form %v s", got, want)
	}
	// labA used little lately, labC nothing: both within their share.
	for _, lab := range []string{"labA", "labC"} {
		if r := buildTiny(t, lab, period); r.Recovery.State != RecoveryWithin {
			t.Errorf("%s recovery state %v (ratio %v), want within", lab, r.Recovery.State, r.Recovery.Ratio)
		}
	}
}

// TestFormatsCarrySameNumbers: the Markdown and CSV forms hold every cell
// of the HTML tables, and the same history gives the same bytes.
func TestFormatsCarrySameNumbers(t *testing.T) {
	t.Parallel()
	r := buildTiny(t, "labA", period)
	var md, cs bytes.Buffer
	if err := r.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteCSV(&cs); err != nil {
		t.Fatal(err)
	}
	cells := csvCells(t, &cs)
	for _, tb := range []table{r.monthsTable(), r.topUsersTable(), r.topPartitionsTable(), r.jobsTable(), r.summaryTable(), r.usersTable()} {
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
	// Hand-checked strings: the total line of the months table.
	if !strings.Contains(md.String(), "| total | 912.0 | 528.0 | 48.0 | 2016.0 |") {
		t.Errorf("Markdown months total line missing:\n%s", md.String())
	}
	// Determinism: a second build gives the same bytes in every format.
	r2 := buildTiny(t, "labA", period)
	for _, f := range []string{FormatHTML, FormatMarkdown, FormatCSV} {
		var x, y bytes.Buffer
		if err := r.Write(&x, f); err != nil {
			t.Fatal(err)
		}
		if err := r2.Write(&y, f); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(x.Bytes(), y.Bytes()) {
			t.Errorf("%s output differs between two builds", f)
		}
	}
}

func mdRow(row []string) []string {
	out := make([]string, len(row))
	for i, c := range row {
		out[i] = mdText(c)
	}
	return out
}

// TestHTMLSelfContained: no script, no external resource, one chart per
// figure with drawn elements.
func TestHTMLSelfContained(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := buildTiny(t, "labA", period).WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	for _, bad := range []string{"<script", "src=", "href=", "@import", "url("} {
		if strings.Contains(s, bad) {
			t.Errorf("HTML contains %q", bad)
		}
	}
	for _, id := range []string{"levelfs", "user-factor", "usage-share", "cpu-hours", "gpu-hours", "mem-hours"} {
		if !strings.Contains(s, `<svg class="chart" id="`+id+`"`) {
			t.Errorf("HTML lacks chart %s", id)
		}
	}
	for _, want := range []string{"@media print", "@media (max-width:40rem)", `name="viewport"`,
		"What LevelFS means", "PriorityDecayHalfLife", "7-00:00:00", "CPU=1.0,GRES/gpu=10.0"} {
		if !strings.Contains(s, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
}

// TestExplanationText: labB's paragraph gives the ratio and the recovery
// time in the formats the package doc promises.
func TestExplanationText(t *testing.T) {
	t.Parallel()
	r := buildTiny(t, "labB", period)
	text := strings.Join(r.explanation(), "\n")
	for _, want := range []string{
		"the lab used " + fmtRatio(r.Recovery.Ratio) + "× its share",
		"in about " + fmtDays(float64(r.Recovery.Seconds)) + " days",
		"use from one half-life ago, 7.0 days, counts half",
		"usage halves every 7.0 days",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("explanation lacks %q:\n%s", want, text)
		}
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	dir := tinyHistoryDir(t)
	ctx := context.Background()
	for _, tc := range []struct {
		account string
		opt     Options
		want    string
	}{
		{"labZ", period, `account "labZ" is not in the association tree of cluster tiny at 2025-04-01 00:00 UTC`},
		{"labA", Options{Cluster: "other"}, `cluster "other" has no fair-share snapshots in the history (clusters: tiny)`},
		{"labA", Options{From: day("2026-01-01"), To: day("2026-02-01")}, "cluster tiny has no fair-share snapshot between 2026-01-01 00:00 UTC and 2026-02-01 00:00 UTC"},
		{"labA", Options{From: day("2025-02-01"), To: day("2025-01-01")}, "empty period: --from 2025-02-01 is after --to 2024-12-31"},
		// The history starts on 2024-12-31 (J6's first usage day): --to
		// 2024-12-30 (To 2024-12-31 00:00) ends before it.
		{"labA", Options{To: day("2024-12-31")}, "report: empty period: --to 2024-12-30 ends before the history starts on 2024-12-31"},
		// The last snapshot is 2025-04-01 00:00.
		{"labA", Options{From: day("2025-04-01")}, "report: empty period: --from 2025-04-01 is not before the history's last snapshot (2025-04-01 00:00 UTC)"},
		{"labA", Options{From: day("2025-06-01")}, "report: empty period: --from 2025-06-01 is not before"},
		{"labA", Options{From: day("2024-12-01"), To: day("2024-12-31")}, "(its snapshots run from 2025-01-02 00:00 UTC to 2025-04-01 00:00 UTC)"},
	} {
		_, err := Build(ctx, dir, tc.account, tc.opt)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Build(%s, %+v) error = %v, want %q", tc.account, tc.opt, err, tc.want)
		}
	}
	empty := t.TempDir()
	if _, err := Build(ctx, empty, "labA", Options{}); err == nil || !strings.Contains(err.Error(), "no fairshare table") {
		t.Errorf("empty history: error = %v", err)
	}
}

// TestTopNBound: --top beyond MaxTopN is refused with the bound (it was
// DuckDB's "Invalid input for MIN/MAX: n value must be < 1000000");
// MaxTopN itself works and lists what there is.
func TestTopNBound(t *testing.T) {
	t.Parallel()
	dir := tinyHistoryDir(t)
	_, err := Build(context.Background(), dir, "labA", Options{From: period.From, To: period.To, TopN: 100000000})
	if err == nil || err.Error() != "report: top 100000000: at most 10000 rows per table" {
		t.Errorf("TopN 100000000: error %v", err)
	}
	r, err := Build(context.Background(), dir, "labA", Options{From: period.From, To: period.To, TopN: MaxTopN})
	if err != nil {
		t.Fatal(err)
	}
	// labA's four jobs, two users, two partitions (TestTopTablesByHand).
	if len(r.BiggestJobs) != 4 || len(r.TopUsers) != 2 || len(r.TopPartitions) != 2 {
		t.Errorf("TopN %d: %d jobs, %d users, %d partitions; want 4, 2, 2", MaxTopN, len(r.BiggestJobs), len(r.TopUsers), len(r.TopPartitions))
	}
}

// loadAll loads the dataset of every lab of a history.
func loadAll(t *testing.T, dir string, opt Options) *Dataset {
	t.Helper()
	db, err := query.OpenDuckDB(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	d, err := Load(context.Background(), db, nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestDemoAgainstSQL checks every lab of the demo cluster two ways: the
// report's billing-hours in the period against SQL over the usage table
// (summed over the lab's accounts), the same against the jobs table
// (billing × UsageFactor × charged seconds, which the pipeline must bill
// identically), and that each HTML page's charts all have drawn elements.
func TestDemoAgainstSQL(t *testing.T) {
	t.Parallel()
	dir := demoHistoryDir(t)
	d := loadAll(t, dir, Options{})
	db, err := query.OpenDuckDB(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// One day in the middle of the history: runs that started in February
	// and ran into it are charged in it too, so the partitions still add
	// up to the usage table's day.
	day1 := loadAll(t, dir, Options{From: day("2025-03-01"), To: day("2025-03-02")})
	for _, lab := range day1.Labs() {
		r, err := day1.Report(lab)
		if err != nil {
			t.Fatal(err)
		}
		var parts float64
		for _, p := range r.TopPartitions {
			parts += p.BillingHours
		}
		if len(r.TopPartitions) < day1.opts.topN() && !near(parts, r.Total.BillingHours, 1e-9) {
			t.Errorf("%s on 2025-03-01: partitions sum to %v billing-hours, usage table says %v", lab, parts, r.Total.BillingHours)
		}
	}
	labs := d.Labs()
	if len(labs) < 5 {
		t.Fatalf("demo labs %v: want several", labs)
	}
	for _, lab := range labs {
		r, err := d.Report(lab)
		if err != nil {
			t.Fatal(err)
		}
		p, _ := d.tree.account(lab)
		in := accountFilter(d.tree.subtreeAccounts(p))
		u := sqlFloat(t, db, "SELECT coalesce(sum(billing_sec), 0) / 3600 FROM usage WHERE true"+in)
		if !near(r.Total.BillingHours, u, 1e-9) {
			t.Errorf("%s: billing-hours %v, usage table says %v", lab, r.Total.BillingHours, u)
		}
		j := sqlFloat(t, db, "SELECT coalesce(sum(billing * usage_factor * charged_sec), 0) / 3600 FROM jobs WHERE true"+in)
		if !near(r.Total.BillingHours, j, 1e-9) {
			t.Errorf("%s: billing-hours %v, jobs table says %v", lab, r.Total.BillingHours, j)
		}
		var parts float64
		for _, p := range r.TopPartitions {
			parts += p.BillingHours
		}
		if len(r.TopPartitions) < d.opts.topN() && !near(parts, u, 1e-9) {
			t.Errorf("%s: partitions sum to %v billing-hours, usage table says %v", lab, parts, u)
		}
		var b bytes.Buffer
		if err := r.WriteHTML(&b); err != nil {
			t.Fatal(err)
		}
		for id, drawn := range drawnCharts(b.String()) {
			if !drawn {
				t.Errorf("%s: chart %s has nothing drawn", lab, id)
			}
		}
		if r.Recovery.State == RecoveryUnknown {
			t.Errorf("%s: no recovery figure (settings known: %v)", lab, r.Settings.Known)
		}
	}
}

// TestClassic: under NO_FAIR_TREE the lab's factor is 2^(−EffectvUsage/
// NormShares) (the history keeps no account FairShare), the chart shows it
// with the users', and recovery means getting back to 0.5. For labB, a
// child of root, EffectvUsage = NormUsage = a/root and NormShares = 20/100,
// so the recovery time is the Fair Tree closed form again.
func TestClassic(t *testing.T) {
	t.Parallel()
	dir := classicHistoryDir(t)
	r, err := Build(context.Background(), dir, "labB", period)
	if err != nil {
		t.Fatal(err)
	}
	db, err := query.OpenDuckDB(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	snap := "snapshot = TIMESTAMPTZ '2025-04-01 00:00:00+00'"
	eu := sqlFloat(t, db, "SELECT effectv_usage FROM fairshare WHERE account = 'labB' AND \"user\" = '' AND "+snap)
	a := sqlFloat(t, db, "SELECT raw_usage FROM fairshare WHERE account = 'labB' AND \"user\" = '' AND "+snap)
	root := sqlFloat(t, db, "SELECT raw_usage FROM fairshare WHERE account = 'root' AND "+snap)
	if want := math.Exp2(-eu / 0.2); !near(last(r.Lab.FairShare), want, 1e-15) {
		t.Errorf("labB FairShare now = %v, want 2^(−%v/0.2) = %v", last(r.Lab.FairShare), eu, want)
	}
	if !near(eu, a/root, 1e-15) {
		t.Errorf("labB EffectvUsage %v, want a/root = %v", eu, a/root)
	}
	want := math.Log(0.2*(root-a)/(a*0.8)) / math.Log(decay.Factor(7*86400))
	if got := float64(r.Recovery.Seconds); r.Recovery.State != RecoveryAfter || got < want || got > want+1 {
		t.Errorf("labB recovery %+v, want after ⌈%v⌉ s", r.Recovery, want)
	}
	var b bytes.Buffer
	if err := r.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, w := range []string{`<svg class="chart" id="factor"`, "back at its share (FairShare 0.500000)", "What the factor means",
		"FairShareDampeningFactor", "NO_FAIR_TREE"} {
		if !strings.Contains(html, w) {
			t.Errorf("classic HTML lacks %q", w)
		}
	}
	if strings.Contains(html, `id="levelfs"`) {
		t.Error("classic HTML has a LevelFS chart")
	}
	for id, drawn := range drawnCharts(html) {
		if !drawn {
			t.Errorf("classic chart %s has nothing drawn", id)
		}
	}
}

// TestJobsStartedBeforePeriod: a run has one jobs row, in its start month,
// yet it is charged in a later period it overlaps. Worked by hand from
// tinyHistory (billing × UsageFactor × seconds in the period / 3600):
//
//	labA, 2025-02-01 only: J3 (bob, cpu, started 2025-01-31 18:00, ended
//	  2025-02-01 06:00) 6 h: billing 16·0.5·6 = 48, 16·6 = 96 CPU-h,
//	  64·6 = 384 GiB-h; 1 job in cpu.
//	labA, 2025-01-01 only: J6 (started 2024-12-31 12:00) 12 h: billing 4·12
//	  = 48, 48 CPU-h, 96 GiB-h.
//	labA, February: J3 48 (cpu) + J2 24·24 = 576 (gpu).
func TestJobsStartedBeforePeriod(t *testing.T) {
	t.Parallel()
	type job struct {
		id    string
		hours float64
	}
	for _, tc := range []struct {
		name     string
		opt      Options
		parts    []PartitionUsage
		jobs     []job
		billingH float64
	}{
		{"2025-02-01", Options{From: day("2025-02-01"), To: day("2025-02-02")},
			[]PartitionUsage{{Partition: "cpu", Jobs: 1, BillingHours: 48, CPUHours: 96, MemGiBHours: 384, Share: 1}},
			[]job{{"1003", 48}}, 48},
		{"2025-01-01", Options{From: day("2025-01-01"), To: day("2025-01-02")},
			[]PartitionUsage{{Partition: "cpu", Jobs: 1, BillingHours: 48, CPUHours: 48, MemGiBHours: 96, Share: 1}},
			[]job{{"1006", 48}}, 48},
		{"2025-02", Options{From: day("2025-02-01"), To: day("2025-03-01")},
			[]PartitionUsage{{Partition: "gpu", Jobs: 1, BillingHours: 576, CPUHours: 96, GPUHours: 48, MemGiBHours: 768, Share: 576.0 / 624},
				{Partition: "cpu", Jobs: 1, BillingHours: 48, CPUHours: 96, MemGiBHours: 384, Share: 48.0 / 624}},
			[]job{{"1002", 576}, {"1003", 48}}, 624},
	} {
		r := buildTiny(t, "labA", tc.opt)
		if !near(r.Total.BillingHours, tc.billingH, 1e-12) {
			t.Errorf("%s: billing-hours in period %v, want %v", tc.name, r.Total.BillingHours, tc.billingH)
		}
		if len(r.TopPartitions) != len(tc.parts) {
			t.Errorf("%s: top partitions %+v, want %+v", tc.name, r.TopPartitions, tc.parts)
		} else {
			for i, w := range tc.parts {
				g := r.TopPartitions[i]
				if g.Partition != w.Partition || g.Jobs != w.Jobs || !near(g.BillingHours, w.BillingHours, 1e-12) ||
					!near(g.CPUHours, w.CPUHours, 1e-12) || !near(g.GPUHours, w.GPUHours, 1e-12) ||
					!near(g.MemGiBHours, w.MemGiBHours, 1e-12) || !near(g.Share, w.Share, 1e-12) {
					t.Errorf("%s: top partition %d = %+v, want %+v", tc.name, i, g, w)
				}
			}
		}
		var got []job
		for _, j := range r.BiggestJobs {
			got = append(got, job{j.JobID, j.BillingHours})
		}
		if !slices.Equal(got, tc.jobs) {
			t.Errorf("%s: biggest jobs %v, want %v", tc.name, got, tc.jobs)
		}
	}
}

// TestRecoveryOnlyChildDemo: in the demo, patel_lab is the only child of
// sch_eng, so its own LevelFS is 1, but sch_eng is far above its share
// among root's children. The report names sch_eng as the limit and gives
// the time until sch_eng's LevelFS is back at 1 at zero use of the lab:
// with S = sch_eng's NormShares, a = sch_eng's raw usage (all patel_lab's)
// and P = root's, LevelFS ≥ 1 once d^t ≤ S·(P − a)/(a·(1 − S)) (see
// snapTree.recover), t = ln(that)/ln(1 − 0.693/H).
func TestRecoveryOnlyChildDemo(t *testing.T) {
	t.Parallel()
	dir := demoHistoryDir(t)
	db, err := query.OpenDuckDB(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	snap := "snapshot = (SELECT max(snapshot) FROM fairshare)"
	S := sqlFloat(t, db, "SELECT norm_shares FROM fairshare WHERE account = 'sch_eng' AND \"user\" = '' AND "+snap)
	a := sqlFloat(t, db, "SELECT raw_usage FROM fairshare WHERE account = 'sch_eng' AND \"user\" = '' AND "+snap)
	P := sqlFloat(t, db, "SELECT raw_usage FROM fairshare WHERE account = 'root' AND \"user\" = '' AND "+snap)
	lf := sqlFloat(t, db, "SELECT level_fs FROM fairshare WHERE account = 'sch_eng' AND \"user\" = '' AND "+snap)
	r, err := Build(context.Background(), dir, "patel_lab", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := last(r.Lab.LevelFS); got != 1 {
		t.Fatalf("patel_lab LevelFS %v, want 1 (the demo changed?)", got)
	}
	if r.Recovery.Limit != "sch_eng" || !near(r.Recovery.LimitLevelFS, lf, 1e-9) {
		t.Errorf("limit %s %v, want sch_eng %v", r.Recovery.Limit, r.Recovery.LimitLevelFS, lf)
	}
	want := math.Log(S*(P-a)/(a*(1-S))) / math.Log(decay.Factor(r.Settings.HalfLifeSec))
	if got := float64(r.Recovery.Seconds); r.Recovery.State != RecoveryAfter || got < want-1 || got > want+1 {
		t.Errorf("patel_lab recovery %+v, want after about %.0f s", r.Recovery, want)
	}
	text := strings.Join(r.explanation(), "\n")
	for _, w := range []string{"sch_eng, above the lab, has LevelFS " + fmtFactor(lf), "the lab and every account above it would be back"} {
		if !strings.Contains(text, w) {
			t.Errorf("explanation lacks %q:\n%s", w, text)
		}
	}
	if strings.Contains(text, "nothing to recover") {
		t.Errorf("explanation says nothing to recover:\n%s", text)
	}
}

// TestMemoryInGiB: memory figures are mem_mb/1024 (GiB), and every format
// says so: no "GB" label is left.
func TestMemoryInGiB(t *testing.T) {
	t.Parallel()
	r := buildTiny(t, "labA", period)
	for _, f := range []string{FormatHTML, FormatMarkdown, FormatCSV} {
		var b bytes.Buffer
		if err := r.Write(&b, f); err != nil {
			t.Fatal(err)
		}
		s := b.String()
		if !strings.Contains(s, "Memory GiB-hours") {
			t.Errorf("%s: no \"Memory GiB-hours\"", f)
		}
		for _, bad := range []string{"GB-hours", "Memory GB", "GB = "} {
			if strings.Contains(s, bad) {
				t.Errorf("%s: still says %q", f, bad)
			}
		}
	}
}

// csvCells are the cells of a CSV report: (table, row, column, value) of
// each record but the header.
func csvCells(t *testing.T, r io.Reader) map[[4]string]bool {
	t.Helper()
	recs, err := csv.NewReader(r).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	cells := map[[4]string]bool{}
	for _, rec := range recs[1:] {
		cells[[4]string{rec[1], rec[2], rec[3], rec[4]}] = true
	}
	return cells
}
