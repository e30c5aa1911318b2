package recordtest

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fairledger/fairledger/export/record"
)

// ptr returns a pointer to a copy of v.
func ptr[T any](v T) *T { return &v }

// TS is a UTC time with microseconds, the precision the files keep.
func TS(s string, micros int) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.UTC().Add(time.Duration(micros) * time.Microsecond)
}

// Jan is 2025-01-01T00:00:00Z, the month most samples fall in.
var Jan = TS("2025-01-01T00:00:00Z", 0)

// Jobs returns three jobs rows that exercise every column: array and
// heterogeneous jobs, a running job (no end), NULL and set nullable
// columns, infinite billing, an empty TRES map.
func Jobs() []record.JobRow {
	return []record.JobRow{
		{JobID: "101_3", JobIDRaw: 104, ArrayJobID: ptr[int64](101), ArrayTaskID: ptr[int64](3),
			User: "bob", Account: "physics", Partition: "gpu", QOS: "normal", State: "COMPLETED",
			Submit: ptr(TS("2025-01-02T09:00:00Z", 0)), Eligible: ptr(TS("2025-01-02T09:00:01Z", 0)),
			Start: TS("2025-01-02T10:00:00Z", 250), End: ptr(TS("2025-01-02T11:00:00Z", 0)),
			ElapsedSec: ptr[int64](3600), ChargedSec: 3600, SuspendedSec: ptr[int64](0), TimelimitMin: ptr[int64](120),
			NNodes: 1, AllocCPUs: 8, MemMB: 32768, NodeCount: 1, GPU: 2,
			TRES:    map[string]float64{"cpu": 8, "mem": 32768, "node": 1, "gres/gpu": 2, "gres/gpu:a100": 2, "billing": 24},
			Billing: 24.5, BillingSlurm: 24, UsageFactor: 1, SourceFile: "sacct-2025-01-02.txt", SourceLine: 2},
		{JobID: "99", JobIDRaw: 99, User: "alice", Account: "physics", Partition: "cpu", QOS: "", State: "RUNNING",
			CancelledBy: nil, Start: TS("2025-01-03T00:00:00Z", 0), End: nil,
			ChargedSec: 86400, NNodes: 2, AllocCPUs: 64, MemMB: 0, NodeCount: 2, GPU: 0,
			TRES: map[string]float64{"cpu": 64, "node": 2}, Billing: math.Inf(1), BillingSlurm: math.MaxInt64,
			UsageFactor: 0.5, SourceFile: "sacct-2025-01-03.txt", SourceLine: 7},
		{JobID: "42+1", JobIDRaw: 43, HetJobID: ptr[int64](42), HetJobOffset: ptr[int64](1),
			User: "alice", Account: "chem", Partition: "cpu", QOS: "low", State: "CANCELLED",
			CancelledBy: ptr("1000"), Start: TS("2025-01-01T00:00:00Z", 0), End: ptr(TS("2025-01-01T00:00:10Z", 0)),
			ElapsedSec: ptr[int64](10), ChargedSec: 10, NNodes: 1, AllocCPUs: 1, MemMB: 100, NodeCount: 1,
			TRES: map[string]float64{}, Billing: math.Inf(-1), BillingSlurm: 0, UsageFactor: 1,
			SourceFile: "sacct-2025-01-01.txt", SourceLine: 3},
	}
}

// WantJobOrder is Jobs in (account, user, start, job_id_raw, job_id)
// order, worked out by hand: chem/alice, physics/alice, physics/bob.
var WantJobOrder = []string{"42+1", "99", "101_3"}

// Usage returns three usage rows of two accounts, not in the table's
// order.
func Usage() []record.UsageRow {
	return []record.UsageRow{
		{Account: "physics", User: "bob", Partition: "", PeriodStart: TS("2025-01-02T00:00:00Z", 0), BillingSec: 88200, CPUSec: 28800, MemMBSec: 117964800, GPUSec: 7200},
		{Account: "physics", User: "bob", Partition: "", PeriodStart: TS("2025-01-01T00:00:00Z", 0), BillingSec: 1, CPUSec: 1, MemMBSec: 1, GPUSec: 0},
		{Account: "chem", User: "alice", Partition: "gpu", PeriodStart: TS("2025-01-01T00:00:00Z", 0), BillingSec: 10, CPUSec: 10, MemMBSec: 1000, GPUSec: 0},
	}
}

