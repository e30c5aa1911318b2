package ingest

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// fileErr returns err as a *FileError, failing the test when it is not one.
func fileErr(t *testing.T, err error) *FileError {
	t.Helper()
	var fe *FileError
	if !errors.As(err, &fe) {
		t.Fatalf("err = %v (%T), want a *FileError", err, err)
	}
	return fe
}

// withoutColumn removes the column title from a headered sacct text.
func withoutColumn(t *testing.T, text, title string) string {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	i := slices.Index(strings.Split(lines[0], "|"), title)
	if i < 0 {
		t.Fatalf("no column %s", title)
	}
	for k, ln := range lines {
		f := strings.Split(ln, "|")
		lines[k] = strings.Join(slices.Delete(f, i, i+1), "|")
	}
	return strings.Join(lines, "\n") + "\n"
}

// goodRows are n finished jobs of the hdr layout, one line each.
func goodRows(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "%d|%d|c1|cpu|normal|labA|alice|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|2024-01-01T02:00:00|01:00:00|00:00:00|COMPLETED|1|4|billing=4,cpu=4,mem=16G,node=1|1-00:00:00|job%d\n", 100+i, 100+i, i)
	}
	return b.String()
}

// TestSacctMissingColumn: a file without a column every job needs (End,
// Account, AllocTRES …) is one FileError at open naming the file, the
// header line, the columns and the -o list, not 2,000 rejected rows and an
// empty night.
func TestSacctMissingColumn(t *testing.T) {
	t.Parallel()
	full := hdr + goodRows(20)
	for _, tc := range []struct {
		drop []string
		want string
	}{
		{[]string{"End"}, "ingest night.psv:1: no End column in the header (a run needs them for every job): fetch with sacct -o " + strings.Join(RunFields, ",")},
		{[]string{"Account", "AllocTRES"}, "ingest night.psv:1: no Account, AllocTRES columns in the header"},
		{[]string{"Start"}, "no Start column"}, // else every job would be skipped as never started
		{[]string{"User"}, "no User column"},
		{[]string{"State"}, "no State column"},
		{[]string{"Partition"}, "no Partition column"},
	} {
		text := full
		for _, c := range tc.drop {
			text = withoutColumn(t, text, c)
		}
		res := readAll(t, "night.psv", []byte(text), SacctOptions{})
		fe := fileErr(t, res.err)
		if !strings.Contains(fe.Error(), tc.want) || fe.Line != 1 || !slices.Equal(fe.Columns, tc.drop) || res.stats.Read != 0 {
			t.Errorf("without %v: %v (line %d, columns %v, %d rows read), want %q at line 1 before any row", tc.drop, fe, fe.Line, fe.Columns, res.stats.Read, tc.want)
		}
	}
	// JobIDRaw stands in for JobID, and the optional columns may go: each
	// has its fallback (docs/inputs.md).
	text := withoutColumn(t, full, "JobID")
	for _, c := range []string{"Cluster", "QOS", "Submit", "Eligible", "Elapsed", "Suspended", "NNodes", "AllocCPUS", "Timelimit", "JobName"} {
		text = withoutColumn(t, text, c)
	}
	if res := readAll(t, "night.psv", []byte(text), SacctOptions{Cluster: "c1"}); res.err != nil || res.stats.Ingested != 20 {
		t.Errorf("the required columns alone: err %v, %s; want 20 ingested", res.err, res.stats.String())
	}
}

