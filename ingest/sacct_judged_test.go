package ingest

import (
	"fmt"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // Europe/Berlin without depending on the host's zoneinfo
)

// These tests judge odd sacct rows one by one (issue 35, "rows judged on
// their own"): each row is ingested as Slurm reads it and counted under a
// remark, skipped for a stated reason, or rejected with its position, never
// taken silently. The expected values are worked out by hand from the rows.

// judgedRow is a plain finished job of hdr's columns with the given
// JobID, JobIDRaw, Submit, Start, End, Elapsed, Suspended, State and
// AllocTRES.
func judgedRow(id, raw, submit, start, end, elapsed, susp, state, tres string) string {
	return fmt.Sprintf("%s|%s|c1|cpu|normal|labA|alice|%s|%s|%s|%s|%s|%s|%s|1|2|%s|01:00:00|j\n",
		id, raw, submit, submit, start, end, elapsed, susp, state, tres)
}

func TestSacctDuplicateTRES(t *testing.T) {
	t.Parallel()
	// Slurm's slurmdb_tres_list_from_string (src/common/slurmdb_defs.c),
	// with TRES_STR_FLAG_NONE, keeps the first count of a TRES named twice
	// and skips the later ones.
	in := hdr +
		judgedRow("1", "1", "2024-01-01T00:00:00", "2024-01-01T00:00:00", "2024-01-01T01:00:00", "01:00:00", "00:00:00", "COMPLETED",
			"billing=2,cpu=2,cpu=200000,mem=4G,node=1") +
		judgedRow("2", "2", "2024-01-01T00:00:00", "2024-01-01T00:00:00", "2024-01-01T01:00:00", "01:00:00", "00:00:00", "COMPLETED",
			"billing=2,cpu=2,mem=4G,node=1,CPU=7")
	res := readAll(t, "dup.txt", []byte(in), SacctOptions{})
	if res.err != nil || len(res.jobs) != 2 {
		t.Fatalf("err = %v, %d jobs, rejects %q", res.err, len(res.jobs), res.rejects)
	}
	for _, j := range res.jobs {
		if j.CPU != 2 || j.TRES["cpu"] != 2 || len(j.TRES) != 4 {
			t.Errorf("job %s: cpu column %v, alloc_tres %v, want cpu=2 (the first count) and 4 entries", j.JobID, j.CPU, j.TRES)
		}
	}
	if n := res.stats.Remarks[RemarkDuplicateTRES]; n != 2 {
		t.Errorf("remark %q counted %d times, want 2", RemarkDuplicateTRES, n)
	}
	if !hasWarning(res.stats, "2 rows: "+RemarkDuplicateTRES) {
		t.Errorf("warnings %q lack the duplicate TRES count", res.stats.Warnings)
	}
}

func hasWarning(st Stats, w string) bool {
	for _, x := range st.Warnings {
		if x == w {
			return true
		}
	}
	return false
}