// Fairshare returns four fairshare rows of one Fair Tree snapshot, not in
// the table's order, with NULL and set values, +Inf and a
// FairShare=parent association.
func Fairshare() []record.FairshareRow {
	snap := TS("2025-01-31T00:00:00Z", 0)
	return []record.FairshareRow{
		{Snapshot: snap, Algorithm: "fair_tree", Account: "root", Depth: 0, NormShares: ptr(0.0), RawUsage: ptr(100.0),
			EffectvUsage: ptr(1.0)},
		{Snapshot: snap, Algorithm: "fair_tree", Account: "physics", Parent: "root", Depth: 1, RawShares: ptr[int64](40),
			NormShares: ptr(0.4), RawUsage: ptr(0.0), NormUsage: ptr(0.0), EffectvUsage: ptr(0.0), LevelFS: ptr(math.Inf(1))},
		{Snapshot: snap, Algorithm: "fair_tree", Account: "physics", User: "bob", Parent: "physics", Depth: 2, IsUser: true,
			RawShares: ptr[int64](1), NormShares: ptr(1.0), RawUsage: ptr(0.0), NormUsage: ptr(0.0), EffectvUsage: ptr(0.0),
			FairShare: ptr(1.0), LevelFS: ptr(math.Inf(1)), Rank: ptr[int32](2)},
		{Snapshot: snap, Algorithm: "fair_tree", Account: "chem", User: "alice", Partition: "gpu", Parent: "chem", Depth: 2,
			IsUser: true, SharesParent: true, NormShares: ptr(0.6), RawUsage: ptr(100.0), NormUsage: ptr(1.0),
			EffectvUsage: ptr(1.0), FairShare: ptr(0.5), Rank: ptr[int32](1)},
	}
}

// Associations returns three associations rows of one tree, a
// FairShare=parent user among them.
func Associations() []record.AssociationRow {
	snap := TS("2025-01-01T00:00:00Z", 0)
	return []record.AssociationRow{
		{Snapshot: snap, Account: "root", Shares: ptr[int64](1), Lineage: "/", SourceFile: "assoc.txt"},
		{Snapshot: snap, Account: "physics", Parent: "root", Shares: ptr[int64](40), Lineage: "/physics/", SourceFile: "assoc.txt"},
		{Snapshot: snap, Account: "physics", User: "bob", Parent: "physics", SharesParent: true, Lineage: "/physics/0-bob/", SourceFile: "assoc.txt"},
	}
}

// Priority returns priority rows: a job in two partitions and one with a
// TRES term, nice and no eligible time (an array's pending tasks) at a
// snapshot, and the first job's submit and start rows.
func Priority() []record.PriorityRow {
	snap, tick := TS("2025-01-01T00:00:00Z", 0), TS("2024-12-31T23:59:30Z", 0)
	sub, prev, start := TS("2024-12-31T20:00:00Z", 0), TS("2024-12-31T00:00:00Z", 0), TS("2025-01-01T00:10:00Z", 0)
	return []record.PriorityRow{
		{At: sub, Event: record.EventSubmit, Snapshot: &prev, ComputedAt: sub, JobID: 12, User: "bob", Account: "physics", Partition: "cpu",
			QOS: "normal", Priority: 10815, AssocW: 50, FairShareW: 10100, JobSizeW: 531.25, PartitionW: 100,
			TRESW: map[string]float64{"cpu": 31.25, "mem": 3.2}, Submit: &sub, Eligible: &sub},
		{At: snap, Event: record.EventPending, Snapshot: &snap, ComputedAt: tick, JobID: 12, User: "bob", Account: "physics", Partition: "gpu", QOS: "normal",
			Priority: 11615, AgeW: 0, AssocW: 50, FairShareW: 10000, JobSizeW: 531.25, PartitionW: 1000, QOSW: 0,
			TRESW: map[string]float64{"cpu": 31.25, "mem": 3.2}, Submit: &sub, Eligible: &sub},
		{At: snap, Event: record.EventPending, Snapshot: &snap, ComputedAt: tick, JobID: 12, User: "bob", Account: "physics", Partition: "cpu", QOS: "normal",
			Priority: 10715, AgeW: 0, AssocW: 50, FairShareW: 10000, JobSizeW: 531.25, PartitionW: 100, QOSW: 0,
			TRESW: map[string]float64{"cpu": 31.25, "mem": 3.2}, Submit: &sub, Eligible: &sub},
		{At: snap, Event: record.EventPending, Snapshot: &snap, ComputedAt: tick, JobID: 3, ArrayJobID: ptr[int64](3), User: "alice", Account: "chem", Partition: "cpu", QOS: "high",
			Priority: 1, TRESW: map[string]float64{}, Nice: 100},
		{At: start, Event: record.EventStart, Snapshot: &snap, ComputedAt: tick, JobID: 12, User: "bob", Account: "physics", Partition: "gpu",
			QOS: "normal", Priority: 11615, AssocW: 50, FairShareW: 10000, JobSizeW: 531.25, PartitionW: 1000,
			TRESW: map[string]float64{"cpu": 31.25, "mem": 3.2}, Submit: &sub, Eligible: &sub,
			WaitSec: ptr[int64](4*3600 + 600), Rank: ptr[int64](2), Waiting: ptr[int64](2)},
	}
}

