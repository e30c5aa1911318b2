package ingest

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// The reproduction: a Latin-1 byte (é = 0xE9) in a name. Every
// text column that goes into the history is checked, not only the four
// names; the row is rejected with the field and its value, the others are
// ingested.
func TestSacctRejectsNonUTF8(t *testing.T) {
	t.Parallel()
	const good = "1|1|c|p|q|a|u|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|01:00:00|00:00:00|COMPLETED|1|1|cpu=1|01:00:00|j"
	fields := strings.Split(strings.TrimSuffix(hdr, "\n"), "|")
	for _, field := range []string{"Cluster", "Partition", "QOS", "Account", "User", "JobName", "State"} {
		t.Run(field, func(t *testing.T) {
			f := strings.Split(good, "|")
			i := indexOf(fields, field)
			if field == "State" {
				f[i] = "CANCELLED by lrahm\xe9"
			} else {
				f[i] = "lrahm\xe9"
			}
			in := hdr + good + "\n" + strings.Join(f, "|") + "\n" + good + "\n"
			res := readAll(t, "r.txt", []byte(in), SacctOptions{})
			want := "ingest r.txt:3: " + field + "=" + strconv.Quote(f[i]) + ": not valid UTF-8"
			if res.stats.Ingested != 2 || res.stats.Rejected != 1 || len(res.rejects) != 1 || !strings.HasPrefix(res.rejects[0], want) {
				t.Fatalf("stats %s, rejects %q; want one starting %q", res.stats.String(), res.rejects, want)
			}
		})
	}
	// Valid UTF-8 beyond ASCII is a name like any other.
	f := strings.Split(good, "|")
	f[indexOf(fields, "User")] = "café"
	res := readAll(t, "r.txt", []byte(hdr+strings.Join(f, "|")+"\n"), SacctOptions{})
	if res.stats.Ingested != 1 || len(res.jobs) != 1 || res.jobs[0].User != "café" {
		t.Fatalf("UTF-8 name: stats %s, jobs %+v", res.stats.String(), res.jobs)
	}
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	panic(s)
}

// Times no Slurm cluster can have recorded: before 2002 (the 1970,
// 1969 and year 0001 starts) and after the moment of the run (its End in
// 2100 and 9999, and a finished job with End Unknown and an Elapsed that
// would end it in the future).
func TestSacctRejectsImplausibleTimes(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	opt := SacctOptions{Bounds: RunBounds(now)}
	row := func(start, end, elapsed, state string) string {
		return "1|1|c|p|q|a|u|" + start + "|" + start + "|" + start + "|" + end + "|" + elapsed + "|00:00:00|" + state + "|1|1|cpu=1|01:00:00|j"
	}
	tests := []struct {
		name, row, want string
	}{
		{"start 1970", row("1970-01-01T00:00:00", "1970-01-01T01:00:00", "01:00:00", "COMPLETED"),
			`Start="1970-01-01T00:00:00": before 2002-01-01: Slurm did not exist then`},
		{"submit 1970", "1|1|c|p|q|a|u|1970-01-01T00:00:00||2024-01-01T00:00:00|2024-01-01T01:00:00|01:00:00|00:00:00|COMPLETED|1|1|cpu=1|01:00:00|j",
			`Submit="1970-01-01T00:00:00": before 2002-01-01`},
		{"start 1969", "1|1|c|p|q|a|u|||1969-12-31T23:00:00|2024-01-01T01:00:00|01:00:00|00:00:00|COMPLETED|1|1|cpu=1|01:00:00|j",
			`Start="1969-12-31T23:00:00": before 2002-01-01`},
		{"start 0001", "1|1|c|p|q|a|u|||0001-01-01T00:00:00|2024-01-01T01:00:00|01:00:00|00:00:00|COMPLETED|1|1|cpu=1|01:00:00|j",
			`Start="0001-01-01T00:00:00": before 2002-01-01`},
		{"running job started 1999", "1|1|c|p|q|a|u|||1999-06-01T00:00:00|Unknown|01:00:00|00:00:00|RUNNING|1|1|cpu=1|01:00:00|j",
			`Start="1999-06-01T00:00:00": before 2002-01-01`},
		{"end 2100", "1|1|c|p|q|a|u|||2026-11-01T00:00:00|2100-01-01T00:00:00|01:00:00|00:00:00|COMPLETED|1|1|cpu=1|01:00:00|j",
			`End="2100-01-01T00:00:00": after the moment of the run (2026-11-26T12:00:00Z)`},
		{"end 9999", "1|1|c|p|q|a|u|||2026-11-01T00:00:00|9999-12-31T23:59:59|01:00:00|00:00:00|COMPLETED|1|1|cpu=1|01:00:00|j",
			`End="9999-12-31T23:59:59": after the moment of the run`},
		{"start in the future", "1|1|c|p|q|a|u|||2026-11-27T00:00:00|Unknown|01:00:00|00:00:00|RUNNING|1|1|cpu=1|01:00:00|j",
			`Start="2026-11-27T00:00:00": after the moment of the run`},
		{"End Unknown, huge Elapsed", "1|1|c|p|q|a|u|||2026-11-01T00:00:00|Unknown|99999-00:00:00|00:00:00|COMPLETED|1|1|cpu=1|01:00:00|j",
			`Elapsed="99999-00:00:00": the End it gives (Start + Elapsed) is after the moment of the run`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := readAll(t, "r.txt", []byte(hdr+tt.row+"\n"), opt)
			want := "ingest r.txt:2: " + tt.want
			if res.stats.Rejected != 1 || len(res.rejects) != 1 || !strings.HasPrefix(res.rejects[0], want) {
				t.Fatalf("stats %s, rejects %q; want one starting %q", res.stats.String(), res.rejects, want)
			}
		})
	}
	// Within the clock skew after now: a controller clock a little ahead.
	ahead := now.Add(ClockSkew - time.Second).Format("2006-01-02T15:04:05")
	res := readAll(t, "r.txt", []byte(hdr+row("2026-11-26T11:00:00", ahead, "01:04:59", "COMPLETED")+"\n"), opt)
	if res.stats.Ingested != 1 {
		t.Fatalf("end within the clock skew: %s %q", res.stats.String(), res.rejects)
	}
	// The zero value bounds only the past: a library caller without a
	// moment of its own is not refused a 2100 End.
	res = readAll(t, "r.txt", []byte(hdr+row("2026-11-01T00:00:00", "2100-01-01T00:00:00", "01:00:00", "COMPLETED")+"\n"), SacctOptions{})
	if res.stats.Ingested != 1 {
		t.Fatalf("zero bounds: %s %q", res.stats.String(), res.rejects)
	}
}