func TestSacctTRESOverflow(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, tres, want string // want "" for an ingested row
	}{
		{"cpu past uint64", "billing=2,cpu=18446744073709551616,node=1",
			`AllocTRES="cpu=18446744073709551616": a count of 1.8446744073709552e+19 is 2^40 or more: no job holds that much; the row is damaged`},
		{"mem in petabytes", "cpu=2,mem=99999999P,node=1",
			`AllocTRES="mem=99999999P": a count of 1.0737418132625818e+17 is 2^40 or more: no job holds that much; the row is damaged`},
		{"billing", "billing=1099511627776,cpu=2,node=1",
			`AllocTRES="billing=1099511627776": a count of 1.099511627776e+12 is 2^40 or more: no job holds that much; the row is damaged`},
		// 1023P is 1023 × 1024³ MiB = 1,098,437,885,952 MiB, below 2^40.
		{"largest memory", "cpu=2,mem=1023P,node=1", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := hdr + judgedRow("1962", "1962", "2024-01-01T00:00:00", "2024-01-01T00:00:00", "2024-01-01T01:00:00",
				"01:00:00", "00:00:00", "COMPLETED", tt.tres)
			res := readAll(t, "big.txt", []byte(in), SacctOptions{})
			if tt.want == "" {
				if len(res.rejects) != 0 || len(res.jobs) != 1 || res.jobs[0].MemMB != 1098437885952 {
					t.Errorf("rejects %q, jobs %+v: want one job of 1098437885952 MiB", res.rejects, res.jobs)
				}
				return
			}
			want := "ingest big.txt:2: " + tt.want
			if len(res.rejects) != 1 || res.rejects[0] != want || res.stats.Rejected != 1 {
				t.Errorf("rejects = %q, want [%q]", res.rejects, want)
			}
		})
	}
	// A negative billing (negative TRESBillingWeights) reaches sacct as
	// the uint64 slurmctld cast it to (job_set_alloc_tres), the x86-64
	// bits of its truncation: −3.5 → 2^64 − 3 = 18446744073709551613, and
	// −1.x → INFINITE64, printed "NONE" by
	// slurmdb_make_tres_string_from_simple. Both rows are ingested with the
	// negative integer; the same count of another TRES is still damage.
	for _, tt := range []struct{ tres, want string }{
		{"billing=18446744073709551613,cpu=1,node=1", "-3"},
		{"billing=NONE,cpu=1,node=1", "-1"},
		{"billing=9223372036854775808,cpu=1,node=1", "-9.223372036854776e+18"}, // −2^63
	} {
		in := hdr + judgedRow("1963", "1963", "2024-01-01T00:00:00", "2024-01-01T00:00:00", "2024-01-01T01:00:00",
			"01:00:00", "00:00:00", "COMPLETED", tt.tres)
		res := readAll(t, "neg.txt", []byte(in), SacctOptions{})
		if len(res.rejects) != 0 || len(res.jobs) != 1 || res.jobs[0].BillingSacct != tt.want {
			t.Errorf("%s: rejects %q, jobs %+v; want one job of billing %s", tt.tres, res.rejects, res.jobs, tt.want)
		}
	}
	if res := readAll(t, "neg.txt", []byte(hdr+judgedRow("1964", "1964", "2024-01-01T00:00:00", "2024-01-01T00:00:00", "2024-01-01T01:00:00",
		"01:00:00", "00:00:00", "COMPLETED", "cpu=18446744073709551613,node=1")), SacctOptions{}); len(res.rejects) != 1 {
		t.Errorf("cpu=18446744073709551613: rejects %q, want the row refused", res.rejects)
	}

	// AllocCPUS and NNodes stand in for a missing cpu or node TRES.
	in := hdr + "7|7|c1|cpu|normal|labA|alice|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|01:00:00|00:00:00|COMPLETED|1|2000000000000||01:00:00|j\n"
	res := readAll(t, "big.txt", []byte(in), SacctOptions{})
	want := `ingest big.txt:2: AllocCPUS="2000000000000": a count of 2e+12 is 2^40 or more: no job holds that much; the row is damaged`
	if len(res.rejects) != 1 || res.rejects[0] != want {
		t.Errorf("rejects = %q, want [%q]", res.rejects, want)
	}
}

func TestSacctRangeNotPending(t *testing.T) {
	t.Parallel()
	const (
		s = "2024-01-01T00:00:00"
		e = "2024-01-01T01:00:00"
	)
	in := hdr +
		judgedRow("9000002_[2-5%3]", "9000002", s, s, e, "01:00:00", "00:00:00", "COMPLETED", "cpu=2,node=1") + // line 2
		judgedRow("9000003_[1-4]", "9000003", s, s, "Unknown", "01:00:00", "00:00:00", "RUNNING", "cpu=2,node=1") + // line 3
		judgedRow("9000004_[1-4]", "9000004", s, "Unknown", "Unknown", "00:00:00", "00:00:00", "PENDING", "") + // line 4
		judgedRow("9000005_[1-4]", "9000005", s, "None", e, "00:00:00", "00:00:00", "CANCELLED by 42", "") // line 5
	res := readAll(t, "ranges.txt", []byte(in), SacctOptions{})
	want := []string{
		`ingest ranges.txt:2: JobID="9000002_[2-5%3]": an array range in state COMPLETED that started: sacct prints a range only for tasks still pending; the row is damaged (fetch the tasks with sacct --array)`,
		`ingest ranges.txt:3: JobID="9000003_[1-4]": an array range in state RUNNING that started: sacct prints a range only for tasks still pending; the row is damaged (fetch the tasks with sacct --array)`,
	}
	if strings.Join(res.rejects, "\n") != strings.Join(want, "\n") {
		t.Errorf("rejects =\n%s\nwant\n%s", strings.Join(res.rejects, "\n"), strings.Join(want, "\n"))
	}
	if st := res.stats; st.Read != 4 || st.Rejected != 2 || st.Skipped[SkipPendingArray] != 2 || st.Ingested != 0 {
		t.Errorf("stats = %s, want read 4, rejected 2, 2 pending array ranges", st.String())
	}
}

