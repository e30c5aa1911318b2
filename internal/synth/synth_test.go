package synth

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Column indexes of SacctHeader.
const (
	colJobID = iota
	colJobIDRaw
	colCluster
	colPartition
	colQOS
	colAccount
	colUser
	colSubmit
	colEligible
	colStart
	colEnd
	colElapsed
	colElapsedRaw
	colSuspended
	colState
	colExitCode
	colNNodes
	colAllocCPUS
	colReqTRES
	colAllocTRES
	colTimelimit
	colJobName
	nCols
)

// sacctRows writes the sacct log of o and returns its data rows split into
// fields, checking the header and the field count of every line.
func sacctRows(t *testing.T, o Options) ([][]string, Summary) {
	t.Helper()
	var buf bytes.Buffer
	sum, err := New(o).WriteSacct(&buf)
	if err != nil {
		t.Fatalf("WriteSacct: %v", err)
	}
	sc := bufio.NewScanner(&buf)
	sc.Buffer(nil, 1<<20)
	var rows [][]string
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if n == 1 {
			if line != SacctHeader {
				t.Fatalf("header = %q, want %q", line, SacctHeader)
			}
			continue
		}
		f := strings.Split(line, "|")
		if len(f) != nCols {
			t.Fatalf("line %d has %d fields, want %d: %q", n, len(f), nCols, line)
		}
		rows = append(rows, f)
	}
	return rows, sum
}

func TestDeterminism(t *testing.T) {
	t.Parallel()
	o := Options{Seed: 42, Labs: 30, Jobs: 3000}
	write := func(o Options) map[string][]byte {
		dir := t.TempDir()
		if _, err := WriteDir(dir, o); err != nil {
			t.Fatalf("WriteDir: %v", err)
		}
		files := map[string][]byte{}
		for _, name := range []string{SlurmConfFile, AssocFile, QOSFile, SacctFile} {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			files[name] = b
		}
		return files
	}
	a, b := write(o), write(o)
	for _, name := range []string{SlurmConfFile, AssocFile, QOSFile, SacctFile} {
		if !bytes.Equal(a[name], b[name]) {
			t.Errorf("%s differs between two runs with seed %d", name, o.Seed)
		}
	}
	// The same Cluster written twice gives the same bytes too.
	c := New(o)
	var x, y bytes.Buffer
	c.WriteSacct(&x)
	c.WriteSacct(&y)
	if !bytes.Equal(x.Bytes(), y.Bytes()) {
		t.Errorf("WriteSacct twice on one Cluster: outputs differ")
	}
	o.Seed = 43
	d := write(o)
	for _, name := range []string{AssocFile, SacctFile} {
		if bytes.Equal(a[name], d[name]) {
			t.Errorf("%s is identical for seeds 42 and 43", name)
		}
	}
}

func TestAppendMem(t *testing.T) {
	t.Parallel()
	// docs/slurm-semantics.md §11.5, "Memory unit rendering".
	tests := []struct {
		mib  int64
		want string
	}{
		{0, "0"}, {1, "1M"}, {2, "2M"}, {512, "512M"}, {1000, "1000M"}, {1024, "1G"},
		{1536, "1.50G"}, {2048, "2G"}, {2560, "2.50G"}, {3072, "3G"}, {4000, "4000M"},
		{16384, "16G"}, {1572864, "1.50T"}, {1048576, "1T"}, {99999, "99999M"},
		{1025, "1025M"}, {100, "100M"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d MiB", tt.mib), func(t *testing.T) {
			if got := string(appendMem(nil, tt.mib)); got != tt.want {
				t.Errorf("appendMem(%d) = %q, want %q", tt.mib, got, tt.want)
			}
		})
	}
}

func TestAppendElapsed(t *testing.T) {
	t.Parallel()
	// docs/slurm-semantics.md §11.5, secs2time_str.
	tests := []struct {
		sec  int64
		want string
	}{
		{0, "00:00:00"}, {59, "00:00:59"}, {3600, "01:00:00"}, {86399, "23:59:59"},
		{86400, "1-00:00:00"}, {90061, "1-01:01:01"}, {1213323, "14-01:02:03"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d s", tt.sec), func(t *testing.T) {
			if got := string(appendElapsed(nil, tt.sec)); got != tt.want {
				t.Errorf("appendElapsed(%d) = %q, want %q", tt.sec, got, tt.want)
			}
		})
	}
}