// TestSacctWrongPreset: a headerless file read with the wrong
// --sacct-fields preset is one FileError naming the preset that fits.
func TestSacctWrongPreset(t *testing.T) {
	t.Parallel()
	xdmod := mustRead(t, "../testdata/sacct/sacct_xdmod_shredder_accounting-logs.psv")
	res := readAll(t, "x.psv", xdmod, SacctOptions{Fields: []string{"fairledger"}})
	fe := fileErr(t, res.err)
	if want := "ingest x.psv:1: the rows have 26 fields, --sacct-fields fairledger has 22: the file was written with another -o list: try --sacct-fields xdmod"; fe.Error() != want {
		t.Errorf("xdmod file as fairledger:\n got %s\nwant %s", fe, want)
	}
	// A headerless file of the fairledger preset's columns, read as xdmod.
	var rows strings.Builder
	for i := 0; i < 3; i++ {
		// JobID,JobIDRaw,Cluster,Partition,QOS,Account,User,Submit,Eligible,Start,End,Elapsed,ElapsedRaw,Suspended,State,ExitCode,NNodes,AllocCPUS,ReqTRES,AllocTRES,Timelimit,JobName
		fmt.Fprintf(&rows, "%d|%d|c1|cpu|normal|labA|alice|1704067200|1704067200|1704070800|1704074400|01:00:00|3600|00:00:00|COMPLETED|0:0|1|4|billing=4,cpu=4,mem=16G,node=1|billing=4,cpu=4,mem=16G,node=1|1-00:00:00|job\n", 100+i, 100+i)
	}
	res = readAll(t, "f.psv", []byte(rows.String()), SacctOptions{Fields: []string{"xdmod"}})
	fe = fileErr(t, res.err)
	if want := "ingest f.psv:1: the rows have 22 fields, --sacct-fields xdmod has 26: the file was written with another -o list: try --sacct-fields fairledger"; fe.Error() != want {
		t.Errorf("fairledger file as xdmod:\n got %s\nwant %s", fe, want)
	}
	if res := readAll(t, "f.psv", []byte(rows.String()), SacctOptions{Fields: []string{"fairledger"}}); res.err != nil || res.stats.Ingested != 3 {
		t.Errorf("the right preset: err %v, %s", res.err, res.stats.String())
	}
	// A list of the right length in the wrong order: Start and User swapped.
	swapped := slices.Clone(RunFields)
	swapped[6], swapped[9] = swapped[9], swapped[6]
	res = readAll(t, "f.psv", []byte(rows.String()), SacctOptions{Fields: swapped})
	fe = fileErr(t, res.err)
	if want := `ingest f.psv:1: the rows do not fit the --sacct-fields list: Start="alice" (line 1) do not fit their columns: the file was written with another -o list: try --sacct-fields fairledger`; fe.Error() != want || !slices.Equal(fe.Columns, []string{"Start"}) {
		t.Errorf("swapped list:\n got %s (columns %v)\nwant %s", fe, fe.Columns, want)
	}
	// No preset fits: the message says to pass the file's own -o list.
	odd := strings.ReplaceAll(rows.String(), "|c1|", "|c1|extra|")
	res = readAll(t, "f.psv", []byte(odd), SacctOptions{Fields: []string{"xdmod"}})
	if fe := fileErr(t, res.err); !strings.HasSuffix(fe.Error(), "the rows have 23 fields, --sacct-fields xdmod has 26: pass the -o list the file was written with as --sacct-fields, or fetch it with its header (sacct without -n)") {
		t.Errorf("no preset fits: %s", fe)
	}
}

// TestSacctHeaderDoesNotFit: a header whose columns the rows' values do
// not fit (it belongs to another -o list of the same length) is one
// FileError, while a bad value in a row stays that row's rejection.
func TestSacctHeaderDoesNotFit(t *testing.T) {
	t.Parallel()
	// The header says Start where the rows hold the user, and User where
	// they hold the start.
	h := strings.Replace(strings.Replace(hdr, "|User|", "|TMP|", 1), "|Start|", "|User|", 1)
	h = strings.Replace(h, "|TMP|", "|Start|", 1)
	res := readAll(t, "night.psv", []byte(h+goodRows(5)), SacctOptions{})
	fe := fileErr(t, res.err)
	if want := `ingest night.psv:2: the rows do not fit the header: Start="alice" (line 2) do not fit their columns in any row read: was the header edited, or written for another file? Fetch the file again with its header (sacct -P -o …)`; fe.Error() != want {
		t.Errorf("\n got %s\nwant %s", fe, want)
	}
	// A header with one column less than its rows (Timelimit removed) and
	// JobName, free text, not last: no '|' recovery explains the extra
	// field.
	h = strings.Replace(hdr, "|Timelimit|JobName\n", "|JobName|NNodes2\n", 1)
	h = strings.Replace(h, "|Suspended|", "|", 1)
	res = readAll(t, "night.psv", []byte(h+goodRows(3)), SacctOptions{})
	fe = fileErr(t, res.err)
	if want := `ingest night.psv:2: the header has 18 columns, rows have 19, and no '|' in a free-text column explains it in any row read: was the header edited?`; fe.Error() != want {
		t.Errorf("\n got %s\nwant %s", fe, want)
	}
	// One bad Start among good rows, or in a file of one row: a rejected
	// row (exit 3), the others ingested.
	bad := strings.Replace(goodRows(1), "2024-01-01T01:00:00", "yesterday", 1)
	for _, text := range []string{hdr + goodRows(3) + bad, hdr + bad} {
		res := readAll(t, "night.psv", []byte(text), SacctOptions{})
		if res.err != nil || res.stats.Rejected != 1 || len(res.rejects) != 1 || !strings.Contains(res.rejects[0], `Start="yesterday"`) {
			t.Errorf("a bad row: err %v, %s, rejects %q; want the row rejected", res.err, res.stats.String(), res.rejects)
		}
	}
}

