package query

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/fairledger/fairledger/billing"
	"github.com/fairledger/fairledger/ingest"
	"github.com/fairledger/fairledger/internal/synth"
)

// The DuckDB yardstick (issue 7): the sacct file of the pipeline benchmark
// through DuckDB alone, in one SQL statement — read_csv, the billing of
// every job from its partition's TRESBillingWeights, and billing-seconds
// grouped by account and day. fairledger's full pipeline (which also
// decays usage and computes fair share) aims to be no slower.

// sacctColumns are the columns of synth.SacctHeader with the types the
// yardstick reads them as. They are given explicitly: DuckDB's sniffer
// guesses Elapsed ("1-02:03:04") wrongly, and a guess is not a yardstick.
// Empty fields and the Unknown and None times read as NULL (nullstr).
var sacctColumns = [][2]string{
	{"JobID", "VARCHAR"}, {"JobIDRaw", "BIGINT"}, {"Cluster", "VARCHAR"}, {"Partition", "VARCHAR"},
	{"QOS", "VARCHAR"}, {"Account", "VARCHAR"}, {"User", "VARCHAR"}, {"Submit", "TIMESTAMP"},
	{"Eligible", "TIMESTAMP"}, {"Start", "TIMESTAMP"}, {"End", "TIMESTAMP"}, {"Elapsed", "VARCHAR"},
	{"ElapsedRaw", "BIGINT"}, {"Suspended", "VARCHAR"}, {"State", "VARCHAR"}, {"ExitCode", "VARCHAR"},
	{"NNodes", "BIGINT"}, {"AllocCPUS", "BIGINT"}, {"ReqTRES", "VARCHAR"}, {"AllocTRES", "VARCHAR"},
	{"Timelimit", "VARCHAR"}, {"JobName", "VARCHAR"},
}

// readSacctSQL is the read_csv call of a sacct -P file with a header line
// in the synth.SacctHeader column order; times are read as written (the
// yardstick files are printed in UTC).
func readSacctSQL(path string) string {
	var cols []string
	for _, c := range sacctColumns {
		cols = append(cols, SQLString(c[0])+": "+SQLString(c[1]))
	}
	return "read_csv(" + SQLString(path) + ", delim = '|', header = true, quote = '', escape = ''," +
		" nullstr = ['', 'Unknown', 'None'], auto_detect = false, columns = {" + strings.Join(cols, ", ") + "})"
}

// billingSQL returns the SQL of the yardstick's billing: cols, a select
// list over AllocTRES giving the count of every TRES the weights use as a
// DOUBLE column (0 when absent), and expr, an expression over those
// columns, Partition and AllocTRES for the billable TRES of a job (the exact double
// fair-share usage is charged with) under the TRESBillingWeights of the
// slurm.conf at confPath.
//
// It reproduces synth.Billable, the reference the generator computes
// AllocTRES' billing= with: SUM mode (PriorityFlags without MAX_TRES,
// refused otherwise), B = cpu·w + memMiB·w + node·w + the other weighted
// TRES in byte order of their names (for the gres and license TRES the
// generator writes, the order billing.TRESLess gives and ParseWeights
// returns them in), added left to right; a partition without
// weights bills its CPU count; a partition slurm.conf does not know falls
// back to AllocTRES' billing= (as fairledger does). Weights are written as
// strings cast to DOUBLE: a bare 1.2 would be a DECIMAL in DuckDB, whose
// arithmetic is not float64's.
func billingSQL(confPath string) (cols, expr string, err error) {
	cfg, err := ingest.ReadSlurmConf(confPath)
	if err != nil {
		return "", "", err
	}
	if m := billing.ModeFromFlags(cfg.PriorityFlags); m != billing.Sum {
		return "", "", fmt.Errorf("%s: PriorityFlags mode %s: the yardstick SQL does SUM only", confPath, m)
	}
	col := map[string]string{} // TRES → column name
	var names []string
	use := func(tres string) string {
		if c, ok := col[tres]; ok {
			return c
		}
		c := "t" + strconv.Itoa(len(names))
		col[tres] = c
		names = append(names, tres)
		return c
	}
	var b strings.Builder
	b.WriteString("CASE Partition")
	for _, p := range cfg.Partitions {
		w, err := billing.ParseWeights(p.TRESBillingWeights, cfg.AccountingStorageTRES)
		if err != nil {
			return "", "", fmt.Errorf("%s: partition %s: %w", confPath, p.Name, err)
		}
		fmt.Fprintf(&b, " WHEN %s THEN ", SQLString(p.Name))
		if len(w) == 0 {
			b.WriteString(use("cpu"))
			continue
		}
		b.WriteString(strings.Repeat("(", len(w)-1))
		for i, x := range w {
			if i > 0 {
				b.WriteString(" + ")
			}
			fmt.Fprintf(&b, "%s * CAST('%s' AS DOUBLE)", use(x.TRES), strconv.FormatFloat(x.PerUnit, 'g', -1, 64))
			if i > 0 {
				b.WriteString(")")
			}
		}
	}
	b.WriteString(" ELSE " + tresCountSQL("billing") + " END") // evaluated for those rows only
	var c []string
	for _, t := range names {
		c = append(c, tresCountSQL(t)+" AS "+col[t])
	}
	return strings.Join(c, ", "), b.String(), nil
}