func TestAppendTime(t *testing.T) {
	t.Parallel()
	// docs/slurm-semantics.md §11.5: time 1704164645 -> 2024-01-02T03:04:05 in UTC.
	tests := []struct {
		sec  int64
		unix bool
		loc  *time.Location
		want string
	}{
		{1704164645, false, time.UTC, "2024-01-02T03:04:05"},
		{1704164645, true, time.UTC, "1704164645"},
		{1704164645, false, time.FixedZone("EST", -5*3600), "2024-01-01T22:04:05"},
		{timeUnknown, false, time.UTC, "Unknown"},
		{timeNone, true, time.UTC, "None"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d unix=%v %v", tt.sec, tt.unix, tt.loc), func(t *testing.T) {
			if got := string(appendTime(nil, tt.sec, tt.unix, tt.loc)); got != tt.want {
				t.Errorf("appendTime(%d, %v, %v) = %q, want %q", tt.sec, tt.unix, tt.loc, got, tt.want)
			}
		})
	}
}

func TestBilling(t *testing.T) {
	t.Parallel()
	// Weights as parsed per base unit (docs/slurm-semantics.md §11.3): Mem=0.25G is
	// 0.25/1024 = 0.000244140625 per MiB.
	b2 := []Weight{{"cpu", 1}, {"mem", 0.25 / 1024}, {"gres/gpu", 2}, {"license/lic1", 1.5}}
	shared := []Weight{{"cpu", 1}, {"mem", 0.25 / 1024}}
	gpu := []Weight{{"cpu", 1}, {"mem", 0.25 / 1024}, {"gres/gpu:a100", 20}, {"gres/gpu:v100", 10}}
	requeue := []Weight{{"cpu", 0.5}, {"mem", 0.125 / 1024}}
	sapphire := []Weight{{"cpu", 1.2}, {"mem", 0.3 / 1024}}
	tests := []struct {
		name     string
		weights  []Weight
		alloc    Alloc
		billable float64
		billing  int64
	}{
		// §11.3 B1: no weights, billing = CPU count.
		{"B1", nil, Alloc{CPU: 4, MemMiB: 16384, Node: 1, Other: []TRES{{"gres/gpu", 1}}}, 4, 4},
		// §11.3 B2–B4 (SUM).
		{"B2", b2, Alloc{CPU: 1, MemMiB: 8192, Node: 1}, 3, 3},
		{"B3", b2, Alloc{CPU: 1, MemMiB: 8192, Node: 1, Other: []TRES{{"license/lic1", 1}}}, 4.5, 4},
		{"B4", b2, Alloc{CPU: 1, MemMiB: 10240, Node: 1, Other: []TRES{{"license/lic1", 1}}}, 5, 5},
		// §11.3 B11–B13 = priority_multifactor Job1–Job3.
		{"B11", shared, Alloc{CPU: 1, MemMiB: 61440, Node: 1}, 16, 16},
		{"B12 shared cpu=16 mem=1024M", shared, Alloc{CPU: 16, MemMiB: 1024, Node: 1}, 16.25, 16},
		{"B13", shared, Alloc{CPU: 16, MemMiB: 61440, Node: 1}, 31, 31},
		// By hand: 8 + 32000×0.25/1024 (= 7.8125) + 1×20 = 35.8125 → 35; the
		// untyped gres/gpu has no weight.
		{"gpu typed a100", gpu, Alloc{CPU: 8, MemMiB: 32000, Node: 1, Other: []TRES{{"gres/gpu", 1}, {"gres/gpu:a100", 1}}}, 35.8125, 35},
		// The same, entries given out of name order.
		{"gpu unsorted", gpu, Alloc{CPU: 8, MemMiB: 32000, Node: 1, Other: []TRES{{"gres/gpu:a100", 1}, {"gres/gpu", 1}}}, 35.8125, 35},
		// By hand: untyped request only: 8 + 7.8125 = 15.8125 → 15.
		{"gpu untyped", gpu, Alloc{CPU: 8, MemMiB: 32000, Node: 1, Other: []TRES{{"gres/gpu", 1}}}, 15.8125, 15},
		// By hand: 0.5 + 4000×0.125/1024 (= 0.48828125) = 0.98828125 → 0.
		{"serial_requeue below one", requeue, Alloc{CPU: 1, MemMiB: 4000, Node: 1}, 0.98828125, 0},
		// By hand: 1.2×4 + 16000×0.3/1024 = 4.8 + 4.6875 = 9.4875 → 9.
		{"sapphire", sapphire, Alloc{CPU: 4, MemMiB: 16000, Node: 1}, 9.4875, 9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Billable(tt.weights, tt.alloc)
			if math.Abs(got-tt.billable) > 1e-9 {
				t.Errorf("%s: Billable(%v, %+v) = %v, want %v", tt.name, tt.weights, tt.alloc, got, tt.billable)
			}
			if got := Billing(tt.weights, tt.alloc); got != tt.billing {
				t.Errorf("%s: Billing(%v, %+v) = %d, want %d", tt.name, tt.weights, tt.alloc, got, tt.billing)
			}
		})
	}
}