// TestSacctAllRejected: from AllRejectedMin job records on, a file whose
// every job record is rejected is a FileError at its end (the run stops
// before it commits), after the rows were reported one by one; fewer stay
// plain rejections.
func TestSacctAllRejected(t *testing.T) {
	t.Parallel()
	noAccount := func(n int) string { return strings.ReplaceAll(goodRows(n), "|labA|", "||") }
	res := readAll(t, "night.psv", []byte(hdr+noAccount(AllRejectedMin)), SacctOptions{})
	fe := fileErr(t, res.err)
	if want := `ingest night.psv: all 10 job records rejected, none ingested (the first: ingest night.psv:2: Account="": empty): the file, not its rows, is wrong; nothing is written. Fix the file (see the rejected rows, --rejects) and run again`; fe.Error() != want {
		t.Errorf("\n got %s\nwant %s", fe, want)
	}
	if len(res.rejects) != AllRejectedMin || res.stats.Rejected != AllRejectedMin {
		t.Errorf("rejects %d, stats %s: want every row reported", len(res.rejects), res.stats.String())
	}
	// Job steps do not count as job records, and one good row is enough.
	var steps string // 1xx.batch|1xx.batch|…: job steps, skipped
	for _, ln := range strings.SplitAfter(noAccount(20), "\n") {
		if f := strings.SplitN(ln, "|", 3); len(f) == 3 {
			steps += f[0] + ".batch|" + f[1] + ".batch|" + f[2]
		}
	}
	for _, text := range []string{hdr + noAccount(AllRejectedMin-1), hdr + noAccount(20) + goodRows(1), hdr + steps} {
		if res := readAll(t, "night.psv", []byte(text), SacctOptions{}); res.err != nil {
			t.Errorf("%s: err %v, want none", res.stats.String(), res.err)
		}
	}
}

// TestSacctPriorityColumns: with Require (PriorityRequired, as run
// --priority sets it) a file without the request columns is refused,
// naming them and the sacct -s and -o to use.
func TestSacctPriorityColumns(t *testing.T) {
	t.Parallel()
	opt := SacctOptions{Require: PriorityRequired, RequireFor: "run --priority", KeepPending: true, RequestColumns: true}
	res := readAll(t, "night.psv", []byte(hdr+goodRows(3)), opt)
	fe := fileErr(t, res.err)
	want := "ingest night.psv:1: no ReqCPUS, ReqNodes, ReqTRES, SubmitLine columns in the header (run --priority needs them): fetch with sacct -s " +
		PriorityStates + " -o " + strings.Join(PriorityFields, ",")
	if fe.Error() != want || !slices.Equal(fe.Columns, []string{"ReqCPUS", "ReqNodes", "ReqTRES", "SubmitLine"}) {
		t.Errorf("\n got %s\nwant %s", fe, want)
	}
	// With RequireWarn (run --priority-partial) the file is read, with a
	// warning naming the columns.
	warn := opt
	warn.RequireWarn = true
	if res := readAll(t, "night.psv", []byte(hdr+goodRows(3)), warn); res.err != nil || res.stats.Ingested != 3 || len(res.stats.Warnings) != 1 ||
		res.stats.Warnings[0] != "no ReqCPUS, ReqNodes, ReqTRES, SubmitLine column(s), which run --priority needs: read without them, their values unknown" {
		t.Errorf("RequireWarn: err %v, %s, warnings %q", res.err, res.stats.String(), res.stats.Warnings)
	}
	// Every required column present: read.
	h := strings.TrimSuffix(hdr, "\n") + "|ReqCPUS|ReqNodes|ReqTRES|SubmitLine\n"
	rows := strings.ReplaceAll(goodRows(3), "\n", "|4|1|cpu=4,mem=16G,node=1|sbatch job.sh\n")
	if res := readAll(t, "night.psv", []byte(h+rows), opt); res.err != nil || res.stats.Ingested != 3 {
		t.Errorf("with the request columns: err %v, %s", res.err, res.stats.String())
	}
	// The -o list named is one sacct accepts as a whole and the reader
	// takes: it has every required column.
	l := &sacctLayout{}
	if err := l.init(PriorityFields); err != nil || len(l.missing) > 0 || len(l.requiredMissing(PriorityRequired)) > 0 {
		t.Errorf("PriorityFields lacks %v %v (%v)", l.missing, l.requiredMissing(PriorityRequired), err)
	}
	if err := l.init(RunFields); err != nil || len(l.missing) > 0 {
		t.Errorf("RunFields lacks %v (%v)", l.missing, err)
	}
}