// tresCountSQL is a SQL expression for the count of one TRES in AllocTRES
// as a DOUBLE, 0 when absent; mem is converted to MiB from the units sacct
// prints (4000M, 16G, 1.50G). The regular expressions are the yardstick's
// own choice: DuckDB's split_part and string_split variants measured
// slower on the 5 M-row file.
func tresCountSQL(tres string) string {
	if tres == "mem" {
		num := "regexp_extract(AllocTRES, '(?:^|,)mem=([0-9.]+)', 1)"
		unit := "regexp_extract(AllocTRES, '(?:^|,)mem=[0-9.]+([KMGTP]?)', 1)"
		return "COALESCE(CAST(NULLIF(" + num + ", '') AS DOUBLE) * CASE " + unit +
			" WHEN 'K' THEN CAST(1 AS DOUBLE)/1024 WHEN 'G' THEN 1024 WHEN 'T' THEN 1048576 WHEN 'P' THEN 1073741824 ELSE 1 END, 0)"
	}
	re := "(?:^|,)" + regexp.QuoteMeta(tres) + "=([0-9]+)"
	e := "COALESCE(CAST(NULLIF(regexp_extract(AllocTRES, " + SQLString(re) + ", 1), '') AS DOUBLE), 0)"
	if tres == "cpu" {
		return e
	}
	// Most jobs have no GRES: a substring test is cheaper than the regexp.
	return "CASE WHEN contains(AllocTRES, " + SQLString(tres+"=") + ") THEN " + e + " ELSE 0 END"
}

// yardstickSQL is the yardstick statement: every job that started (Start
// not NULL, so PENDING and never-started rows drop out), billed from its
// partition's weights, charged billing × ElapsedRaw (sacct's elapsed
// seconds, suspended time excluded; no QOS UsageFactor, no decay), summed
// per account and UTC day of Start. The day of the start is enough for a
// yardstick: a job running across midnight is not split.
func yardstickSQL(sacctPath, confPath string) (string, error) {
	cols, bill, err := billingSQL(confPath)
	if err != nil {
		return "", err
	}
	return "SELECT Account AS account, CAST(Start AS DATE) AS day, count(*) AS jobs," +
		" sum(" + bill + " * ElapsedRaw) AS billing_sec" +
		" FROM (SELECT Account, Start, ElapsedRaw, Partition, AllocTRES, " + cols + " FROM " + readSacctSQL(sacctPath) +
		" WHERE Start IS NOT NULL AND AllocTRES IS NOT NULL)" +
		" GROUP BY ALL ORDER BY ALL", nil
}

// benchDir is where generated bench data is cached between runs:
// $FAIRLEDGER_BENCH_DIR (`make bench` sets it) or the OS temp dir.
func benchDir() string {
	if d := os.Getenv("FAIRLEDGER_BENCH_DIR"); d != "" {
		return d
	}
	return filepath.Join(os.TempDir(), "fairledger-bench")
}

// resetPeakRSS returns freed Go memory to the OS and resets the kernel's
// peak-RSS mark (Linux ≥ 4.0), so that a benchmark run after others in the
// same process reports its own peak. It reports whether the reset worked.
func resetPeakRSS() bool {
	runtime.GC()
	debug.FreeOSMemory()
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// peakRSSMiB is the process's peak resident set size since the last
// resetPeakRSS (VmHWM), falling back to getrusage's lifetime maximum.
func peakRSSMiB() float64 {
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
				kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
				if err == nil {
					return kb / 1024
				}
			}
		}
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Maxrss) / 1024 // Linux reports KiB
}