func TestPartitions(t *testing.T) {
	t.Parallel()
	// The site's weights (FASRC's accounting page and the brief): typed GPU weights, requeue
	// partitions at half rate, test without weights.
	want := map[string]string{
		"sapphire":       "CPU=1.2,Mem=0.3G",
		"shared":         "CPU=1.0,Mem=0.25G",
		"gpu":            "CPU=1.0,Mem=0.25G,GRES/gpu:a100=20.0,GRES/gpu:v100=10.0",
		"serial_requeue": "CPU=0.5,Mem=0.125G",
		"gpu_requeue":    "CPU=0.5,Mem=0.125G,GRES/gpu:a100=10.0,GRES/gpu:v100=5.0",
		"test":           "",
	}
	c := New(Options{Seed: 1})
	var conf bytes.Buffer
	if err := c.WriteSlurmConf(&conf); err != nil {
		t.Fatal(err)
	}
	parts := c.Partitions()
	if len(parts) != len(want) {
		t.Errorf("%d partitions, want %d", len(parts), len(want))
	}
	for _, p := range parts {
		w, ok := want[p.Name]
		if !ok {
			t.Errorf("unexpected partition %q", p.Name)
			continue
		}
		if p.TRESBillingWeights != w {
			t.Errorf("partition %s: TRESBillingWeights = %q, want %q", p.Name, p.TRESBillingWeights, w)
		}
		if w == "" {
			if p.Weights != nil || strings.Contains(confLine(conf.String(), p.Name), "TRESBillingWeights") {
				t.Errorf("partition %s has weights, want none", p.Name)
			}
			continue
		}
		if line := confLine(conf.String(), p.Name); !strings.Contains(line, `TRESBillingWeights="`+w+`"`) {
			t.Errorf("slurm.conf line for %s = %q, want TRESBillingWeights=%q", p.Name, line, w)
		}
	}
	sap, _ := c.Partition("sapphire")
	if got := weightOf(sap.Weights, "mem"); got != 0.3/1024 {
		t.Errorf("sapphire mem weight per MiB = %v, want %v", got, 0.3/1024)
	}
	for _, key := range []string{
		"ClusterName=synth\n", "PriorityType=priority/multifactor\n", "PriorityDecayHalfLife=7-0\n",
		"PriorityCalcPeriod=5\n", "AccountingStorageEnforce=associations,limits,qos\n",
		"AccountingStorageTRES=gres/gpu,gres/gpu:a100,gres/gpu:v100\n", "\nPartitionName=DEFAULT ",
	} {
		if !strings.Contains(conf.String(), key) {
			t.Errorf("slurm.conf lacks %q", key)
		}
	}
}

