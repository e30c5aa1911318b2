package report

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/fairledger/fairledger/decay"
	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/fairshare"
	"github.com/fairledger/fairledger/schemas"
)

// The fixture history: a hand-made cluster small enough that every figure
// of its reports can be worked out by hand (report_test.go does).

// fxAccount is an account of a fixture tree.
type fxAccount struct {
	name, parent string
	shares       int64
}

// fxUser is a user association.
type fxUser struct {
	name, account string
	shares        int64
}

// fxJob is a job run; a zero end means still running at the window end.
type fxJob struct {
	id, user, account, part, qos string
	start, end                   time.Time
	cpus                         int64
	memMB, gpu, billing, q       float64
}

// fxHistory is what writeHistory writes.
type fxHistory struct {
	cluster  string
	accounts []fxAccount // parents before children; root first
	users    []fxUser
	jobs     []fxJob
	// snapshots are taken daily at 00:00 UTC from first to last.
	first, last time.Time
	// windowEnd is the end of the run's window (running jobs are charged
	// up to it).
	windowEnd time.Time
	config    record.RunConfig
	// priority are the priority table's rows (none: no run --priority).
	priority []record.PriorityRow
}

func day(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

func at(s string) time.Time {
	t, err := time.Parse("2006-01-02 15:04", s)
	if err != nil {
		panic(err)
	}
	return t
}

// tinyHistory is the fixture: three months (2025-01-01 to 2025-03-31) of a
// cluster with two labs at the top level (labA: alice, bob; labB: carol,
// dave) and a department phys holding labC (erin, who never runs a job).
//
// Jobs (billing = TRESBillingWeights applied; cpu: CPU=1.0, gpu:
// CPU=1.0,GRES/gpu=10.0):
//
//	J6 alice labA cpu  2024-12-31 12:00 → 2025-01-01 12:00   4 CPU  8 GiB        billing 4
//	J1 alice labA cpu  2025-01-10 00:00 → 2025-01-11 00:00   8 CPU 16 GiB        billing 8
//	J3 bob   labA cpu  2025-01-31 18:00 → 2025-02-01 06:00  16 CPU 64 GiB        billing 16, QOS low (UsageFactor 0.5)
//	J2 alice labA gpu  2025-02-03 12:00 → 2025-02-04 12:00   4 CPU 32 GiB 2 GPU  billing 4+2·10 = 24
//	J4 carol labB cpu  2025-03-01 00:00 → 2025-03-03 00:00   2 CPU  4 GiB        billing 2
//	J5 dave  labB gpu  2025-03-30 00:00 → running            1 CPU  8 GiB 1 GPU  billing 1+10 = 11
//
// The run's window ends 2025-04-01 00:00, so J5 is charged 48 h.
func tinyHistory() fxHistory {
	return fxHistory{
		cluster: "tiny",
		accounts: []fxAccount{{"root", "", 1}, {"labA", "root", 30}, {"labB", "root", 20},
			{"phys", "root", 50}, {"labC", "phys", 1}},
		users: []fxUser{{"alice", "labA", 1}, {"bob", "labA", 1}, {"carol", "labB", 1}, {"dave", "labB", 3},
			{"erin", "labC", 1}},
		jobs: []fxJob{
			{"1006", "alice", "labA", "cpu", "normal", at("2024-12-31 12:00"), at("2025-01-01 12:00"), 4, 8192, 0, 4, 1},
			{"1001", "alice", "labA", "cpu", "normal", at("2025-01-10 00:00"), at("2025-01-11 00:00"), 8, 16384, 0, 8, 1},
			{"1003", "bob", "labA", "cpu", "low", at("2025-01-31 18:00"), at("2025-02-01 06:00"), 16, 65536, 0, 16, 0.5},
			{"1002", "alice", "labA", "gpu", "normal", at("2025-02-03 12:00"), at("2025-02-04 12:00"), 4, 32768, 2, 24, 1},
			{"1004", "carol", "labB", "cpu", "normal", at("2025-03-01 00:00"), at("2025-03-03 00:00"), 2, 4096, 0, 2, 1},
			{"1005", "dave", "labB", "gpu", "normal", at("2025-03-30 00:00"), time.Time{}, 1, 8192, 1, 11, 1},
		},
		first: day("2025-01-01"), last: day("2025-04-01"), windowEnd: day("2025-04-01"),
		config: record.RunConfig{Cluster: "tiny", Algorithm: "fair_tree", HalfLifeSec: 7 * 86400, CalcPeriodSec: 300,
			UsageResetPeriod: "NONE", PriorityFlags: []string{}, DampeningFactor: 1,
			AccountingStorageEnforce: []string{"associations", "limits"}, LimitsEnforced: true, TimeZone: "UTC",
			SnapshotEvery: "24h0m0s", Partitions: []record.RunPartition{{Name: "cpu", TRESBillingWeights: "CPU=1.0"},
				{Name: "debug", TRESBillingWeights: ""}, {Name: "gpu", TRESBillingWeights: "CPU=1.0,GRES/gpu=10.0"}}},
		priority: tinyPriority(),
	}
}

// fxFactors are a fixture priority row's weighted factors: age, assoc,
// fairshare, jobsize, partition, qos (Factor order), then the TRES terms,
// site and nice.
type fxFactors struct {
	age, assoc, fs, size, part, qos float64
	tres                            map[string]float64
	site, nice                      int64
}

// fxPending is a pending row at a snapshot.
func fxPending(snap time.Time, job int64, user, account, part string, prio int64, f fxFactors) record.PriorityRow {
	s := snap
	return record.PriorityRow{At: snap, Event: record.EventPending, Snapshot: &s, ComputedAt: snap, JobID: job, User: user,
		Account: account, Partition: part, QOS: "normal", Priority: prio, AgeW: f.age, AssocW: f.assoc, FairShareW: f.fs,
		JobSizeW: f.size, PartitionW: f.part, QOSW: f.qos, TRESW: f.tres, Site: f.site, Nice: f.nice}
}

// fxSubmit is a submit row.
func fxSubmit(t time.Time, job int64, user, account, part string, prio int64, f fxFactors) record.PriorityRow {
	r := fxPending(t, job, user, account, part, prio, f)
	r.Event, r.Snapshot, r.Submit, r.Eligible = record.EventSubmit, fxSnapshotBefore(t), &t, &t
	return r
}

// fxStart is a start row: eligible at submission, waited wait.
func fxStart(t time.Time, wait time.Duration, rank, waiting int64, job int64, user, account, part string, prio int64,
	f fxFactors) record.PriorityRow {
	r := fxPending(t, job, user, account, part, prio, f)
	el := t.Add(-wait)
	w := int64(wait / time.Second)
	r.Event, r.Snapshot, r.Submit, r.Eligible, r.WaitSec, r.Rank, r.Waiting = record.EventStart, fxSnapshotBefore(t),
		&el, &el, &w, &rank, &waiting
	return r
}

// fxSnapshotBefore is the fixture's last daily snapshot at or before t
// (the first is 2025-01-02 00:00; nil before it).
func fxSnapshotBefore(t time.Time) *time.Time {
	s := t.Truncate(24 * time.Hour)
	if s.Before(day("2025-01-02")) {
		return nil
	}
	return &s
}

// tinyPriority are the fixture's priority rows (TestWaitsByHand works
// every figure of the section out from them). Factors in priority points:
// age, assoc, fairshare, jobsize, partition, qos, TRES terms, site, nice;
// each priority is their sum minus nice.
//
// Pending rows, at three snapshots in the period and two outside it:
//
//	S3 2025-01-05  3001 carol labB cpu  10 20 9000 50 100   0  cpu 20          → 9200
//	S1 2025-01-20  2002 bob   labA cpu 100 10 1000 50 100   0  cpu 10, mem 5   → 1275
//	               3005 carol labB cpu 300 20 4000 50 100   0  cpu 20          → 4490
//	               3006 dave  labB gpu 200 20 3000 25 200 500  cpu 5, gpu 40, site 10 → 4000
//	               3008 carol labB cpu   0 20 1000 50 100   0  cpu 20          → 1190
//	S2 2025-02-10  2004 alice labA gpu  50 10 2000 25 200   0  gpu 40, nice 100 → 2225
//	               3007 dave  labB gpu 400 20 2500 25 200 500  gpu 80          → 3725
//	2024-12-31 and 2025-04-01 (outside [From, To)): one row of each lab, with
//	figures that would show if they were counted.
//
// Start rows (wait = start − eligible; rank of waiting):
//
//	labA 2000 2024-12-31 20:00 100 h (before the period)
//	     2001 2025-01-10 06:00   2 h 1 of 2   3000 (20 10 2800 50 100 0, cpu 20)
//	     2002 2025-01-20 09:00  10 h 2 of 3   1295 (120 10 1000 50 100 0, cpu 10 mem 5)
//	     2003 2025-01-25 12:00   6 h 1 of 1   2500 (30 10 2310 50 100 0)
//	     2004 2025-02-10 06:00  12 h 4 of 4   2235 (60 10 2000 25 200 0, gpu 40, nice 100)
//	     2009 2025-04-01 00:00  50 h (at To: outside the period)
//	labB 3001 2025-01-05 03:00 7 h rank 1; 3006 01-20 03:00 3 h rank 1; 3005 01-20 05:00 5 h
//	     rank 2; 3008 01-20 01:00 1 h rank 1; 3007 02-10 00:30 0.5 h rank 1;
//	     3010 03-02 02:00 2 h rank 1; 3011 03-31 23:00 4 h rank 3
//
// Submit rows, which the section never reads: 2002 at 2025-01-19 23:00,
// 2004 at 2025-02-09 18:00, and 3005 at S1 itself (fair share 7000,
// priority 7390: were it read as waiting, S1's figures would change).
func tinyPriority() []record.PriorityRow {
	tr := func(kv ...any) map[string]float64 {
		m := map[string]float64{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = float64(kv[i+1].(int))
		}
		return m
	}
	s1, s2, s3 := day("2025-01-20"), day("2025-02-10"), day("2025-01-05")
	h := time.Hour
	flat := func(fs float64) fxFactors { return fxFactors{fs: fs, tres: tr()} }
	return []record.PriorityRow{
		fxPending(s3, 3001, "carol", "labB", "cpu", 9200, fxFactors{10, 20, 9000, 50, 100, 0, tr("cpu", 20), 0, 0}),
		fxPending(s1, 2002, "bob", "labA", "cpu", 1275, fxFactors{100, 10, 1000, 50, 100, 0, tr("cpu", 10, "mem", 5), 0, 0}),
		fxPending(s1, 3005, "carol", "labB", "cpu", 4490, fxFactors{300, 20, 4000, 50, 100, 0, tr("cpu", 20), 0, 0}),
		fxPending(s1, 3006, "dave", "labB", "gpu", 4000, fxFactors{200, 20, 3000, 25, 200, 500, tr("cpu", 5, "gres/gpu", 40), 10, 0}),
		fxPending(s1, 3008, "carol", "labB", "cpu", 1190, fxFactors{0, 20, 1000, 50, 100, 0, tr("cpu", 20), 0, 0}),
		fxPending(s2, 2004, "alice", "labA", "gpu", 2225, fxFactors{50, 10, 2000, 25, 200, 0, tr("gres/gpu", 40), 0, 100}),
		fxPending(s2, 3007, "dave", "labB", "gpu", 3725, fxFactors{400, 20, 2500, 25, 200, 500, tr("gres/gpu", 80), 0, 0}),
		fxPending(day("2024-12-31"), 2000, "alice", "labA", "cpu", 50000, flat(50000)),
		fxPending(day("2024-12-31"), 3000, "carol", "labB", "cpu", 1, flat(1)),
		fxPending(day("2025-04-01"), 2009, "alice", "labA", "gpu", 1, flat(1)),
		fxPending(day("2025-04-01"), 3012, "dave", "labB", "gpu", 60000, flat(60000)),

		fxSubmit(at("2025-01-19 23:00"), 2002, "bob", "labA", "cpu", 1175, fxFactors{0, 10, 1000, 50, 100, 0, tr("cpu", 10, "mem", 5), 0, 0}),
		fxSubmit(at("2025-02-09 18:00"), 2004, "alice", "labA", "gpu", 2175, fxFactors{0, 10, 2000, 25, 200, 0, tr("gres/gpu", 40), 0, 100}),
		fxSubmit(s1, 3005, "carol", "labB", "cpu", 7390, fxFactors{300, 20, 7000, 50, 0, 0, tr("cpu", 20), 0, 0}),

		fxStart(at("2024-12-31 20:00"), 100*h, 1, 1, 2000, "alice", "labA", "cpu", 50000, flat(50000)),
		fxStart(at("2025-01-10 06:00"), 2*h, 1, 2, 2001, "alice", "labA", "cpu", 3000, fxFactors{20, 10, 2800, 50, 100, 0, tr("cpu", 20), 0, 0}),
		fxStart(at("2025-01-20 09:00"), 10*h, 2, 3, 2002, "bob", "labA", "cpu", 1295, fxFactors{120, 10, 1000, 50, 100, 0, tr("cpu", 10, "mem", 5), 0, 0}),
		fxStart(at("2025-01-25 12:00"), 6*h, 1, 1, 2003, "alice", "labA", "cpu", 2500, fxFactors{30, 10, 2310, 50, 100, 0, tr(), 0, 0}),
		fxStart(at("2025-02-10 06:00"), 12*h, 4, 4, 2004, "alice", "labA", "gpu", 2235, fxFactors{60, 10, 2000, 25, 200, 0, tr("gres/gpu", 40), 0, 100}),
		fxStart(day("2025-04-01"), 50*h, 1, 1, 2009, "alice", "labA", "gpu", 1, flat(1)),
		fxStart(at("2025-01-05 03:00"), 7*h, 1, 1, 3001, "carol", "labB", "cpu", 9210, flat(9210)),
		fxStart(at("2025-01-20 03:00"), 3*h, 1, 1, 3006, "dave", "labB", "gpu", 4010, flat(4010)),
		fxStart(at("2025-01-20 05:00"), 5*h, 2, 2, 3005, "carol", "labB", "cpu", 4500, flat(4500)),
		fxStart(at("2025-01-20 01:00"), 1*h, 1, 3, 3008, "carol", "labB", "cpu", 1195, flat(1195)),
		fxStart(at("2025-02-10 00:30"), 30*time.Minute, 1, 2, 3007, "dave", "labB", "gpu", 3730, flat(3730)),
		fxStart(at("2025-03-02 02:00"), 2*h, 1, 1, 3010, "carol", "labB", "cpu", 1000, flat(1000)),
		fxStart(at("2025-03-31 23:00"), 4*h, 3, 3, 3011, "dave", "labB", "gpu", 900, flat(900)),
	}
}

// writeHistory writes h into a history directory: a jobs row per run in
// its start month (with its whole charged_sec, as schemas/jobs.md
// says), usage rows per user and UTC day, one fair-share snapshot per
// day (raw usage decayed day by day, values from package fairshare), the
// association tree at each snapshot and one run.
func writeHistory(tb testing.TB, dir string, h fxHistory) {
	tb.Helper()
	hist, err := history.Open(dir)
	if err != nil {
		tb.Fatal(err)
	}
	write := func(table string, month time.Time, rows any) {
		if err := hist.WritePartition(table, h.cluster, month, rows); err != nil {
			tb.Fatal(err)
		}
	}
	// Jobs by start month, as the pipeline writes them: one row per run,
	// in the month it started, charged from its start to its end (or the
	// window end), and usage by user and day.
	userIdx := map[[2]string]int{}
	for i, u := range h.users {
		userIdx[[2]string{u.account, u.name}] = i
	}
	type dayKey struct {
		user int
		day  time.Time
	}
	usage := map[dayKey]*record.UsageRow{}
	jobs := slices.Clone(h.jobs)
	slices.SortStableFunc(jobs, func(a, b fxJob) int { return a.start.Compare(b.start) })
	jobsByMonth := map[time.Time][]record.JobRow{}
	for i, j := range jobs {
		end := j.end
		if end.IsZero() {
			end = h.windowEnd
		}
		row := record.JobRow{JobID: j.id, JobIDRaw: int64(i + 1000), User: j.user, Account: j.account,
			Partition: j.part, QOS: j.qos, State: "COMPLETED", Start: j.start, ChargedSec: int64(end.Sub(j.start) / time.Second),
			NNodes: 1, AllocCPUs: j.cpus, MemMB: j.memMB, NodeCount: 1, GPU: j.gpu,
			TRES:    map[string]float64{"cpu": float64(j.cpus), "mem": j.memMB, "node": 1, "billing": math.Trunc(j.billing)},
			Billing: j.billing, BillingSlurm: int64(j.billing), UsageFactor: j.q, SourceFile: "sacct.txt", SourceLine: int64(i + 2)}
		if j.gpu > 0 {
			row.TRES["gres/gpu"] = j.gpu
		}
		if j.end.IsZero() {
			row.State = "RUNNING"
		} else {
			row.End = &j.end
		}
		m := monthStart(j.start)
		jobsByMonth[m] = append(jobsByMonth[m], row)
		u := userIdx[[2]string{j.account, j.user}]
		for d := j.start.Truncate(24 * time.Hour); d.Before(end); d = d.Add(24 * time.Hour) {
			sec := minTime(end, d.Add(24*time.Hour)).Sub(maxTime(j.start, d)).Seconds()
			k := dayKey{u, d}
			r := usage[k]
			if r == nil {
				r = &record.UsageRow{Account: j.account, User: j.user, PeriodStart: d}
				usage[k] = r
			}
			r.BillingSec += j.billing * j.q * sec
			r.CPUSec += float64(j.cpus) * sec
			r.MemMBSec += j.memMB * sec
			r.GPUSec += j.gpu * sec
		}
	}
	for m, rows := range jobsByMonth {
		write(schemas.TableJobs, m, rows)
	}
	usageByMonth := map[time.Time][]record.UsageRow{}
	for _, r := range usage {
		m := monthStart(r.PeriodStart)
		usageByMonth[m] = append(usageByMonth[m], *r)
	}
	for m, rows := range usageByMonth {
		write(schemas.TableUsage, m, rows)
	}

	// The tree, and a snapshot per day.
	var nodes []fairshare.Node
	accIdx := map[string]int{}
	for _, a := range h.accounts {
		p := -1
		if a.parent != "" {
			p = accIdx[a.parent]
		}
		accIdx[a.name] = len(nodes)
		nodes = append(nodes, fairshare.Node{Account: a.name, Parent: p, Shares: a.shares})
	}
	firstUser := len(nodes)
	for _, u := range h.users {
		nodes = append(nodes, fairshare.Node{Account: u.account, User: u.name, Parent: accIdx[u.account], Shares: u.shares})
	}
	tree, err := fairshare.NewTree(nodes)
	if err != nil {
		tb.Fatal(err)
	}
	// Daily billing seconds per user, dense.
	days := int(h.last.Sub(h.first)/(24*time.Hour)) + 1
	daily := make([][]float64, len(h.users))
	for i := range daily {
		daily[i] = make([]float64, days)
	}
	for k, r := range usage {
		if i := int(k.day.Sub(h.first) / (24 * time.Hour)); i >= 0 && i < days {
			daily[k.user][i] += r.BillingSec
		}
	}
	f := decay.DecayOver(h.config.HalfLifeSec, 86400)
	raw := make([]float64, len(h.users))
	own := make([]float64, tree.Len())
	in := make([]float64, len(nodes))
	acc := make([]float64, tree.Len())
	var res fairshare.Result
	fsByMonth := map[time.Time][]record.FairshareRow{}
	assocByMonth := map[time.Time][]record.AssociationRow{}
	for i := 1; i < days; i++ {
		snap := h.first.AddDate(0, 0, i)
		for u := range raw {
			raw[u] = raw[u]*f + daily[u][i-1]
		}
		clear(in)
		copy(in[firstUser:], raw)
		tree.Permute(own, in)
		fairshare.Accumulate(tree, own, acc)
		switch h.config.Algorithm {
		case "classic":
			fairshare.Classic(tree, acc, float64(h.config.DampeningFactor), &res)
		default:
			fairshare.FairTree(tree, acc, &res)
		}
		m := monthStart(snap)
		fsByMonth[m] = append(fsByMonth[m], record.FairshareRows(snap, tree, &res)...)
		if i == 1 || snap.Day() == 1 {
			assocByMonth[m] = append(assocByMonth[m], record.AssociationRows(snap, tree, "assoc.psv")...)
		}
	}
	for m, rows := range fsByMonth {
		write(schemas.TableFairshare, m, rows)
	}
	for m, rows := range assocByMonth {
		write(schemas.TableAssociations, m, rows)
	}
	prioByMonth := map[time.Time][]record.PriorityRow{}
	for _, r := range h.priority {
		m := monthStart(r.At)
		prioByMonth[m] = append(prioByMonth[m], r)
	}
	for m, rows := range prioByMonth {
		slices.SortFunc(rows, func(a, b record.PriorityRow) int { return record.ComparePriority(&a, &b) })
		write(schemas.TablePriority, m, rows)
	}
	cfg, err := record.MarshalConfig(h.config)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := hist.AppendRun(h.cluster, record.RunRow{RunID: "run-" + h.cluster, Started: h.windowEnd.Add(time.Hour),
		Finished: h.windowEnd.Add(2 * time.Hour), Version: "test", Config: cfg, Read: int64(len(h.jobs)),
		Ingested: int64(len(h.jobs)), Skipped: map[string]int64{}, JobsCharged: int64(len(h.jobs)), Snapshots: int64(days - 1)}); err != nil {
		tb.Fatal(err)
	}
}

// fptr returns nil for NaN (a blank cell).
func fptr(v float64) *float64 {
	if math.IsNaN(v) {
		return nil
	}
	return &v
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