// berlin is the Europe/Berlin zone; its clocks went back from 03:00 CEST
// (UTC+2) to 02:00 CET (UTC+1) on 2026-10-25, so 02:00–02:59 came twice.
func berlin(t *testing.T) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func TestSacctFallBack(t *testing.T) {
	t.Parallel()
	loc := berlin(t)
	utc := func(h, m int) string { return fmt.Sprint(time.Date(2026, 10, 25, h, m, 0, 0, time.UTC).Unix()) }
	const hdrRaw = "JobID|JobIDRaw|Cluster|Partition|QOS|Account|User|Submit|Eligible|Start|End|Elapsed|ElapsedRaw|Suspended|State|NNodes|AllocCPUS|AllocTRES|Timelimit|JobName\n"
	row := func(id, start, end, elapsed, raw string) string {
		return fmt.Sprintf("%s|%s|c1|cpu|normal|labA|alice|2026-10-24T12:00:00|2026-10-24T12:00:00|%s|%s|%s|%s|00:00:00|COMPLETED|1|2|cpu=2,node=1|02:00:00|j\n",
			id, id, start, end, elapsed, raw)
	}
	tests := []struct {
		name, row          string
		wantStart, wantEnd string
		remarks            int64 // RemarkElapsed
	}{
		// The job: started 02:50 CEST (00:50Z), ended 02:20 CET
		// (01:20Z), 30 minutes.
		{"across the fall-back", row("1", "2026-10-25T02:50:00", "2026-10-25T02:20:00", "00:30:00", "1800"), utc(0, 50), utc(1, 20), 0},
		// 02:10 CEST (00:10Z) to 02:40 CET (01:40Z): 90 minutes.
		{"90 minutes in the repeated hour", row("2", "2026-10-25T02:10:00", "2026-10-25T02:40:00", "01:30:00", "5400"), utc(0, 10), utc(1, 40), 0},
		// From 01:30 CEST (23:30Z) to 02:30 the first time (00:30Z): one hour.
		{"end in the first pass", row("3", "2026-10-25T01:30:00", "2026-10-25T02:30:00", "01:00:00", "3600"), fmt.Sprint(time.Date(2026, 10, 24, 23, 30, 0, 0, time.UTC).Unix()), utc(0, 30), 0},
		// From 02:30 the second time (01:30Z) to 03:10 CET (02:10Z): 40 minutes.
		{"start in the second pass", row("4", "2026-10-25T02:30:00", "2026-10-25T03:10:00", "00:40:00", "2400"), utc(1, 30), utc(2, 10), 0},
		// Without Elapsed: End's wall clock before Start's can only be End's
		// second pass after Start's first.
		{"no Elapsed", row("5", "2026-10-25T02:50:00", "2026-10-25T02:20:00", "", ""), utc(0, 50), utc(1, 20), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := readAll(t, "dst.txt", []byte(hdrRaw+tt.row), SacctOptions{Location: loc})
			if len(res.rejects) != 0 || len(res.jobs) != 1 {
				t.Fatalf("rejects %q, %d jobs: want the job ingested", res.rejects, len(res.jobs))
			}
			if j := res.jobs[0]; j.Start != tt.wantStart || j.End != tt.wantEnd {
				t.Errorf("start, end = %s, %s, want %s, %s", j.Start, j.End, tt.wantStart, tt.wantEnd)
			}
			if n := res.stats.Remarks[RemarkElapsed]; n != tt.remarks {
				t.Errorf("%d Elapsed remarks, want %d", n, tt.remarks)
			}
		})
	}
}