// confLine returns the PartitionName=name line of a slurm.conf.
func confLine(conf, name string) string {
	for _, l := range strings.Split(conf, "\n") {
		if strings.HasPrefix(l, "PartitionName="+name+" ") {
			return l
		}
	}
	return ""
}

func TestWriteQOS(t *testing.T) {
	t.Parallel()
	const want = "Name|UsageFactor|Flags\nnormal|1.000000|\nlowprio|0.500000|\nfree|0.000000|\nnodecay|1.000000|NoDecay\n"
	var b bytes.Buffer
	if err := New(Options{Seed: 1}).WriteQOS(&b); err != nil {
		t.Fatal(err)
	}
	if b.String() != want {
		t.Errorf("WriteQOS = %q, want %q", b.String(), want)
	}
}

func TestWriteAssoc(t *testing.T) {
	t.Parallel()
	const labs = 200
	var b bytes.Buffer
	if err := New(Options{Seed: 7, Labs: labs}).WriteAssoc(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if lines[0] != "Cluster|Account|User|Partition|ParentName|Share|Lineage|GrpTRESMins" {
		t.Fatalf("header = %q", lines[0])
	}
	if lines[1] != "synth|root||||1|/|" {
		t.Errorf("first row = %q, want the root account", lines[1])
	}
	shares := map[string]bool{}
	for _, s := range labShares {
		shares[strconv.FormatInt(s, 10)] = true
	}
	accounts := map[string]string{"root": "/"} // name → lineage
	var lineages []string
	nLabs, nSchools, nParentUsers, nZero, nLimits := 0, 0, 0, 0, 0
	for i, l := range lines[1:] {
		f := strings.Split(l, "|")
		if len(f) != 8 {
			t.Fatalf("row %d %q has %d fields, want 8", i+2, l, len(f))
		}
		cluster, acct, user, part, parent, share, lineage, limit := f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7]
		if limit != "" {
			// Accounts only: 6,000 CPU-minutes per share.
			if n, _ := strconv.ParseInt(share, 10, 64); user != "" || limit != "cpu="+strconv.FormatInt(n*6000, 10) {
				t.Errorf("row %q: GrpTRESMins %q, want cpu=<share×6000> on accounts only", l, limit)
			}
			nLimits++
		}
		lineages = append(lineages, lineage)
		if cluster != "synth" || part != "" {
			t.Errorf("row %q: cluster %q partition %q", l, cluster, part)
		}
		switch {
		case user != "":
			// User rows: ParentName empty, lineage /…/account/0-user/.
			if parent != "" || lineage != accounts[acct]+"0-"+user+"/" {
				t.Errorf("user row %q: parent %q, lineage want %q", l, parent, accounts[acct]+"0-"+user+"/")
			}
			if share == "parent" {
				nParentUsers++
			} else if share != "1" {
				t.Errorf("user row %q: share %q, want 1 or parent", l, share)
			}
		case acct == "root":
		case strings.HasPrefix(acct, "sch_"):
			nSchools++
			accounts[acct] = lineage
		default:
			nLabs++
			accounts[acct] = lineage
			if pl, ok := accounts[parent]; !ok || lineage != pl+acct+"/" {
				t.Errorf("lab row %q: parent %q unknown or lineage not under it", l, parent)
			}
			if !shares[share] {
				t.Errorf("lab row %q: share %s is not from the FASRC census", l, share)
			}
			if share == "0" {
				nZero++
			}
		}
	}
	if !slices.IsSorted(lineages) {
		t.Errorf("rows are not in lineage order")
	}
	if nLabs != labs || nSchools != 3 {
		t.Errorf("%d labs and %d schools, want %d and 3", nLabs, nSchools, labs)
	}
	if nParentUsers == 0 {
		t.Errorf("no FairShare=parent users among %d labs", labs)
	}
	if want := (labs + 3 + 2) / 3; nLimits != want { // every third of the labs and schools
		t.Errorf("%d GrpTRESMins limits, want %d", nLimits, want)
	}
	t.Logf("%d rows, %d labs with share 0", len(lines)-1, nZero)
}