// Run returns a runs row with two inputs, skipped rows and a config.
func Run() record.RunRow {
	return record.RunRow{RunID: "0123456789abcdef", Started: TS("2025-02-01T03:04:05Z", 0), Finished: TS("2025-02-01T03:05:00Z", 999),
		Version: "v0.1.0", Inputs: []record.RunInput{{Path: "sacct.txt", SizeBytes: 1234, SHA256: strings.Repeat("ab", 32)}, {Path: "slurm.conf", SizeBytes: 99, SHA256: strings.Repeat("cd", 32)}},
		Config: `{"PriorityDecayHalfLife":"7-0"}`, Read: 10, Ingested: 7, Rejected: 1,
		Skipped: map[string]int64{"step record": 1, "zero elapsed": 1}, JobsCharged: 7, Snapshots: 31}
}

// Normalize makes read-back rows comparable with reflect.DeepEqual: times in
// UTC and empty maps and slices as nil.
func Normalize[T any](rows []T) []T {
	out := slices.Clone(rows)
	for i := range out {
		v := reflect.ValueOf(&out[i]).Elem()
		for j := 0; j < v.NumField(); j++ {
			f := v.Field(j)
			switch x := f.Interface().(type) {
			case time.Time:
				f.Set(reflect.ValueOf(x.UTC()))
			case *time.Time:
				if x != nil {
					f.Set(reflect.ValueOf(ptr(x.UTC())))
				}
			default:
				if (f.Kind() == reflect.Map || f.Kind() == reflect.Slice) && f.Len() == 0 {
					f.Set(reflect.Zero(f.Type()))
				}
			}
		}
	}
	return out
}

// SortedCopy returns a copy of rows stably sorted by cmp.
func SortedCopy[T any](rows []T, cmp func(a, b *T) int) []T {
	out := slices.Clone(rows)
	slices.SortStableFunc(out, func(a, b T) int { return cmp(&a, &b) })
	return out
}

