package query

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/schemas"
)

// The history of a year (issue 6): jobs, usage and daily fair-share
// snapshots of a 5 M-job cluster, written month by month the way nightly
// runs fill a history, then queried through DuckDB.
const (
	yearJobs  = 5_000_000
	yearLabs  = 400
	yearUsers = 9_599 // + 400 labs + root = 10,000 associations per snapshot
)

var yearStart = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC) // 365 days: 3.65 M snapshot rows

// yearCluster holds the names and the reusable row buffers of the
// synthetic year, so only one month of rows is in memory at a time.
type yearCluster struct {
	labs, users []string
	userLab     []int32
	parts       []string
	qos         []string
	states      []string
	tres        map[[2]int64]map[string]float64 // shared TRES maps by (cpus, gpus)

	jobs      []record.JobRow
	times     []time.Time // Submit, Eligible, End of jobs
	ints      []int64     // ElapsedSec, TimelimitMin, SuspendedSec of jobs
	usage     []record.UsageRow
	fairshare []record.FairshareRow
	floats    []float64 // the pointer targets of fairshare
	ranks     []int32
	shares    []int64

	gpuHours float64 // Σ gpu × charged_sec / 3600 over every job written
}

func newYearCluster() *yearCluster {
	c := &yearCluster{
		parts:  []string{"shared", "sapphire", "gpu", "serial_requeue", "gpu_requeue", "test"},
		qos:    []string{"normal", "lowprio", "free"},
		states: []string{"COMPLETED", "COMPLETED", "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY"},
		tres:   map[[2]int64]map[string]float64{},
	}
	for i := range yearLabs {
		c.labs = append(c.labs, "lab"+strconv.Itoa(1000+i))
	}
	for u := range yearUsers {
		c.users = append(c.users, "u"+strconv.Itoa(60000+u))
		c.userLab = append(c.userLab, int32(u%yearLabs))
	}
	return c
}

// tresMap returns the (shared, read-only) TRES map of an allocation.
func (c *yearCluster) tresMap(cpus, gpus int64) map[string]float64 {
	k := [2]int64{cpus, gpus}
	m, ok := c.tres[k]
	if !ok {
		m = map[string]float64{"billing": float64(cpus + 10*gpus), "cpu": float64(cpus), "mem": float64(4000 * cpus), "node": 1}
		if gpus > 0 {
			m["gres/gpu"], m["gres/gpu:a100"] = float64(gpus), float64(gpus)
		}
		c.tres[k] = m
	}
	return m
}

// monthJobs fills c.jobs with the month's share of the year's jobs (first
// is the year-wide index of its first job), in start order as a nightly
// run produces them: users with a skewed activity, a fifth of the jobs on
// GPU partitions, run times up to a day.
func (c *yearCluster) monthJobs(month time.Time, first, n int) []record.JobRow {
	r := rand.New(rand.NewPCG(uint64(first), 7))
	c.jobs = slices.Grow(c.jobs[:0], n)[:n]
	c.times = slices.Grow(c.times[:0], 3*n)[:3*n]
	c.ints = slices.Grow(c.ints[:0], 3*n)[:3*n]
	span := month.AddDate(0, 1, 0).Sub(month)
	var day time.Time
	var source string // one sacct file per day, as nightly runs read them
	for i := range n {
		start := month.Add(time.Duration(int64(span) / int64(n) * int64(i)).Truncate(time.Second))
		u := int(float64(yearUsers) * math.Pow(r.Float64(), 2)) // skewed: low ids run more
		p := r.IntN(len(c.parts))
		cpus := int64(1) << r.IntN(7)
		var gpus int64
		if c.parts[p] == "gpu" || c.parts[p] == "gpu_requeue" {
			gpus = 1 + r.Int64N(4)
		}
		if d := start.Truncate(24 * time.Hour); d != day {
			day, source = d, "sacct-"+d.Format(time.DateOnly)+".psv"
		}
		el := int64(60 + r.IntN(86400))
		t := c.times[3*i : 3*i+3 : 3*i+3]
		t[0], t[1], t[2] = start.Add(-time.Duration(r.IntN(3600))*time.Second), start, start.Add(time.Duration(el)*time.Second)
		v := c.ints[3*i : 3*i+3 : 3*i+3]
		v[0], v[1], v[2] = el, 1440, 0
		id := int64(first + i + 1_000_000)
		bill := float64(cpus) + 10*float64(gpus)
		c.jobs[i] = record.JobRow{JobID: strconv.FormatInt(id, 10), JobIDRaw: id,
			User: c.users[u], Account: c.labs[c.userLab[u]], Partition: c.parts[p], QOS: c.qos[p%len(c.qos)],
			State: c.states[r.IntN(len(c.states))], Submit: &t[0], Eligible: &t[1], Start: start, End: &t[2],
			ElapsedSec: &v[0], ChargedSec: el, SuspendedSec: &v[2], TimelimitMin: &v[1], NNodes: 1,
			AllocCPUs: cpus, MemMB: float64(4000 * cpus), NodeCount: 1, GPU: float64(gpus),
			TRES: c.tresMap(cpus, gpus), Billing: bill, BillingSlurm: int64(bill), UsageFactor: 1,
			SourceFile: source, SourceLine: int64(2 + i)}
		if i%10 == 0 {
			c.jobs[i].ArrayJobID, c.jobs[i].ArrayTaskID = &c.jobs[i].JobIDRaw, &v[2]
		}
		c.gpuHours += float64(gpus) * float64(el) / 3600
	}
	return c.jobs
}