// A finished job whose Elapsed is not End − Start (less Suspended) is
// charged End − Start, and counted and warned about.
func TestSacctElapsedDisagrees(t *testing.T) {
	t.Parallel()
	in := hdr +
		// 1 h run, Elapsed 1 h: agrees.
		"1|1|c|p|q|a|u|||2024-01-01T00:00:00|2024-01-01T01:00:00|01:00:00|00:00:00|COMPLETED|1|1|cpu=1|01:00:00|j\n" +
		// 1 h between Start and End, suspended 10 min, Elapsed 50 min: agrees.
		"2|2|c|p|q|a|u|||2024-01-01T00:00:00|2024-01-01T01:00:00|00:50:00|00:10:00|COMPLETED|1|1|cpu=1|01:00:00|j\n" +
		// 1 h between Start and End, Elapsed 3 h: disagrees.
		"3|3|c|p|q|a|u|||2024-01-01T00:00:00|2024-01-01T01:00:00|03:00:00|00:00:00|COMPLETED|1|1|cpu=1|01:00:00|j\n" +
		// A running job's Elapsed is up to when sacct looked: not compared.
		"4|4|c|p|q|a|u|||2024-01-01T00:00:00|Unknown|05:00:00|00:00:00|RUNNING|1|1|cpu=1|01:00:00|j\n"
	res := readAll(t, "r.txt", []byte(in), SacctOptions{})
	if res.stats.Ingested != 4 || res.stats.Remarks[RemarkElapsed] != 1 || len(res.stats.Remarks) != 1 {
		t.Fatalf("stats %s, remarks %v", res.stats.String(), res.stats.Remarks)
	}
	if res.jobs[2].End != "1704070800" { // 2024-01-01T01:00:00Z: End as given
		t.Errorf("job 3 End = %s", res.jobs[2].End)
	}
	want := "1 rows: " + RemarkElapsed
	if w := res.stats.Warnings; len(w) != 1 || w[0] != want {
		t.Errorf("warnings = %q, want [%q]", w, want)
	}
}