// BenchmarkDuckDBYardstickYear5M runs yardstickSQL over the sacct.psv of
// synth.Year5M (5,000,000 rows, about 1.4 GB; generated once into the bench
// dir) through go-duckdb, with DuckDB's default settings (all cores).
//
//	FAIRLEDGER_BENCH_DIR=$PWD/.bench go test ./export/query -run '^$' -bench DuckDBYardstickYear5M -benchtime 1x
//
// (or `make bench`). It reports rows/s and MB/s of the sacct file, the
// number of (account, day) groups, CPU ns per row and the peak RSS of the
// statement (the process's peak is reset before it).
func BenchmarkDuckDBYardstickYear5M(b *testing.B) {
	f, err := synth.Cached(benchDir(), synth.Year5M())
	if err != nil {
		b.Fatal(err)
	}
	fi, err := os.Stat(f.Sacct)
	if err != nil {
		b.Fatal(err)
	}
	q, err := yardstickSQL(f.Sacct, f.SlurmConf)
	if err != nil {
		b.Fatal(err)
	}
	res, sec := measureYardstick(b, f, q)
	b.ReportMetric(float64(fi.Size())/1e6/sec, "MB/s")
	b.ReportMetric(float64(f.Summary.Rows), "rows")
	b.ReportMetric(float64(len(res.Rows)), "groups")
}

// unconfinedDuckDB is a DuckDB session with DuckDB's default settings and
// no views, free to read any file: the yardstick reads sacct files with
// read_csv, which a history's session refuses.
func unconfinedDuckDB(tb testing.TB) *DB {
	tb.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		tb.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	return &DB{db: db}
}

