package report

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fairledger/fairledger/export/query"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/fairshare"
	"github.com/fairledger/fairledger/schemas"
)

// Options select the cluster and period of the reports.
type Options struct {
	// Cluster is the Slurm cluster; empty means the only cluster of the
	// history (an error if it holds several).
	Cluster string
	// From is the start of the period (inclusive); zero means the start of
	// the history (first snapshot or first usage day).
	From time.Time
	// To is the end of the period (exclusive for usage and jobs, inclusive
	// for snapshots, so the midnight snapshot that closes the last day is
	// in); zero means the last snapshot of the history.
	To time.Time
	// TopN is the number of rows of the top users, top partitions and
	// biggest jobs tables; 0 means 10, at most MaxTopN.
	TopN int
	// MaxUsers is the number of users drawn in the factor chart (the ones
	// with the most usage in the period; the table lists them all); 0
	// means 8.
	MaxUsers int
	// LongestWaits is the number of the lab's longest waits the section
	// "Why did our jobs wait" explains one by one; 0 means 5, at most
	// MaxTopN.
	LongestWaits int

	// batchLabs, when set, is how many labs Reports reads the rows of at
	// a time, whatever their size; batchAssocs, when set, replaces
	// defaultBatchAssocs. Only the tests set them: the reports are the
	// same whatever they are.
	batchLabs, batchAssocs int
}

// defaultBatchAssocs bounds the associations (the accounts and user
// associations of the labs' subtrees in the tree) whose rows Reports
// reads at a time, a lab larger than that alone. A lab's rows grow with
// its associations: each one's series over up to maxPoints snapshots
// (15 kB in the dataset, more in DuckDB's spooled result), usage per
// month, jobs and waits. Each batch runs the queries of the rows once
// more, at a fraction of their cost over all labs (the package doc,
// "Speed and memory"). 512 is 70 labs of a generated year of 200 labs
// (7 associations each): report --all-accounts on 5 M jobs peaked at
// 170 MiB (one lab's report: 100 MiB; one batch of all labs: 210 MiB,
// growing with the number of labs) for 1.3 times the CPU of one batch;
// 256 took 165 MiB for 1.6 times.
const defaultBatchAssocs = 512

// batches splits labs, in order, into the runs of consecutive labs whose
// rows Reports reads together: as many as fit in defaultBatchAssocs
// associations (a larger lab alone), or Options.batchLabs labs.
func (d *Dataset) batches(labs []string) ([][]string, error) {
	maxAssocs := defaultBatchAssocs
	if d.opts.batchAssocs > 0 {
		maxAssocs = d.opts.batchAssocs
	}
	var out [][]string
	lo, assocs := 0, 0
	for i, lab := range labs {
		p, ok := d.tree.account(lab)
		if !ok {
			return nil, d.notFound(lab)
		}
		n := int(d.tree.end(p) - p)
		full := assocs+n > maxAssocs
		if d.opts.batchLabs > 0 {
			full = i-lo == d.opts.batchLabs
		}
		if i > lo && full {
			out = append(out, labs[lo:i])
			lo, assocs = i, 0
		}
		assocs += n
	}
	if lo < len(labs) {
		out = append(out, labs[lo:])
	}
	return out, nil
}

// maxPoints bounds the snapshots drawn per series: beyond it the last
// snapshot of each k-day bucket is kept (see thin).
const maxPoints = 400

// MaxTopN bounds Options.TopN: ten thousand rows per table are already
// more than a page can show (the sql command lists any number of jobs),
// and the biggest-jobs query keeps TopN charges per lab in memory.
// DuckDB's max(x, n) refuses n of a million or more.
const MaxTopN = 10000

func (o Options) topN() int {
	if o.TopN <= 0 {
		return 10
	}
	return o.TopN
}

func (o Options) maxUsers() int {
	if o.MaxUsers <= 0 {
		return 8
	}
	return o.MaxUsers
}