// rowKind classifies an sacct row independently of the generator, from the
// printed text only.
func rowKinds(f []string) []string {
	id, state := f[colJobID], f[colState]
	var k []string
	if i := strings.IndexByte(id, '.'); i >= 0 {
		switch id[i+1:] {
		case "batch":
			k = append(k, "step .batch")
		case "extern":
			k = append(k, "step .extern")
		case "0":
			k = append(k, "step .0")
		case "1":
			k = append(k, "step .1")
		}
		if strings.Contains(id, "+") {
			k = append(k, "het step")
		}
		return append(k, "step")
	}
	k = append(k, "job")
	switch {
	case strings.Contains(id, "_["):
		k = append(k, "array pending range")
	case strings.Contains(id, "_"):
		k = append(k, "array task")
	case strings.Contains(id, "+"):
		k = append(k, "het component")
	default:
		k = append(k, "plain")
	}
	switch {
	case state == "REQUEUED":
		k = append(k, "requeued")
	case state == "RUNNING" && f[colEnd] == "Unknown":
		k = append(k, "running")
	case state == "PENDING" && f[colStart] == "Unknown" && f[colEnd] == "Unknown":
		k = append(k, "pending")
	case strings.HasPrefix(state, "CANCELLED by ") && f[colStart] == "None":
		if f[colAllocTRES] == "" && f[colElapsed] == "00:00:00" {
			k = append(k, "never started")
		}
	case strings.HasPrefix(state, "CANCELLED by "):
		k = append(k, "cancelled")
	case state == "COMPLETED":
		k = append(k, "completed")
	case state == "FAILED":
		k = append(k, "failed")
	case state == "TIMEOUT":
		k = append(k, "timeout")
	case state == "OUT_OF_MEMORY":
		k = append(k, "out of memory")
	case state == "NODE_FAIL":
		k = append(k, "node fail")
	}
	if f[colSuspended] != "00:00:00" {
		k = append(k, "suspended")
	}
	if strings.Contains(f[colAllocTRES], "gres/gpu:") {
		k = append(k, "typed gpu")
	}
	return k
}

func TestSacctRowKindsAndSummary(t *testing.T) {
	t.Parallel()
	rows, sum := sacctRows(t, Options{Seed: 1, Jobs: 20000})
	n := map[string]int64{}
	for _, f := range rows {
		for _, k := range rowKinds(f) {
			n[k]++
		}
		mem := f[colAllocTRES]
		switch i := strings.Index(mem, "mem="); {
		case i < 0:
		case strings.Contains(mem[i:], ".50G,"):
			n["mem 1.50G form"]++
		case strings.Contains(mem[i:], "M,"):
			n["mem M form"]++
		case strings.Contains(mem[i:], "G,"):
			n["mem G form"]++
		}
	}
	// Every kind the brief asks for is present.
	for _, k := range []string{
		"plain", "array task", "array pending range", "het component", "het step", "requeued",
		"running", "pending", "never started", "cancelled", "completed", "failed", "timeout",
		"out of memory", "node fail", "suspended", "typed gpu", "step .batch", "step .extern",
		"step .0", "step .1", "mem 1.50G form", "mem M form", "mem G form",
	} {
		if n[k] == 0 {
			t.Errorf("no %s row among %d rows", k, len(rows))
		}
	}
	// The Summary counts match the rows written.
	checks := []struct {
		name string
		got  int64
		want int64
	}{
		{"Rows", sum.Rows, int64(len(rows))},
		{"Jobs", sum.Jobs, n["job"]},
		{"Jobs (Options.Jobs)", sum.Jobs, 20000},
		{"Steps", sum.Steps, n["step"]},
		{"Arrays", sum.Arrays, n["array task"]},
		{"ArrayPending", sum.ArrayPending, n["array pending range"]},
		{"HetComponents", sum.HetComponents, n["het component"]},
		{"Requeues", sum.Requeues, n["requeued"]},
		{"Running", sum.Running, n["running"]},
		{"Pending", sum.Pending, n["pending"]},
		{"NeverStarted", sum.NeverStarted, n["never started"]},
		{"Cancelled", sum.Cancelled, n["cancelled"]},
		{"Completed", sum.Completed, n["completed"]},
		{"Failed", sum.Failed, n["failed"]},
		{"Timeout", sum.Timeout, n["timeout"]},
		{"OutOfMemory", sum.OutOfMemory, n["out of memory"]},
		{"NodeFail", sum.NodeFail, n["node fail"]},
		{"Suspended", sum.Suspended, n["suspended"]},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("Summary.%s = %d, want %d (rows written)", c.name, c.got, c.want)
		}
	}
}