// VariedJobs makes n jobs rows in shuffled order exercising every way a
// value can look to the encoder: nil and set pointers in each nullable
// column, nil, empty and larger TRES maps, empty and non-ASCII strings,
// rows equal in every sort key (so the tie order shows), timestamps with
// microseconds and before 1970, NaN and infinite floats; with mono, 1% of
// the starts carry a monotonic clock reading (which time.Compare, and so
// record.CompareJobs, compares instead of the wall clock).
func VariedJobs(n int, seed uint64, mono bool) []record.JobRow {
	r := rand.New(rand.NewPCG(seed, 1))
	users := []string{"alice", "bob", "", "zoë", "user-with-a-rather-long-name", "Bob"}
	accounts := []string{"physics", "chem", "", "Åström_lab", "bio"}
	tresKeys := []string{"cpu", "mem", "node", "billing", "gres/gpu", "gres/gpu:a100", "license/matlab", "bb/datawarp"}
	now := time.Now() // carries a monotonic reading
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	maybe := func(p float64) bool { return r.Float64() < p }
	i64 := func(v int64) *int64 {
		if maybe(0.3) {
			return nil
		}
		return &v
	}
	tm := func(t time.Time) *time.Time {
		if maybe(0.2) {
			return nil
		}
		return &t
	}
	rows := make([]record.JobRow, n)
	for i := range rows {
		start := base.Add(time.Duration(r.Int64N(40*86400*1e6)) * time.Microsecond)
		switch {
		case maybe(0.01):
			start = time.Date(1969, 12, 31, 23, 59, 59, 999_000, time.UTC)
		case mono && maybe(0.01):
			start = now.Add(time.Duration(r.IntN(1000)) * time.Second)
		}
		raw := int64(1000 + r.IntN(n))
		var tres map[string]float64
		switch k := r.IntN(10); {
		case k == 0: // nil
		case k == 1:
			tres = map[string]float64{}
		default:
			tres = map[string]float64{}
			for range k {
				tres[tresKeys[r.IntN(len(tresKeys))]] = float64(r.IntN(1 << 20))
			}
		}
		row := record.JobRow{JobID: strconv.FormatInt(raw, 10), JobIDRaw: raw,
			ArrayJobID: i64(raw - 5), ArrayTaskID: i64(int64(r.IntN(100))), HetJobID: i64(raw), HetJobOffset: i64(0),
			User: users[r.IntN(len(users))], Account: accounts[r.IntN(len(accounts))],
			Partition: []string{"cpu", "gpu", ""}[r.IntN(3)], QOS: []string{"normal", ""}[r.IntN(2)],
			State:  []string{"COMPLETED", "RUNNING", "CANCELLED"}[r.IntN(3)],
			Submit: tm(start.Add(-time.Hour)), Eligible: tm(start), Start: start, End: tm(start.Add(time.Duration(r.IntN(86400)) * time.Second)),
			ElapsedSec: i64(int64(r.IntN(86400))), ChargedSec: int64(r.IntN(86400)), SuspendedSec: i64(0), TimelimitMin: i64(int64(r.IntN(4320))),
			NNodes: int64(1 + r.IntN(4)), AllocCPUs: int64(r.IntN(256)), MemMB: float64(r.IntN(1 << 20)), NodeCount: 1, GPU: float64(r.IntN(8)),
			TRES: tres, Billing: r.Float64() * 100, BillingSlurm: int64(r.IntN(100)), UsageFactor: []float64{1, 0.5, 0}[r.IntN(3)],
			SourceFile: "sacct-" + strconv.Itoa(r.IntN(30)) + ".txt", SourceLine: int64(i + 2)}
		if maybe(0.05) {
			s := strconv.Itoa(60000 + r.IntN(10))
			row.CancelledBy = &s
		}
		if maybe(0.01) {
			row.Billing, row.BillingSlurm = math.Inf(1), math.MaxInt64
		}
		if maybe(0.01) {
			row.MemMB = math.NaN()
		}
		if maybe(0.02) && i > 0 { // equal sort keys, other columns differ
			p := rows[r.IntN(i)]
			row.Account, row.User, row.Start, row.JobIDRaw, row.JobID = p.Account, p.User, p.Start, p.JobIDRaw, p.JobID
		}
		rows[i] = row
	}
	return rows
}

// BenchJobs makes n plausible jobs rows: 50 accounts × 20 users, a few
// partitions and QOS, array tasks, 5 TRES per row, one month of starts.
func BenchJobs(n int) []record.JobRow {
	parts := []string{"cpu", "gpu", "bigmem", "debug"}
	qos := []string{"normal", "low", "high"}
	states := []string{"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT"}
	rows := make([]record.JobRow, n)
	for i := range rows {
		start := Jan.Add(time.Duration(i%(31*86400)) * time.Second)
		end := start.Add(time.Duration(60+i%7200) * time.Second)
		cpus := int64(1 + i%64)
		gpu := float64(i % 3)
		r := &rows[i]
		*r = record.JobRow{JobID: fmt.Sprint(1000000 + i), JobIDRaw: int64(1000000 + i),
			User: fmt.Sprintf("user%03d", i%1000), Account: fmt.Sprintf("acct%02d", i%50),
			Partition: parts[i%len(parts)], QOS: qos[i%len(qos)], State: states[i%len(states)],
			Submit: &start, Eligible: &start, Start: start, End: &end, ElapsedSec: ptr(int64(end.Sub(start) / time.Second)),
			ChargedSec: int64(end.Sub(start) / time.Second), TimelimitMin: ptr[int64](240), NNodes: 1, AllocCPUs: cpus,
			MemMB: float64(cpus * 4096), NodeCount: 1, GPU: gpu,
			TRES:    map[string]float64{"cpu": float64(cpus), "mem": float64(cpus * 4096), "node": 1, "gres/gpu": gpu, "billing": float64(cpus)},
			Billing: float64(cpus) + 10*gpu, BillingSlurm: cpus + 10*int64(gpu), UsageFactor: 1,
			SourceFile: fmt.Sprintf("sacct-2025-01-%02d.txt", 1+i%31), SourceLine: int64(2 + i)}
		if i%10 == 0 {
			r.ArrayJobID, r.ArrayTaskID = ptr(int64(1000000+i-i%100)), ptr(int64(i%100))
		}
	}
	return rows
}