// assocKey names an association: an account row has an empty User.
type assocKey struct{ Account, User, Partition string }

func (k assocKey) compare(o assocKey) int {
	if c := strings.Compare(k.Account, o.Account); c != 0 {
		return c
	}
	if c := strings.Compare(k.User, o.User); c != 0 {
		return c
	}
	return strings.Compare(k.Partition, o.Partition)
}

// series are the fairshare columns of one association over the snapshots
// of a Dataset; NaN marks a NULL (blank) cell or a missing row.
type series struct {
	NormShares, NormUsage, EffectvUsage, FairShare, LevelFS []float64
}

func newSeries(n int) *series {
	mk := func() []float64 {
		s := make([]float64, n)
		for i := range s {
			s[i] = math.NaN()
		}
		return s
	}
	return &series{mk(), mk(), mk(), mk(), mk()}
}

// usageMonth is the undecayed usage of one user association in one UTC
// month of the period (seconds).
type usageMonth struct {
	Account, User, Month                 string
	BillingSec, CPUSec, MemMBSec, GPUSec float64
}

// partUsage is one account's use of one partition in the period.
type partUsage struct {
	Account, Partition     string
	BillingSec, CPUSec     float64
	GPUSec, MemMBSec, Jobs float64
}

// Dataset is everything the reports of one cluster and period need, read
// from a history in a few aggregate queries: what every lab's report
// shares (the period, the tree, the settings, the cluster's waits) and
// the rows of the accounts it was loaded for. Report builds one of those
// labs' report from it without touching the history again; Reports reads
// the rows of any number of labs a batch at a time.
type Dataset struct {
	// Cluster is the cluster reported on.
	Cluster string
	// From and To are the period (see Options).
	From, To time.Time
	// Last is the last snapshot in the period: the "now" of the reports.
	Last time.Time
	// Algorithm is the fairshare algorithm of the Last snapshot.
	Algorithm fairshare.Algorithm
	// Config is the runs.config of the run that produced the Last snapshot
	// (the first run started at or after it, else the latest run); nil
	// when the history has no runs.
	Config *record.RunConfig
	// ConfigRun and ConfigStarted identify that run.
	ConfigRun     string
	ConfigStarted time.Time

	opts      Options
	tree      *snapTree
	snapshots []time.Time
	prio      prioData    // the priority table's figures of the cluster (zero without it)
	rows      accountRows // the loaded accounts' rows
}

// accountRows are the rows of the accounts a Dataset was loaded for: what
// a lab's report reads of its own accounts only.
type accountRows struct {
	filter  []string // the accounts loaded, sorted; nil: all
	series  map[assocKey]*series
	months  []usageMonth  // sorted by account, user, month
	parts   []partUsage   // sorted by account, partition
	jobs    []JobUsage    // top N per account, sorted by account, then rank
	starts  []startWaits  // sorted by account, month
	pending []pendingSums // sorted by event time, account
	longest []LongWait    // the N longest waits of each account
}

// Load reads what the reports of the given accounts need from the history
// behind db (query.OpenDuckDB); accounts nil means every lab (Labs). It
// fails when the history has no fair-share snapshot in the period.
func Load(ctx context.Context, db *query.DB, accounts []string, opt Options) (*Dataset, error) {
	q := &querier{ctx: ctx, db: db}
	d, err := loadShared(q, opt)
	if err != nil {
		return nil, err
	}
	var filter []string
	if accounts != nil {
		if filter, err = d.subtrees(accounts); err != nil {
			return nil, err
		}
	}
	if err := d.loadRows(q, filter); err != nil {
		return nil, err
	}
	return d, nil
}

// LoadShared reads what the reports of every lab of the history behind
// db share (the period, the association tree, the run's settings, the
// cluster's waits) and no account's rows: Reports reads those a batch of
// labs at a time, so that writing the reports of all labs takes the
// memory of a few. It fails as Load does.
func LoadShared(ctx context.Context, db *query.DB, opt Options) (*Dataset, error) {
	d, err := loadShared(&querier{ctx: ctx, db: db}, opt)
	if err != nil {
		return nil, err
	}
	d.rows.filter = []string{}
	return d, nil
}