// parseTime parses a sacct time printed in UTC.
func parseTime(t *testing.T, s string) int64 {
	t.Helper()
	tm, err := time.Parse("2006-01-02T15:04:05", s)
	if err != nil {
		t.Fatalf("time %q: %v", s, err)
	}
	return tm.Unix()
}

// parseElapsed parses [D-]HH:MM:SS.
func parseElapsed(t *testing.T, s string) int64 {
	t.Helper()
	var days int64
	if i := strings.IndexByte(s, '-'); i >= 0 {
		days, _ = strconv.ParseInt(s[:i], 10, 64)
		s = s[i+1:]
	}
	p := strings.Split(s, ":")
	if len(p) != 3 {
		t.Fatalf("elapsed %q", s)
	}
	h, _ := strconv.ParseInt(p[0], 10, 64)
	m, _ := strconv.ParseInt(p[1], 10, 64)
	sec, _ := strconv.ParseInt(p[2], 10, 64)
	return days*86400 + h*3600 + m*60 + sec
}

// rawJob returns the numeric job part of a JobIDRaw.
func rawJob(t *testing.T, s string) int64 {
	t.Helper()
	if i := strings.IndexByte(s, '.'); i >= 0 {
		s = s[:i]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("JobIDRaw %q: %v", s, err)
	}
	return n
}

func TestSacctRowInvariants(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 3, 15, 12, 0, 0, 0, time.UTC)
	o := Options{Seed: 3, Jobs: 20000, Now: now}
	c := New(o)
	rows, _ := sacctRows(t, o)
	prevRaw := int64(-1)
	from, nowSec := c.Options().From.Unix(), now.Unix()
	for i, f := range rows {
		where := strings.Join(f, "|")
		if f[colCluster] != "synth" {
			t.Fatalf("row %d: cluster %q", i, f[colCluster])
		}
		// JobIDRaw order, and steps follow their allocation.
		raw := rawJob(t, f[colJobIDRaw])
		if raw < prevRaw {
			t.Fatalf("row %d: JobIDRaw %d after %d: %s", i, raw, prevRaw, where)
		}
		isStep := strings.Contains(f[colJobID], ".")
		if isStep && raw != prevRaw {
			t.Fatalf("row %d: step without its allocation: %s", i, where)
		}
		prevRaw = raw
		if strings.Contains(f[colJobName], "|") {
			t.Fatalf("row %d: job name with |", i)
		}
		submit := parseTime(t, f[colSubmit])
		if submit < from || submit > nowSec {
			t.Errorf("row %d: submit %s outside [From, Now]", i, f[colSubmit])
		}
		elapsed := parseElapsed(t, f[colElapsed])
		if strconv.FormatInt(elapsed, 10) != f[colElapsedRaw] {
			t.Errorf("row %d: Elapsed %s but ElapsedRaw %s", i, f[colElapsed], f[colElapsedRaw])
		}
		susp := parseElapsed(t, f[colSuspended])
		switch {
		case f[colStart] == "Unknown" || f[colStart] == "None":
			if elapsed != 0 || f[colAllocTRES] != "" || f[colAllocCPUS] != "0" {
				t.Errorf("row %d: never ran but elapsed %d AllocTRES %q: %s", i, elapsed, f[colAllocTRES], where)
			}
		case f[colEnd] == "Unknown":
			start := parseTime(t, f[colStart])
			if f[colState] != "RUNNING" || elapsed != nowSec-start-susp {
				t.Errorf("row %d: End=Unknown: state %s, elapsed %d, want RUNNING and Now−Start = %d: %s", i, f[colState], elapsed, nowSec-start, where)
			}
		default:
			start, end := parseTime(t, f[colStart]), parseTime(t, f[colEnd])
			if end > nowSec || start < submit {
				t.Errorf("row %d: start %d end %d outside [submit, Now]: %s", i, start, end, where)
			}
			if elapsed != end-start-susp {
				t.Errorf("row %d: Elapsed %d, want End−Start−Suspended = %d: %s", i, elapsed, end-start-susp, where)
			}
		}
		if isStep {
			if f[colUser] != "" || f[colPartition] != "" || f[colQOS] != "" || f[colReqTRES] != "" || f[colTimelimit] != "" {
				t.Errorf("row %d: step with User/Partition/QOS/ReqTRES/Timelimit: %s", i, where)
			}
			hasBilling := strings.HasPrefix(f[colAllocTRES], "billing=")
			if strings.HasSuffix(f[colJobID], ".batch") && hasBilling {
				t.Errorf("row %d: .batch with billing: %s", i, where)
			}
			if strings.HasSuffix(f[colJobID], ".extern") && !hasBilling {
				t.Errorf("row %d: .extern without billing: %s", i, where)
			}
			continue
		}
		// billing= in ReqTRES and AllocTRES is Billing of the other entries
		// under the partition's weights.
		p, ok := c.Partition(f[colPartition])
		if !ok {
			t.Fatalf("row %d: unknown partition %q", i, f[colPartition])
		}
		for _, col := range []int{colReqTRES, colAllocTRES} {
			if f[col] == "" {
				continue
			}
			billing, a := parseTRES(t, f[col])
			if got := Billing(p.Weights, a); got != billing {
				t.Errorf("row %d: %s billing=%d, want Billing = %d: %s", i, f[col], billing, got, where)
			}
		}
		if f[colAllocTRES] != "" {
			if _, a := parseTRES(t, f[colAllocTRES]); strconv.FormatInt(a.CPU, 10) != f[colAllocCPUS] {
				t.Errorf("row %d: AllocCPUS %s but AllocTRES cpu=%d", i, f[colAllocCPUS], a.CPU)
			}
		}
	}
}