// A Latin-1 byte in the association dump's Account (the case), in
// a sacctmgr script, in the QOS dump and in slurm.conf is refused with the
// file, line, field and value, like a sacct row.
func TestNonUTF8InConfiguration(t *testing.T) {
	t.Parallel()
	assoc := "Cluster|Account|User|Partition|ParentName|Share\n" +
		"c1|root||||1\n" +
		"c1|caf\xe9||||root|10\n" +
		"c1|labA||||root|10\n"
	_, st, err := ParseAssoc("assoc.psv", strings.NewReader(strings.ReplaceAll(assoc, "||||root", "|||root")))
	want := `ingest assoc.psv:3: Account="caf\xe9": not valid UTF-8`
	if err == nil || !strings.Contains(err.Error(), want) || st.Rejected != 1 || st.Ingested != 2 {
		t.Errorf("assoc dump: err %v, stats %s; want %q", err, st.String(), want)
	}

	script := "add cluster c1\nadd account caf\xe9 cluster=c1 fairshare=10\nadd account labA cluster=c1 fairshare=10\n"
	_, st, err = ParseAssocScript("assoc.txt", strings.NewReader(script))
	want = `ingest assoc.txt:2: not valid UTF-8`
	if err == nil || !strings.Contains(err.Error(), want) || st.Rejected != 1 {
		t.Errorf("assoc script: err %v, stats %s; want %q", err, st.String(), want)
	}

	qos := "Name|UsageFactor|Flags\nnormal|1.000000|\nh\xe4lfte|0.500000|\n"
	q, st, err := ParseQOS("qos.psv", strings.NewReader(qos))
	want = `ingest qos.psv:3: Name="h\xe4lfte": not valid UTF-8`
	if err == nil || !strings.Contains(err.Error(), want) || st.Rejected != 1 || q == nil || q.UsageFactor("normal") != 1 {
		t.Errorf("QOS dump: err %v, stats %s; want %q", err, st.String(), want)
	}

	conf := "ClusterName=c1\nPriorityType=priority/multifactor\nPartitionName=r\xe9seau Nodes=n1 Default=YES\n"
	_, err = ParseSlurmConf("slurm.conf", strings.NewReader(conf), nil)
	want = `ingest slurm.conf:3: PartitionName="r\xe9seau": not valid UTF-8`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("slurm.conf: err %v; want %q", err, want)
	}
}

// The file name is kept with every row (source_file): a name that is not
// UTF-8 is refused before anything is read.
func TestNonUTF8FileName(t *testing.T) {
	t.Parallel()
	_, err := NewSacctReader("sacct-\xe9t\xe9.psv", strings.NewReader(hdr), SacctOptions{})
	if err == nil || !strings.Contains(err.Error(), `ingest "sacct-\xe9t\xe9.psv": the file name is not valid UTF-8`) {
		t.Errorf("sacct: err = %v", err)
	}
	_, _, err = ParseAssoc("assoc-\xe9.psv", strings.NewReader("Account|User|ParentName|Share\nroot|||1\n"))
	if err == nil || !strings.Contains(err.Error(), "the file name is not valid UTF-8") {
		t.Errorf("assoc: err = %v", err)
	}
}

// A pending job submitted with --begin=now+1hour has its Eligible an hour
// ahead (a live Slurm 22.05 cluster printed it so: slurm-e2e's b-pending
// job, fetched with every state); it is read, not rejected as a time that
// has not happened yet. An End in the future still is.
func TestEligibleInTheFuture(t *testing.T) {
	t.Parallel()
	now := time.Unix(1796185838, 0)
	h := "JobID|JobIDRaw|Cluster|Partition|QOS|Account|User|Submit|Eligible|Start|End|Elapsed|ElapsedRaw|Suspended|State|ExitCode|NNodes|AllocCPUS|ReqTRES|AllocTRES|Timelimit|JobName\n"
	pending := "8|8|c|cpu|normal|theory|fl_bob|1796185705|1796189308|Unknown|Unknown|00:00:00|0|00:00:00|PENDING|0:0|1|0|billing=1,cpu=1,mem=1G,node=1||00:05:00|b-pending\n"
	opt := SacctOptions{Bounds: RunBounds(now), KeepPending: true}
	res := readAll(t, "s.psv", []byte(h+pending), opt)
	if res.stats.Rejected != 0 || res.stats.Ingested != 1 {
		t.Errorf("stats %s, rejects %q: want the pending row ingested", res.stats.String(), res.rejects)
	}
	future := "9|9|c|cpu|normal|theory|fl_bob|1796185705|1796185705|1796185705|1796189308|00:59:00|3540|00:00:00|COMPLETED|0:0|1|1|billing=1,cpu=1,mem=1G,node=1|billing=1,cpu=1,mem=1G,node=1|01:00:00|late\n"
	res = readAll(t, "s.psv", []byte(h+future), opt)
	if res.stats.Rejected != 1 || len(res.rejects) != 1 || !strings.Contains(res.rejects[0], "End=") {
		t.Errorf("End in the future: stats %s, rejects %q", res.stats.String(), res.rejects)
	}
}