// VariedPriority makes n priority rows in shuffled order exercising every
// way a value can look to the encoder: each event, nil and set pointers in
// each nullable column, nil, empty, one-entry and many-entry TRES maps
// (their keys drawn from a list not in byte order), empty and non-ASCII
// names, rows equal in every sort key (so the tie order shows), times
// before 1970, NaN, infinite and negative-zero weights, extreme integers.
// Its times have whole microseconds, which the files keep.
func VariedPriority(n int, seed uint64) []record.PriorityRow {
	r := rand.New(rand.NewPCG(seed, 4))
	users := []string{"alice", "bob", "", "zoë", "user-with-a-rather-long-name", "Bob"}
	accounts := []string{"physics", "chem", "", "Åström_lab", "bio"}
	parts := []string{"cpu", "gpu", "", "grün"}
	qos := []string{"normal", "", "high", "Ünterwegs"}
	events := []string{record.EventSubmit, record.EventPending, record.EventStart}
	tresKeys := []string{"mem", "cpu", "gres/gpu:a100", "billing", "node", "gres/gpu", "license/matlab", "bb/datawarp", "ü/non-ascii"}
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	snaps := []time.Time{time.Date(1969, 12, 31, 23, 59, 59, 999_000, time.UTC), base, base.Add(time.Hour),
		base.Add(36*time.Hour + 250*time.Microsecond), base.AddDate(0, 0, 7)}
	maybe := func(p float64) bool { return r.Float64() < p }
	i64 := func(p float64, v int64) *int64 {
		if maybe(p) {
			return nil
		}
		return &v
	}
	tm := func(p float64, t time.Time) *time.Time {
		if maybe(p) {
			return nil
		}
		return &t
	}
	weight := func() float64 {
		switch x := r.Float64(); {
		case x < 0.3:
			return 0
		case x < 0.31:
			return math.NaN()
		case x < 0.32:
			return math.Inf(1)
		case x < 0.33:
			return math.Copysign(0, -1)
		default:
			return r.ExpFloat64() * math.Pow(10, float64(r.IntN(8)-2))
		}
	}
	rows := make([]record.PriorityRow, n)
	for i := range rows {
		snap := snaps[r.IntN(len(snaps))]
		ev := events[r.IntN(len(events))]
		at := snap
		if ev != record.EventPending {
			at = snap.Add(time.Duration(r.Int64N(86400*1e6)) * time.Microsecond)
		}
		var tres map[string]float64
		switch k := r.IntN(10); {
		case k == 0: // nil
		case k == 1:
			tres = map[string]float64{}
		case k == 2:
			tres = map[string]float64{tresKeys[r.IntN(len(tresKeys))]: weight()}
		default:
			tres = map[string]float64{}
			for j := r.IntN(len(tresKeys)); len(tres) < min(k, len(tresKeys)); j = (j + 1) % len(tresKeys) {
				tres[tresKeys[j]] = weight()
			}
		}
		row := record.PriorityRow{At: at, Event: ev, Snapshot: tm(0.1, snap), ComputedAt: at.Add(-time.Duration(r.IntN(30)) * time.Second),
			JobID: int64(1 + r.IntN(n/4+1)), ArrayJobID: i64(0.7, int64(r.IntN(1000))),
			User: users[r.IntN(len(users))], Account: accounts[r.IntN(len(accounts))],
			Partition: parts[r.IntN(len(parts))], QOS: qos[r.IntN(len(qos))],
			Priority: []int64{0, 1, math.MaxInt64, -1, int64(r.IntN(1 << 30))}[r.IntN(5)],
			AgeW:     weight(), AssocW: weight(), FairShareW: weight(), JobSizeW: weight(), PartitionW: weight(), QOSW: weight(),
			TRESW: tres, Site: int64(r.IntN(3)) - 1, Nice: []int64{0, 100, -100, math.MinInt64}[r.IntN(4)],
			Submit: tm(0.2, at.Add(-time.Hour)), Eligible: tm(0.3, at.Add(-30*time.Minute))}
		if ev == record.EventStart || maybe(0.05) {
			row.WaitSec, row.Rank, row.Waiting = i64(0.2, int64(r.IntN(86400))), i64(0.3, int64(1+r.IntN(50))), i64(0.3, int64(r.IntN(100)))
		}
		if maybe(0.05) && i > 0 { // equal sort keys, other columns differ
			p := rows[r.IntN(i)]
			row.At, row.JobID, row.Partition, row.Event = p.At, p.JobID, p.Partition, p.Event
		}
		rows[i] = row
	}
	return rows
}