// parseTRES parses an AllocTRES string, checking that its entries are in
// byte order of the name=value strings, as sacct prints them.
func parseTRES(t *testing.T, s string) (int64, Alloc) {
	t.Helper()
	items := strings.Split(s, ",")
	if !slices.IsSorted(items) {
		t.Errorf("TRES %q not sorted", s)
	}
	var a Alloc
	billing := int64(-1)
	for _, it := range items {
		name, val, _ := strings.Cut(it, "=")
		if name == "mem" {
			a.MemMiB = parseMem(t, val)
			continue
		}
		n, err := strconv.ParseInt(val, 10, 64)
		if err != nil {
			t.Fatalf("TRES %q: %v", s, err)
		}
		switch name {
		case "billing":
			billing = n
		case "cpu":
			a.CPU = n
		case "node":
			a.Node = n
		default:
			a.Other = append(a.Other, TRES{name, n})
		}
	}
	return billing, a
}

// parseMem inverts sacct's mem rendering: 1.50G → 1536.
func parseMem(t *testing.T, s string) int64 {
	t.Helper()
	if s == "0" {
		return 0
	}
	mult := map[byte]float64{'M': 1, 'G': 1024, 'T': 1024 * 1024}[s[len(s)-1]]
	v, err := strconv.ParseFloat(s[:len(s)-1], 64)
	if err != nil || mult == 0 {
		t.Fatalf("mem %q", s)
	}
	return int64(math.Round(v * mult))
}