func TestSacctOddRowsCounted(t *testing.T) {
	t.Parallel()
	const (
		s  = "2024-01-01T00:00:00"
		e  = "2024-01-01T01:00:00"
		tr = "billing=2,cpu=2,node=1"
	)
	tests := []struct {
		name, row, remark string
	}{
		{"unknown state", judgedRow("1", "1", s, s, e, "01:00:00", "00:00:00", "EXPLODED", tr), RemarkUnknownState},
		// Slurm's Elapsed is End − Start less Suspended (slurmdbd's
		// as_mysql_jobacct_process.c), so Suspended may well exceed it;
		// but never End − Start.
		{"suspended past the run", judgedRow("2", "2", s, s, e, "01:00:00", "02:00:00", "COMPLETED", tr), RemarkSuspended},
		{"submit after start", judgedRow("3", "3", "2024-01-01T00:30:00", s, e, "01:00:00", "00:00:00", "COMPLETED", tr), RemarkSubmitAfterStart},
		{"JobIDRaw of another job", judgedRow("4", "5", s, s, e, "01:00:00", "00:00:00", "COMPLETED", tr), RemarkJobIDRaw},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := readAll(t, "odd.txt", []byte(hdr+tt.row), SacctOptions{})
			if len(res.rejects) != 0 || res.stats.Ingested != 1 {
				t.Fatalf("rejects %q, stats %s: want the row ingested", res.rejects, res.stats.String())
			}
			if n := res.stats.Remarks[tt.remark]; n != 1 || len(res.stats.Remarks) != 1 {
				t.Errorf("remarks %v, want %q once", res.stats.Remarks, tt.remark)
			}
			if !hasWarning(res.stats, "1 rows: "+tt.remark) {
				t.Errorf("warnings %q lack %q", res.stats.Warnings, tt.remark)
			}
		})
	}
	// The usual rows draw no remark: a suspended job whose Elapsed excludes
	// its suspension, an array task and a het component whose JobIDRaw
	// differs from their JobID as Slurm prints it.
	in := hdr +
		judgedRow("10", "10", s, s, "2024-01-01T03:00:00", "01:00:00", "02:00:00", "COMPLETED", tr) +
		judgedRow("11_3", "14", s, s, e, "01:00:00", "00:00:00", "COMPLETED", tr) +
		judgedRow("12+1", "13", s, s, e, "01:00:00", "00:00:00", "CANCELLED by 7", tr) +
		judgedRow("15", "15", s, s, e, "01:00:00", "00:00:00", "OUT_OF_MEMORY", tr)
	res := readAll(t, "usual.txt", []byte(in), SacctOptions{})
	if res.stats.Ingested != 4 || len(res.stats.Remarks) != 0 {
		t.Errorf("stats %s, remarks %v: want 4 rows ingested without a remark", res.stats.String(), res.stats.Remarks)
	}
}

func TestUnknownPriorityFlags(t *testing.T) {
	t.Parallel()
	// slurmctld reads PriorityFlags by searching the value for each flag
	// it knows (xstrcasestr in read_config.c, _validate_and_set_defaults):
	// an unknown word is ignored, without a message. fairledger ignores it
	// as well, with a warning naming it.
	c, err := confParse(t, `PriorityFlags=MAX_TRES,FAIR_TREEE,calculate_running`, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := `test.conf:1: PriorityFlags item "FAIR_TREEE" is no flag Slurm knows: ignored, as slurmctld ignores it (it reads only the flags it knows; check the spelling)`
	n := 0
	for _, w := range c.Warnings {
		if strings.Contains(w, "PriorityFlags item") {
			n++
			if w != want {
				t.Errorf("warning %q, want %q", w, want)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d PriorityFlags warnings in %q, want 1", n, c.Warnings)
	}
}

func TestUnknownQOSFlag(t *testing.T) {
	t.Parallel()
	in := "Name|UsageFactor|Flags\n" +
		"normal|1.000000|DenyOnLimit,NoDecay\n" +
		"odd|1.000000|NoDecay,Explode\n" +
		"odd2|1.000000|Explode\n"
	tab, st, err := ParseQOS("qos.psv", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Rows) != 3 || !tab.Rows[1].NoDecay || st.Ingested != 3 || !st.Balanced() {
		t.Fatalf("rows %+v, stats %s", tab.Rows, st.String())
	}
	want := []string{`2 rows: a QOS flag Slurm does not know (first "Explode", line 3): ignored; only NoDecay matters to fair share`}
	if strings.Join(st.Warnings, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings %q, want %q", st.Warnings, want)
	}
}