// measureYardstick runs the statements one after the other b.N times in a
// DuckDB session with DuckDB's default settings (all but the last as
// plain statements, which may write; the last as a query) and reports the wall
// seconds, rows/s and CPU ns per row of the sacct file f and the peak RSS
// of the statements (the process's peak is reset before them). It returns
// the last statement's result and the wall seconds of one run.
func measureYardstick(b *testing.B, f synth.Files, statements ...string) (*Result, float64) {
	b.Helper()
	ctx := context.Background()
	db := unconfinedDuckDB(b)
	defer db.Close()
	resetPeakRSS()
	b.ResetTimer()
	cpu0 := cpuSeconds()
	var res *Result
	var err error
	for range b.N {
		for i, q := range statements {
			if i < len(statements)-1 {
				// A step before the query writes (COPY): the history's
				// session refuses what is not a SELECT, so it runs on
				// the connection itself.
				_, err = db.db.ExecContext(ctx, q)
			} else {
				res, err = db.Query(ctx, q)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	cpu := cpuSeconds() - cpu0
	rows := float64(f.Summary.Rows)
	sec := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(sec, "wall-s")
	b.ReportMetric(rows/sec, "rows/s")
	b.ReportMetric(cpu*1e9/rows/float64(b.N), "cpu-ns/row")
	b.ReportMetric(peakRSSMiB(), "peakRSS-MiB")
	return res, sec
}

// cpuSeconds is the process's user+system CPU time so far (DuckDB's
// threads included).
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

// yardstickConf writes the generator's slurm.conf into a temp dir and
// returns its path.
func yardstickConf(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), synth.SlurmConfFile)
	var buf bytes.Buffer
	if err := synth.New(synth.Year5M()).WriteSlurmConf(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestYardstickSQL runs the yardstick's billing and statement on a
// hand-written sacct file under the generator's slurm.conf
// (sapphire CPU=1.2,Mem=0.3G; shared CPU=1.0,Mem=0.25G; gpu_requeue
// CPU=0.5,Mem=0.125G,GRES/gpu:v100=5.0; gpu GRES/gpu:a100=20.0; test
// without weights).
func TestYardstickSQL(t *testing.T) {
	t.Parallel()
	conf := yardstickConf(t)
	const head = synth.SacctHeader + "\n"
	row := func(id, part, acct, start string, elapsed int, state, alloc string) string {
		return fmt.Sprintf("%s|%s|synth|%s|normal|%s|u1|2024-01-01T00:00:00|2024-01-01T00:00:00|%s|Unknown|00:00:00|%d|00:00:00|%s|0:0|1|1|cpu=1,mem=1G,node=1|%s|01:00:00|a job\n",
			id, id, part, acct, start, elapsed, state, alloc)
	}
	sacct := head +
		// 4×1.2 + 1000 MiB × 0.3/1024 = 4.8 + 0.29296875
		row("1", "sapphire", "labA", "2024-01-01T00:00:15", 1424, "COMPLETED", "billing=5,cpu=4,mem=1000M,node=1") +
		// 8×0.5 + 32000×0.125/1024 + 1×5 = 4 + 3.90625 + 5
		row("2", "gpu_requeue", "labA", "2024-01-01T23:59:59", 475, "COMPLETED", "billing=12,cpu=8,gres/gpu:v100=1,gres/gpu=1,mem=32000M,node=1") +
		// 1×1.0 + 4096×0.25/1024 + 1×20 = 1 + 1 + 20
		row("3", "gpu", "labA", "2024-01-02T00:00:00", 100, "RUNNING", "billing=22,cpu=1,gres/gpu:a100=1,gres/gpu=1,mem=4G,node=1") +
		// 2×1.0 + 1536×0.25/1024 = 2 + 0.375
		row("4", "shared", "labB", "2024-01-01T10:00:00", 10, "FAILED", "billing=2,cpu=2,mem=1.50G,node=1") +
		// test has no weights: the CPU count
		row("5", "test", "labB", "2024-01-01T11:00:00", 20, "COMPLETED", "billing=3,cpu=3,mem=12000M,node=1") +
		// a partition slurm.conf does not know: AllocTRES' billing=
		row("6", "retired", "labB", "2024-01-01T12:00:00", 30, "COMPLETED", "billing=7,cpu=2,mem=2G,node=1") +
		// never started and pending: not charged
		row("7", "shared", "labB", "None", 0, "CANCELLED by 0", "") +
		row("8_[1-3]", "shared", "labB", "Unknown", 0, "PENDING", "")
	path := filepath.Join(t.TempDir(), "sacct.psv")
	if err := os.WriteFile(path, []byte(sacct), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	db := unconfinedDuckDB(t)
	defer db.Close()

	cols, bill, err := billingSQL(conf)
	if err != nil {
		t.Fatal(err)
	}
	res, err := db.Query(ctx, "SELECT JobID, "+bill+" FROM (SELECT JobID, Partition, AllocTRES, "+cols+" FROM "+
		readSacctSQL(path)+" WHERE AllocTRES IS NOT NULL) ORDER BY JobID")
	if err != nil {
		t.Fatal(err)
	}
	wantBill := []float64{4.8 + 0.29296875, 4 + 3.90625 + 5, 22, 2.375, 3, 7}
	if len(res.Rows) != len(wantBill) {
		t.Fatalf("billing rows = %v, want %d", res.Rows, len(wantBill))
	}
	for i, r := range res.Rows {
		if got := r[1].(float64); got < wantBill[i]-1e-9 || got > wantBill[i]+1e-9 {
			t.Errorf("billing of job %v = %v, want %v", r[0], got, wantBill[i])
		}
	}

	q, err := yardstickSQL(path, conf)
	if err != nil {
		t.Fatal(err)
	}
	if res, err = db.Query(ctx, q); err != nil {
		t.Fatal(err)
	}
	want := []struct {
		account, day string
		jobs         int64
		billingSec   float64
	}{
		// 5.09296875×1424 + 12.90625×475 = 7252.3875 + 6130.46875
		{"labA", "2024-01-01", 2, 13382.85625},
		{"labA", "2024-01-02", 1, 2200},
		// 2.375×10 + 3×20 + 7×30
		{"labB", "2024-01-01", 3, 293.75},
	}
	if len(res.Rows) != len(want) {
		t.Fatalf("yardstick rows = %v, want %d", res.Rows, len(want))
	}
	for i, w := range want {
		r := res.Rows[i]
		day := textValue(unknownType, r[1], false)[:10]
		sec := r[3].(float64)
		if r[0] != w.account || day != w.day || r[2] != w.jobs || sec < w.billingSec-1e-6 || sec > w.billingSec+1e-6 {
			t.Errorf("row %d = %v, want %+v", i, r, w)
		}
	}
}

// TestYardstickBillingMatchesGenerator checks the yardstick's billing SQL
// against the billing= the generator writes into AllocTRES (Slurm's
// truncated integer, computed with synth.Billable): it must agree on at
// least 99.9% of the jobs that started. The brief allows for float
// differences in the last bit; the SQL adds in synth.Billable's order, so
// every row is expected to agree.
func TestYardstickBillingMatchesGenerator(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sum, err := synth.WriteDir(dir, synth.Options{Seed: 7, Jobs: 20000, Labs: 30, StepFraction: -1})
	if err != nil {
		t.Fatal(err)
	}
	cols, bill, err := billingSQL(filepath.Join(dir, synth.SlurmConfFile))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	db := unconfinedDuckDB(t)
	defer db.Close()
	res, err := db.Query(ctx, "SELECT count(*), count(*) FILTER (WHERE trunc(billing) = written),"+
		" count(*) FILTER (WHERE Partition LIKE 'gpu%' AND trunc(billing) = written) FROM ("+
		"SELECT Partition, "+bill+" AS billing, CAST(regexp_extract(AllocTRES, '(?:^|,)billing=([0-9]+)', 1) AS BIGINT) AS written"+
		" FROM (SELECT Partition, AllocTRES, "+cols+" FROM "+readSacctSQL(filepath.Join(dir, synth.SacctFile))+
		" WHERE Start IS NOT NULL AND AllocTRES IS NOT NULL))")
	if err != nil {
		t.Fatal(err)
	}
	n, agree, gpu := res.Rows[0][0].(int64), res.Rows[0][1].(int64), res.Rows[0][2].(int64)
	if started := sum.Jobs - sum.Pending - sum.NeverStarted; n != started {
		t.Errorf("billed %d jobs, want the %d that started", n, started)
	}
	if float64(agree) < 0.999*float64(n) {
		t.Errorf("SQL billing equals billing= on %d of %d jobs, want ≥ 99.9%%", agree, n)
	}
	if gpu == 0 {
		t.Error("no GPU job compared")
	}
	t.Logf("SQL billing equals billing= on %d of %d jobs (%d GPU jobs)", agree, n, gpu)
}

// BenchmarkDuckDBYardstickWritingYear5M is the yardstick with a history to
// write, as a DuckDB-only pipeline would have it: the same file, read and
// billed as in yardstickSQL, is first written as a zstd Parquet table of
// one row per sacct row (its columns and the billing), and the billing-
// seconds per account and day are then grouped from that table. It
// measures what writing a jobs table costs DuckDB itself on this machine,
// beside BenchmarkDuckDBYardstickYear5M, which writes nothing.
//
//	FAIRLEDGER_BENCH_DIR=$PWD/.bench go test ./export/query -run '^$' -bench DuckDBYardstickWritingYear5M -benchtime 1x
func BenchmarkDuckDBYardstickWritingYear5M(b *testing.B) {
	f, err := synth.Cached(benchDir(), synth.Year5M())
	if err != nil {
		b.Fatal(err)
	}
	cols, bill, err := billingSQL(f.SlurmConf)
	if err != nil {
		b.Fatal(err)
	}
	var names []string
	for _, c := range sacctColumns {
		names = append(names, `"`+c[0]+`"`)
	}
	out := filepath.Join(b.TempDir(), "jobs.parquet")
	write := "COPY (SELECT " + strings.Join(names, ", ") + ", CASE WHEN Start IS NOT NULL AND AllocTRES IS NOT NULL THEN " + bill +
		" END AS billing FROM (SELECT *, " + cols + " FROM " + readSacctSQL(f.Sacct) + ")) TO " + SQLString(out) +
		" (FORMAT parquet, COMPRESSION zstd)"
	group := "SELECT Account AS account, CAST(Start AS DATE) AS day, count(*) AS jobs, sum(billing * ElapsedRaw) AS billing_sec" +
		" FROM read_parquet(" + SQLString(out) + ") WHERE billing IS NOT NULL GROUP BY ALL ORDER BY ALL"
	res, _ := measureYardstick(b, f, write, group)
	fi, err := os.Stat(out)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(len(res.Rows)), "groups")
	b.ReportMetric(float64(fi.Size())/1e6, "jobs-MB")
}