func TestSacctTimeFormats(t *testing.T) {
	t.Parallel()
	// The same jobs printed as %FT%T in UTC and as Unix seconds denote the
	// same instants.
	o := Options{Seed: 5, Jobs: 500}
	local, _ := sacctRows(t, o)
	o.UnixTimes = true
	unix, _ := sacctRows(t, o)
	if len(local) != len(unix) {
		t.Fatalf("%d rows vs %d rows", len(local), len(unix))
	}
	for i := range local {
		for _, col := range []int{colSubmit, colEligible, colStart, colEnd} {
			l, u := local[i][col], unix[i][col]
			if l == "Unknown" || l == "None" {
				if u != l {
					t.Errorf("row %d col %d: %q vs %q", i, col, l, u)
				}
				continue
			}
			if want := strconv.FormatInt(parseTime(t, l), 10); u != want {
				t.Errorf("row %d col %d: unix %q, want %q (from %q)", i, col, u, want, l)
			}
		}
	}
}

func TestOptionsErrors(t *testing.T) {
	t.Parallel()
	from := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		o    Options
		want string
	}{
		{"reversed range", Options{From: from, To: from.Add(-time.Hour)}, "To must be after From"},
		{"negative jobs", Options{Jobs: -1}, "jobs -1"},
		{"now before from", Options{From: from, To: from.AddDate(0, 1, 0), Now: from.Add(-time.Hour)}, "before From"},
		{"step fraction", Options{StepFraction: 2}, "step fraction 2"},
		{"cluster name", Options{Cluster: "a|b"}, "cluster name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.o).WriteSacct(io.Discard)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%s: WriteSacct error = %v, want one containing %q", tt.name, err, tt.want)
			}
		})
	}
}

// failWriter fails every write.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteErrors(t *testing.T) {
	t.Parallel()
	c := New(Options{Seed: 1, Jobs: 5000})
	if _, err := c.WriteSacct(failWriter{}); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("WriteSacct(failing writer) error = %v, want disk full", err)
	}
	for name, f := range map[string]func(io.Writer) error{"WriteAssoc": c.WriteAssoc, "WriteQOS": c.WriteQOS, "WriteSlurmConf": c.WriteSlurmConf} {
		t.Run(name, func(t *testing.T) {
			if err := f(failWriter{}); err == nil {
				t.Errorf("%s(failing writer) = nil, want an error", name)
			}
		})
	}
}

func TestLongWindowAndNoSteps(t *testing.T) {
	t.Parallel()
	o := LongWindow(9)
	o.Jobs = 3000
	rows, sum := sacctRows(t, o)
	if sum.Steps != 0 {
		t.Errorf("LongWindow: %d step rows, want 0", sum.Steps)
	}
	first, _ := strconv.ParseInt(rows[0][colSubmit], 10, 64)
	last, _ := strconv.ParseInt(rows[len(rows)-1][colSubmit], 10, 64)
	// Submits cover the year: the first in January, the last in December.
	if time.Unix(first, 0).UTC().Month() != time.January || time.Unix(last, 0).UTC().Month() != time.December {
		t.Errorf("LongWindow submits from %v to %v, want January to December", time.Unix(first, 0).UTC(), time.Unix(last, 0).UTC())
	}
}

func TestStreamingAllocations(t *testing.T) {
	// Memory must not grow with the number of jobs: allocations per call are
	// the same (up to small noise from array bookkeeping) for 2,000 and
	// 20,000 jobs.
	allocs := func(jobs int) float64 {
		c := New(Options{Seed: 1, Jobs: jobs})
		return testing.AllocsPerRun(2, func() { c.WriteSacct(io.Discard) })
	}
	small, large := allocs(2000), allocs(20000)
	if large > small+50 {
		t.Errorf("WriteSacct allocations: %v for 2,000 jobs, %v for 20,000; want no growth", small, large)
	}
}

// BenchmarkWriteSacct measures sacct writing speed in rows per second.
//
// Each iteration writes 200,000 jobs (about 520,000 rows) to io.Discard.
//
//	go test -run '^$' -bench BenchmarkWriteSacct -cpu 1 ./internal/synth/
func BenchmarkWriteSacct(b *testing.B) {
	c := New(Options{Seed: 1, Jobs: 200_000})
	b.ReportAllocs()
	var rows int64
	for b.Loop() {
		sum, err := c.WriteSacct(io.Discard)
		if err != nil {
			b.Fatal(err)
		}
		rows += sum.Rows
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(rows), "ns/row")
}