// FormatPriorityRow prints a priority row with its pointers followed, its
// times in UTC and its TRES map in key order (a nil map as an empty one).
func FormatPriorityRow(r record.PriorityRow) string {
	t := func(p *time.Time) string {
		if p == nil {
			return "NULL"
		}
		return p.UTC().Format(time.RFC3339Nano)
	}
	i := func(p *int64) string {
		if p == nil {
			return "NULL"
		}
		return strconv.FormatInt(*p, 10)
	}
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	var tres []string
	for _, k := range slices.Sorted(maps.Keys(r.TRESW)) {
		tres = append(tres, k+"="+f(r.TRESW[k]))
	}
	return t(&r.At) + " " + r.Event + " snapshot=" + t(r.Snapshot) + " computed_at=" + t(&r.ComputedAt) +
		" job=" + strconv.FormatInt(r.JobID, 10) + " array_job=" + i(r.ArrayJobID) +
		" " + r.User + "|" + r.Account + "|" + r.Partition + "|" + r.QOS + " priority=" + strconv.FormatInt(r.Priority, 10) +
		" age=" + f(r.AgeW) + " assoc=" + f(r.AssocW) + " fairshare=" + f(r.FairShareW) + " jobsize=" + f(r.JobSizeW) +
		" partition=" + f(r.PartitionW) + " qos=" + f(r.QOSW) + " tres={" + strings.Join(tres, ",") + "}" +
		" site=" + strconv.FormatInt(r.Site, 10) + " nice=" + strconv.FormatInt(r.Nice, 10) +
		" submit=" + t(r.Submit) + " eligible=" + t(r.Eligible) + " wait=" + i(r.WaitSec) + " rank=" + i(r.Rank) + " waiting=" + i(r.Waiting)
}

// FormatFairshareRow prints a fairshare row with its pointers followed.
func FormatFairshareRow(r record.FairshareRow) string {
	f := func(p *float64) string {
		if p == nil {
			return "NULL"
		}
		return strconv.FormatFloat(*p, 'g', -1, 64)
	}
	i := func(p *int64) string {
		if p == nil {
			return "NULL"
		}
		return strconv.FormatInt(*p, 10)
	}
	k := "NULL"
	if r.Rank != nil {
		k = strconv.Itoa(int(*r.Rank))
	}
	return r.Snapshot.Format(time.RFC3339) + " " + r.Algorithm + " " + r.Account + "|" + r.User + "|" + r.Partition +
		" parent=" + r.Parent + " depth=" + strconv.Itoa(int(r.Depth)) + " user=" + strconv.FormatBool(r.IsUser) +
		" raw_shares=" + i(r.RawShares) + " shares_parent=" + strconv.FormatBool(r.SharesParent) +
		" norm_shares=" + f(r.NormShares) + " raw_usage=" + f(r.RawUsage) + " norm_usage=" + f(r.NormUsage) +
		" effectv_usage=" + f(r.EffectvUsage) + " fair_share=" + f(r.FairShare) + " level_fs=" + f(r.LevelFS) + " rank=" + k
}