// loadShared reads the period, the tree, the run config and the
// cluster's priority figures.
func loadShared(q *querier, opt Options) (*Dataset, error) {
	if opt.TopN > MaxTopN {
		return nil, fmt.Errorf("report: top %d: at most %d rows per table", opt.TopN, MaxTopN)
	}
	if opt.LongestWaits > MaxTopN {
		return nil, fmt.Errorf("report: %d longest waits: at most %d rows per table", opt.LongestWaits, MaxTopN)
	}
	if slices.Contains(q.db.Missing, "fairshare") {
		return nil, errors.New("report: the history has no fairshare table yet (run fairledger run first)")
	}
	d := &Dataset{opts: opt}
	if err := d.resolvePeriod(q, opt); err != nil {
		return nil, err
	}
	if err := d.loadTree(q); err != nil {
		return nil, err
	}
	if err := d.loadConfig(q); err != nil {
		return nil, err
	}
	if !slices.Contains(q.db.Missing, "priority") {
		if err := d.loadPriority(q); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// subtrees returns the accounts of the given accounts' subtrees in the
// tree, sorted, each once.
func (d *Dataset) subtrees(accounts []string) ([]string, error) {
	filter := []string{}
	seen := map[string]bool{}
	for _, a := range accounts {
		lab, ok := d.tree.account(a)
		if !ok {
			return nil, d.notFound(a)
		}
		for _, s := range d.tree.subtreeAccounts(lab) {
			if !seen[s] {
				seen[s] = true
				filter = append(filter, s)
			}
		}
	}
	slices.Sort(filter)
	return filter, nil
}

// loadRows replaces the dataset's account rows with those of the accounts
// of filter (nil: all accounts).
func (d *Dataset) loadRows(q *querier, filter []string) error {
	d.rows = accountRows{filter: filter, series: map[assocKey]*series{}}
	if err := d.loadSeries(q, filter); err != nil {
		return err
	}
	if !slices.Contains(q.db.Missing, "usage") {
		if err := d.loadUsage(q, filter); err != nil {
			return err
		}
	}
	if !slices.Contains(q.db.Missing, "jobs") {
		if err := d.loadJobs(q, filter); err != nil {
			return err
		}
	}
	if d.prio.recorded {
		if err := d.loadWaits(q, filter); err != nil {
			return err
		}
	}
	return nil
}

// Reports builds the report of each of labs (accounts of the tree, as
// Labs lists them) in turn and calls fn with its index in labs: the
// reports Report builds from a dataset loaded for all of them, but the
// labs' rows are read from db (the session d was loaded from) a batch of
// labs at a time (defaultBatchAssocs) and dropped after it, so that the
// memory taken is a batch's, whatever the number of labs. An error of fn
// stops it.
func (d *Dataset) Reports(ctx context.Context, db *query.DB, labs []string, fn func(i int, r *Report) error) error {
	batches, err := d.batches(labs)
	if err != nil {
		return err
	}
	q := &querier{ctx: ctx, db: db}
	i := 0
	for _, batch := range batches {
		filter, err := d.subtrees(batch)
		if err != nil {
			return err
		}
		b := *d // the shared figures, with the batch's rows
		if err := b.loadRows(q, filter); err != nil {
			return err
		}
		for _, lab := range batch {
			r, err := b.Report(lab)
			if err != nil {
				return err
			}
			if err := fn(i, r); err != nil {
				return err
			}
			i++
		}
	}
	return nil
}

func (d *Dataset) notFound(account string) error {
	return fmt.Errorf("report: account %q is not in the association tree of cluster %s at %s",
		account, d.Cluster, fmtTime(d.Last))
}

// Labs returns the accounts that get a report with --all-accounts: every
// account but root with at least one user association directly under it
// in the tree of the Last snapshot, sorted by name.
func (d *Dataset) Labs() []string { return d.tree.labs() }

// querier runs the report's queries.
type querier struct {
	ctx context.Context
	db  *query.DB
}

// query collects a result of a few rows.
func (q *querier) query(what, sql string) (*query.Result, error) {
	r, err := q.db.Query(q.ctx, sql)
	if err != nil {
		return nil, fmt.Errorf("report: %s: %w", what, err)
	}
	return r, nil
}

// each calls fn with each row of a result that grows with the accounts
// read, in its order: the rows come through query.DB.Stream a page at a
// time, so only fn's own data outlives a page.
func (q *querier) each(what, sql string, fn func(row []any) error) error {
	rows, err := q.db.Stream(q.ctx, sql)
	if err != nil {
		return fmt.Errorf("report: %s: %w", what, err)
	}
	defer rows.Close()
	for {
		row, err := rows.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("report: %s: %w", what, err)
		}
		if err := fn(row); err != nil {
			return err
		}
	}
	if err := rows.Close(); err != nil {
		return fmt.Errorf("report: %s: %w", what, err)
	}
	return nil
}

// topPerAccount calls fn with the n rows of each account of relation r
// with the largest key (a BIGINT column of r; NULL is never among them),
// ties broken by the rest of order (which starts with key DESC), sorted by
// account and order: the choice among equal keys does not depend on the
// order DuckDB's threads see the rows in. with is the WITH clause that
// defines r, with an account column; cols are the columns of the result.
//
// Each account's n-th largest key is read first, and only the rows at or
// above it are sorted, joined to those thresholds as a list of known
// length: computed in the same statement, DuckDB misjudged their number
// and built its hash join on r (on a 5 M-job year, a batch of 32 labs'
// 850,000 job runs took the query's process to 213 MB, 86 MB with the
// list), and without thresholds its window sorts every row of every
// account.
func (q *querier) topPerAccount(what, with, key string, n int, cols, order string, fn func(row []any) error) error {
	nLit := strconv.Itoa(n)
	var kb []string
	err := q.each(what+" (thresholds)", with+` SELECT account, list_min(max(`+key+`, `+nLit+`)) FROM r GROUP BY account ORDER BY account`,
		func(row []any) error {
			if row[1] != nil { // every key NULL: no row
				kb = append(kb, "("+query.SQLString(asString(row[0]))+", "+strconv.FormatInt(asInt(row[1]), 10)+"::BIGINT)")
			}
			return nil
		})
	if err != nil || len(kb) == 0 {
		return err
	}
	return q.each(what, with+`, k(account, kb) AS (VALUES `+strings.Join(kb, ", ")+`)
SELECT `+cols+` FROM r JOIN k USING (account) WHERE `+key+` >= kb
QUALIFY row_number() OVER (PARTITION BY account ORDER BY `+order+`) <= `+nLit+`
ORDER BY account, `+order, fn)
}

// resolvePeriod picks the cluster, fills the period defaults and finds the
// snapshots in it.
func (d *Dataset) resolvePeriod(q *querier, opt Options) error {
	r, err := q.query("list clusters", "SELECT DISTINCT cluster FROM fairshare ORDER BY 1")
	if err != nil {
		return err
	}
	var clusters []string
	for _, row := range r.Rows {
		clusters = append(clusters, asString(row[0]))
	}
	switch {
	case opt.Cluster != "":
		if !slices.Contains(clusters, opt.Cluster) {
			return fmt.Errorf("report: cluster %q has no fair-share snapshots in the history (clusters: %s)",
				opt.Cluster, strings.Join(clusters, ", "))
		}
		d.Cluster = opt.Cluster
	case len(clusters) == 1:
		d.Cluster = clusters[0]
	case len(clusters) == 0:
		return errors.New("report: the history has no fair-share snapshots")
	default:
		return fmt.Errorf("report: the history holds several clusters (%s): choose one with --cluster",
			strings.Join(clusters, ", "))
	}
	c := query.SQLString(d.Cluster)
	d.From, d.To = opt.From.UTC(), opt.To.UTC()
	if d.To.IsZero() {
		r, err := q.query("last snapshot", "SELECT max(snapshot) FROM fairshare WHERE cluster = "+c)
		if err != nil {
			return err
		}
		d.To = asTime(r.Rows[0][0])
	}
	if d.From.IsZero() {
		sql := "SELECT min(snapshot) FROM fairshare WHERE cluster = " + c
		if !slices.Contains(q.db.Missing, "usage") {
			sql = "SELECT least((" + sql + "), (SELECT min(period_start) FROM usage WHERE cluster = " + c + "))"
		}
		r, err := q.query("first snapshot", sql)
		if err != nil {
			return err
		}
		d.From = asTime(r.Rows[0][0]).Truncate(24 * time.Hour)
	}
	if !d.From.Before(d.To) {
		return emptyPeriod(opt, d.From, d.To)
	}
	r, err = q.query("snapshots", "SELECT DISTINCT snapshot FROM fairshare WHERE cluster = "+c+
		" AND "+d.monthRange()+" AND snapshot >= "+tsLit(d.From)+" AND snapshot <= "+tsLit(d.To)+" ORDER BY 1")
	if err != nil {
		return err
	}
	all := make([]time.Time, 0, len(r.Rows))
	for _, row := range r.Rows {
		all = append(all, asTime(row[0]))
	}
	if len(all) == 0 {
		r, err := q.query("snapshot range", "SELECT min(snapshot), max(snapshot) FROM fairshare WHERE cluster = "+c)
		if err != nil {
			return err
		}
		return fmt.Errorf("report: cluster %s has no fair-share snapshot between %s and %s (its snapshots run from %s to %s)",
			d.Cluster, fmtTime(d.From), fmtTime(d.To), fmtTime(asTime(r.Rows[0][0])), fmtTime(asTime(r.Rows[0][1])))
	}
	d.snapshots = thin(all, maxPoints)
	d.Last = all[len(all)-1]
	return nil
}

// emptyPeriod explains a period with nothing in it in the user's terms:
// the dates given (--to as its last day, inclusive) and the end of the
// history the defaulted one came from (from the history's start, to its
// last snapshot).
func emptyPeriod(opt Options, from, to time.Time) error {
	switch {
	case opt.From.IsZero() && !opt.To.IsZero():
		return fmt.Errorf("report: empty period: --to %s ends before the history starts on %s",
			fmtDate(lastDay(opt.To)), fmtDate(from))
	case !opt.From.IsZero() && opt.To.IsZero():
		return fmt.Errorf("report: empty period: --from %s is not before the history's last snapshot (%s)",
			fmtDate(opt.From), fmtTime(to))
	case !opt.From.IsZero():
		return fmt.Errorf("report: empty period: --from %s is after --to %s", fmtDate(opt.From), fmtDate(lastDay(opt.To)))
	}
	return fmt.Errorf("report: empty period: the history starts on %s and its last snapshot is at %s",
		fmtDate(from), fmtTime(to))
}

// lastDay is the last UTC day of a period that ends (exclusive) at t.
func lastDay(t time.Time) time.Time { return t.Add(-time.Nanosecond).Truncate(24 * time.Hour) }

// thin keeps at most about limit snapshots: all of them if they fit, else
// the last snapshot of each k-day bucket counted from the first UTC day (k
// as small as fits), always including the last one. The choice depends only on the times.
func thin(ts []time.Time, limit int) []time.Time {
	if len(ts) <= limit {
		return ts
	}
	days := int(ts[len(ts)-1].Sub(ts[0])/(24*time.Hour)) + 1
	k := max(1, (days+limit-1)/limit)
	var out []time.Time
	origin := ts[0].Truncate(24 * time.Hour)
	bucket := func(t time.Time) int64 { return int64(t.Sub(origin) / (time.Duration(k) * 24 * time.Hour)) }
	for i, t := range ts {
		if i == len(ts)-1 || bucket(ts[i+1]) != bucket(t) {
			out = append(out, t)
		}
	}
	return out
}

// monthRange restricts a query to the hive months of the period, so DuckDB
// opens only those files.
func (d *Dataset) monthRange() string {
	return "month BETWEEN " + query.SQLString(d.From.Format(schemas.MonthLayout)) + " AND " + query.SQLString(d.To.Format(schemas.MonthLayout))
}

// loadTree reads the whole association tree at the Last snapshot.
func (d *Dataset) loadTree(q *querier) error {
	var rows []record.FairshareRow
	err := q.each("tree", `SELECT snapshot, algorithm, account, "user", "partition", parent, depth, is_user,
	raw_shares, shares_parent, norm_shares, raw_usage, norm_usage, effectv_usage, fair_share, level_fs, rank
	FROM fairshare WHERE cluster = `+query.SQLString(d.Cluster)+" AND month = "+query.SQLString(d.Last.Format(schemas.MonthLayout))+
		" AND snapshot = "+tsLit(d.Last)+` ORDER BY account, "user", "partition"`, func(v []any) error {
		row := record.FairshareRow{Snapshot: asTime(v[0]), Algorithm: asString(v[1]), Account: asString(v[2]),
			User: asString(v[3]), Partition: asString(v[4]), Parent: asString(v[5]), Depth: int32(asInt(v[6])),
			IsUser: asBool(v[7]), SharesParent: asBool(v[9]), NormShares: floatPtr(v[10]), RawUsage: floatPtr(v[11]),
			NormUsage: floatPtr(v[12]), EffectvUsage: floatPtr(v[13]), FairShare: floatPtr(v[14]), LevelFS: floatPtr(v[15])}
		if v[8] != nil {
			n := asInt(v[8])
			row.RawShares = &n
		}
		if v[16] != nil {
			n := int32(asInt(v[16]))
			row.Rank = &n
		}
		rows = append(rows, row)
		return nil
	})
	if err != nil {
		return err
	}
	t, err := newSnapTree(rows)
	if err != nil {
		return fmt.Errorf("report: tree of cluster %s at %s: %w", d.Cluster, fmtTime(d.Last), err)
	}
	d.Algorithm = t.res.Algorithm
	d.tree = t
	return nil
}

// floatPtr is a nullable DOUBLE as the history rows hold it.
func floatPtr(v any) *float64 {
	if v == nil {
		return nil
	}
	f := asFloat(v)
	return &f
}

// loadConfig reads the runs.config of the run that produced the Last
// snapshot.
func (d *Dataset) loadConfig(q *querier) error {
	if slices.Contains(q.db.Missing, "runs") {
		return nil
	}
	last := tsLit(d.Last)
	r, err := q.query("run config", "SELECT run_id, started, config FROM runs WHERE cluster = "+query.SQLString(d.Cluster)+
		" ORDER BY started < "+last+", CASE WHEN started >= "+last+" THEN epoch(started) ELSE -epoch(started) END, run_id LIMIT 1")
	if err != nil {
		return err
	}
	if len(r.Rows) == 0 {
		return nil
	}
	cfg, err := record.ParseRunConfig(asString(r.Rows[0][2]))
	if err != nil {
		return fmt.Errorf("report: run %s: %w", asString(r.Rows[0][0]), err)
	}
	d.Config, d.ConfigRun, d.ConfigStarted = &cfg, asString(r.Rows[0][0]), asTime(r.Rows[0][1])
	return nil
}

// accountFilter is " AND account IN (...)" for a non-nil filter.
func accountFilter(filter []string) string {
	if filter == nil {
		return ""
	}
	if len(filter) == 0 {
		return " AND false"
	}
	quoted := make([]string, len(filter))
	for i, a := range filter {
		quoted[i] = query.SQLString(a)
	}
	return " AND account IN (" + strings.Join(quoted, ", ") + ")"
}

// loadSeries reads the fairshare columns of the filtered accounts and
// their users at the chosen snapshots.
func (d *Dataset) loadSeries(q *querier, filter []string) error {
	idx := make(map[int64]int, len(d.snapshots))
	lits := make([]string, len(d.snapshots))
	for i, t := range d.snapshots {
		idx[t.UnixMicro()] = i
		lits[i] = tsLit(t)
	}
	n := len(d.snapshots)
	return q.each("fair-share series", `SELECT snapshot, account, "user", "partition", norm_shares, norm_usage,
	effectv_usage, fair_share, level_fs FROM fairshare WHERE cluster = `+query.SQLString(d.Cluster)+" AND "+d.monthRange()+
		" AND snapshot IN ("+strings.Join(lits, ", ")+")"+accountFilter(filter), func(row []any) error {
		i, ok := idx[asTime(row[0]).UnixMicro()]
		if !ok {
			return nil
		}
		k := assocKey{asString(row[1]), asString(row[2]), asString(row[3])}
		s := d.rows.series[k]
		if s == nil {
			s = newSeries(n)
			d.rows.series[k] = s
		}
		s.NormShares[i], s.NormUsage[i], s.EffectvUsage[i] = asFloat(row[4]), asFloat(row[5]), asFloat(row[6])
		s.FairShare[i], s.LevelFS[i] = asFloat(row[7]), asFloat(row[8])
		return nil
	})
}

// exactSum sums a DOUBLE expression in integer thousandths (exact, so
// the result does not depend on the order DuckDB's threads add the rows
// in) and returns it as a DOUBLE. Rounding each row to 0.001 unit-seconds
// is far below what a report prints; a BIGINT of thousandths holds a month
// of a 4 TiB allocation (mem_mb × seconds) with room to spare.
func exactSum(expr string) string { return "(sum(((" + expr + ") * 1000)::BIGINT)::DOUBLE / 1000)" }

// loadUsage reads the undecayed usage per user association and UTC month.
func (d *Dataset) loadUsage(q *querier, filter []string) error {
	return q.each("usage per month", `SELECT account, "user", strftime(period_start, '%Y-%m') AS m, `+
		exactSum("billing_sec")+", "+exactSum("cpu_sec")+", "+exactSum("mem_mb_sec")+", "+exactSum("gpu_sec")+
		" FROM usage WHERE cluster = "+query.SQLString(d.Cluster)+" AND "+d.monthRange()+
		" AND period_start >= "+tsLit(d.From)+" AND period_start < "+tsLit(d.To)+accountFilter(filter)+
		` GROUP BY ALL ORDER BY account, "user", m`, func(row []any) error {
		d.rows.months = append(d.rows.months, usageMonth{Account: asString(row[0]), User: asString(row[1]), Month: asString(row[2]),
			BillingSec: asFloat(row[3]), CPUSec: asFloat(row[4]), MemMBSec: asFloat(row[5]), GPUSec: asFloat(row[6])})
		return nil
	})
}

// chargedJobs is the SQL of every job run's charge inside the period, as
// CTE c. A run has one jobs row, in the partition of the UTC month it
// started in, with its whole charged_sec: it is charged from start for
// charged_sec seconds (schemas/jobs.md), and counts for the sec seconds of
// [start, start + charged_sec) inside [From, To). A run that started in a
// month before From's can therefore be charged in the period, so every
// month up to To's is read; the filter keeps only the runs that overlap
// the period. Its first terms are ones DuckDB checks against each Parquet
// row group's min/max of start and end before reading the other columns
// (a run that overlaps the period started before To and ended, if it
// ended, after From), so the earlier months cost little more than their
// start and end columns. Times are epoch seconds: cheaper than timestamp
// arithmetic on millions of rows.
func (d *Dataset) chargedJobs(filter []string) string {
	from, to := epochLit(d.From), epochLit(d.To)
	return `WITH c AS (
	SELECT account, "user", "partition", job_id, start, "end", state, alloc_cpus, gpu, mem_mb,
		billing * usage_factor AS rate,
		least(epoch(start) + charged_sec, ` + to + `) - greatest(epoch(start), ` + from + `) AS sec
	FROM jobs WHERE cluster = ` + query.SQLString(d.Cluster) + ` AND month <= ` + query.SQLString(d.To.Format(schemas.MonthLayout)) +
		` AND start < ` + tsLit(d.To) + ` AND ("end" IS NULL OR "end" > ` + tsLit(d.From) + `)` + accountFilter(filter) + `
		AND epoch(start) + charged_sec > ` + from + `
)`
}

// loadJobs reads each account's use of each partition and its N biggest
// job runs in the period.
func (d *Dataset) loadJobs(q *querier, filter []string) error {
	base := d.chargedJobs(filter)
	err := q.each("partitions", base+` SELECT account, "partition", `+exactSum("rate * sec")+", "+
		exactSum("alloc_cpus * sec")+", "+exactSum("gpu * sec")+", "+exactSum("mem_mb * sec")+
		`, count(*) FROM c WHERE sec > 0 GROUP BY ALL ORDER BY account, "partition"`, func(row []any) error {
		d.rows.parts = append(d.rows.parts, partUsage{Account: asString(row[0]), Partition: asString(row[1]), BillingSec: asFloat(row[2]),
			CPUSec: asFloat(row[3]), GPUSec: asFloat(row[4]), MemMBSec: asFloat(row[5]), Jobs: asFloat(row[6])})
		return nil
	})
	if err != nil {
		return err
	}
	// The N biggest runs per account (a run is one row), ties broken by
	// start and job id. Billing-seconds are compared in integer
	// thousandths.
	runs := base + `, r AS (
	SELECT *, (rate * sec * 1000)::BIGINT AS b FROM c WHERE sec > 0
)`
	return q.topPerAccount("biggest jobs", runs, "b", d.opts.topN(),
		`account, "user", "partition", job_id, start, "end", state, alloc_cpus, gpu, mem_mb, b::DOUBLE / 1000`,
		"b DESC, start, job_id", func(row []any) error {
			j := JobUsage{Account: asString(row[0]), User: asString(row[1]), Partition: asString(row[2]),
				JobID: asString(row[3]), Start: asTime(row[4]), State: asString(row[6]), CPUs: asInt(row[7]),
				GPUs: asFloat(row[8]), MemGiB: asFloat(row[9]) / 1024, BillingHours: asFloat(row[10]) / 3600}
			if row[5] != nil {
				e := asTime(row[5])
				j.End = &e
			}
			d.rows.jobs = append(d.rows.jobs, j)
			return nil
		})
}

// SQL literals and result values.

// epochLit is an instant as epoch seconds, the way epoch() returns them.
func epochLit(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixMicro())/1e6, 'f', -1, 64)
}

func monthStart(t time.Time) time.Time { return schemas.MonthStart(t) }

func tsLit(t time.Time) string {
	return "TIMESTAMPTZ '" + t.UTC().Format("2006-01-02 15:04:05.999999") + "+00'"
}

func asString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

func asFloat(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case float32:
		return float64(x)
	case int64:
		return float64(x)
	case int32:
		return float64(x)
	case int:
		return float64(x)
	case uint64:
		return float64(x)
	}
	return math.NaN()
}

func asInt(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case int32:
		return int64(x)
	case int:
		return int64(x)
	case uint64:
		return int64(x)
	case float64:
		return int64(x)
	}
	return -1
}

func asBool(v any) bool { b, _ := v.(bool); return b }

func asTime(v any) time.Time {
	t, _ := v.(time.Time)
	return t.UTC()
}