// monthUsage sums jobs into usage rows per (account, user, partition, UTC
// day of the start): for the benchmark a job's time is all charged to the
// day it started.
func (c *yearCluster) monthUsage(jobs []record.JobRow) []record.UsageRow {
	type key struct {
		user, part string
		day        int64
	}
	idx := make(map[key]int, len(jobs))
	c.usage = c.usage[:0]
	for i := range jobs {
		j := &jobs[i]
		day := j.Start.Truncate(24 * time.Hour)
		k := key{j.User, j.Partition, day.Unix()}
		n, ok := idx[k]
		if !ok {
			n = len(c.usage)
			idx[k] = n
			c.usage = append(c.usage, record.UsageRow{Account: j.Account, User: j.User, Partition: j.Partition, PeriodStart: day})
		}
		s := float64(j.ChargedSec)
		u := &c.usage[n]
		u.BillingSec += j.Billing * j.UsageFactor * s
		u.CPUSec += float64(j.AllocCPUs) * s
		u.MemMBSec += j.MemMB * s
		u.GPUSec += j.GPU * s
	}
	return c.usage
}

// monthFairshare makes the daily Fair Tree snapshots of the month: root,
// every lab and every user, with plausible (not computed) values.
func (c *yearCluster) monthFairshare(month time.Time) []record.FairshareRow {
	days := int(month.AddDate(0, 1, 0).Sub(month) / (24 * time.Hour))
	per := 1 + yearLabs + yearUsers
	n := days * per
	c.fairshare = slices.Grow(c.fairshare[:0], n)[:n]
	c.floats = slices.Grow(c.floats[:0], 6*n)[:6*n]
	c.ranks = slices.Grow(c.ranks[:0], n)[:n]
	c.shares = slices.Grow(c.shares[:0], n)[:n]
	r := rand.New(rand.NewPCG(uint64(month.Unix()), 11))
	for d := range days {
		snap := month.AddDate(0, 0, d)
		for a := range per {
			i := d*per + a
			f := c.floats[6*i : 6*i+6 : 6*i+6]
			row := &c.fairshare[i]
			*row = record.FairshareRow{Snapshot: snap, Algorithm: "fair_tree", Partition: "", RawShares: &c.shares[i],
				NormShares: &f[0], RawUsage: &f[1], NormUsage: &f[2], EffectvUsage: &f[3], FairShare: &f[4], LevelFS: &f[5]}
			switch {
			case a == 0:
				row.Account, row.Parent, row.Depth = "root", "", 0
			case a <= yearLabs:
				row.Account, row.Parent, row.Depth = c.labs[a-1], "root", 1
			default:
				u := a - 1 - yearLabs
				row.Account, row.User, row.Parent, row.Depth, row.IsUser = c.labs[c.userLab[u]], c.users[u], c.labs[c.userLab[u]], 2, true
			}
			c.shares[i] = 1 + int64(a%7)
			usage := math.Round(r.ExpFloat64() * 1e7)
			f[0], f[1], f[2], f[3] = 1/float64(yearLabs), usage, usage/1e12, usage/1e12
			f[4], f[5] = r.Float64(), f[0]/math.Max(f[3], 1e-12)
			if row.IsUser {
				c.ranks[i] = int32(1 + (a*7919)%yearUsers)
				row.Rank = &c.ranks[i]
			}
		}
	}
	return c.fairshare
}