// TestSacctNoNeverStarted: read for job priority, a big file without a
// single job that never started is read with a warning about -s.
func TestSacctNoNeverStarted(t *testing.T) {
	t.Parallel()
	opt := SacctOptions{KeepPending: true}
	res := readAll(t, "night.psv", []byte(hdr+goodRows(NoNeverStartedMin)), opt)
	if res.err != nil || len(res.stats.Warnings) != 1 || !strings.Contains(res.stats.Warnings[0], "1000 jobs and not one that never started: was sacct run without -s "+PriorityStates) {
		t.Errorf("err %v, warnings %q", res.err, res.stats.Warnings)
	}
	pending := "9|9|c1|cpu|normal|labA|alice|2024-01-01T00:00:00|Unknown|Unknown|Unknown|00:00:00|00:00:00|PENDING|1|0||01:00:00|wait\n"
	for _, text := range []string{hdr + goodRows(NoNeverStartedMin) + pending, hdr + goodRows(NoNeverStartedMin-1)} {
		if res := readAll(t, "night.psv", []byte(text), opt); res.err != nil || len(res.stats.Warnings) != 0 {
			t.Errorf("err %v, warnings %q; want none", res.err, res.stats.Warnings)
		}
	}
	if res := readAll(t, "night.psv", []byte(hdr+goodRows(NoNeverStartedMin)), SacctOptions{}); len(res.stats.Warnings) != 0 {
		t.Errorf("without KeepPending: warnings %q", res.stats.Warnings)
	}
}

// FuzzSacctFileChecks feeds the file-level checks (the header's and the
// --sacct-fields list's fit to the first rows, every record rejected)
// arbitrary text, with a header or a preset: they never panic, and a file
// they let through is read with every row accounted for.
func FuzzSacctFileChecks(f *testing.F) {
	f.Add([]byte(hdr+goodRows(3)), "")
	f.Add([]byte(goodRows(2)), "fairledger")
	f.Add(mustRead(f, "../testdata/sacct/sacct_xdmod_shredder_accounting-logs.psv"), "fairledger")
	f.Add([]byte("1|2|3\n\n4|5|6|\n"), "xdmod")
	f.Fuzz(func(t *testing.T, data []byte, preset string) {
		if len(data) > 64<<10 {
			return // the checks read the first rows only; the rest is FuzzSacct's
		}
		var fields []string
		if preset != "" {
			fields = []string{preset}
		}
		r, err := NewSacctReader("f.txt", bytes.NewReader(data), SacctOptions{Fields: fields, ChunkBytes: 4096, Workers: 2})
		if err != nil {
			return
		}
		defer r.Close()
		for {
			rec, err := r.Next()
			if err != nil {
				break
			}
			rec.Release()
		}
		if st := r.Stats(); !st.Balanced() {
			t.Fatalf("stats %s", st.String())
		}
	})
}