// BenchmarkHistoryYear writes the history of a 5,000,000-job year — jobs
// (5 M rows), usage per user association, partition and day, and daily
// Fair Tree snapshots of 10,000 associations (3.65 M rows) — month by
// month with WritePartition, one month of rows in memory at a time, then
// runs "GPU-hours per account per month" over it through OpenDuckDB.
//
//	go test ./export/query -run '^$' -bench HistoryYear -benchtime 1x
//
// It reports write-s (time inside WritePartition, also per table; making
// up the rows is not counted), query-s, the rows written per second, the on-disk size of
// each table in MB, and the peak RSS of the process while writing (rows
// made up included) and while querying (the kernel's peak is reset
// between the two).
func BenchmarkHistoryYear(b *testing.B) {
	ctx := context.Background()
	var write, query time.Duration
	var writeRSS, queryRSS float64
	var rows int64
	var sizes map[string]int64
	perTable := map[string]time.Duration{}
	for range b.N {
		h, err := history.Open(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		resetPeakRSS()
		c := newYearCluster()
		timed := func(table string, month time.Time, rs any, n int) {
			t0 := time.Now()
			if err := h.WritePartition(table, "year", month, rs); err != nil {
				b.Fatal(err)
			}
			write += time.Since(t0)
			perTable[table] += time.Since(t0)
			rows += int64(n)
		}
		first := 0
		for m := range 12 {
			month := yearStart.AddDate(0, m, 0)
			// The year's jobs shared out by days in the month.
			next := int(int64(yearJobs) * int64(month.AddDate(0, 1, 0).Sub(yearStart)/time.Hour) / (365 * 24))
			jobs := c.monthJobs(month, first, next-first)
			first = next
			timed(schemas.TableJobs, month, jobs, len(jobs))
			usage := c.monthUsage(jobs)
			timed(schemas.TableUsage, month, usage, len(usage))
			fs := c.monthFairshare(month)
			timed(schemas.TableFairshare, month, fs, len(fs))
		}
		if first != yearJobs {
			b.Fatalf("wrote %d jobs, want %d", first, yearJobs)
		}

		writeRSS = max(writeRSS, peakRSSMiB())
		gpuHours := c.gpuHours
		c = nil // let resetPeakRSS free the rows
		resetPeakRSS()
		t0 := time.Now()
		db, err := OpenDuckDB(ctx, h.Dir)
		if err != nil {
			b.Fatal(err)
		}
		res, err := db.Query(ctx, `SELECT account, month, sum(gpu * charged_sec) / 3600 AS gpu_hours
			FROM jobs GROUP BY account, month ORDER BY account, month`)
		if err != nil {
			b.Fatal(err)
		}
		query += time.Since(t0)
		db.Close()
		queryRSS = max(queryRSS, peakRSSMiB())
		// Every lab runs jobs every month; the GPU-hours add up to what
		// was generated.
		total := 0.0
		for _, r := range res.Rows {
			total += r[2].(float64)
		}
		if len(res.Rows) != 12*yearLabs || math.Abs(total-gpuHours) > 1e-9*gpuHours {
			b.Fatalf("query: %d rows, %v GPU-hours; want %d rows, %v GPU-hours", len(res.Rows), total, 12*yearLabs, gpuHours)
		}

		sizes = map[string]int64{}
		for _, t := range []string{schemas.TableJobs, schemas.TableUsage, schemas.TableFairshare} {
			ps, err := h.Partitions(t)
			if err != nil {
				b.Fatal(err)
			}
			for _, p := range ps {
				sizes[t] += p.Bytes
			}
		}
	}
	n := float64(b.N)
	b.ReportMetric(write.Seconds()/n, "write-s")
	b.ReportMetric(query.Seconds()/n, "query-s")
	b.ReportMetric(float64(rows)/write.Seconds(), "rows/s")
	b.ReportMetric(float64(rows)/n, "rows")
	for t, d := range perTable {
		b.ReportMetric(d.Seconds()/n, t+"-write-s")
	}
	for t, s := range sizes {
		b.ReportMetric(float64(s)/1e6, t+"-MB")
	}
	b.ReportMetric(writeRSS, "peakRSS-write-MiB")
	b.ReportMetric(queryRSS, "peakRSS-query-MiB")
}
