package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"

	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/export/query"
)

// sqlMemoryLimitMiB is sql's default DuckDB memory limit.
const sqlMemoryLimitMiB = 512

// sqlTempLimitMiB is sql's default bound of its spill files: 4 GiB, far
// below a shared /tmp's size, so that one query cannot fill the disk the
// nightly run or other users need.
const sqlTempLimitMiB = 4096

// dataHeadroomMiB is what sql's process may hold besides twice DuckDB's
// memory limit (dataLimitMiB): the Go runtime, DuckDB's threads and what
// it allocates outside its buffer pool for a vector in flight. A query of
// one SELECT over the history needs about 200 MiB more than a 128 MiB
// limit (docs/sql.md, Limits).
const dataHeadroomMiB = 256

// dataLimitMiB is how much sql's query may add to the process's data
// (RLIMIT_DATA) for a memory limit: twice the limit plus dataHeadroomMiB.
// DuckDB's memory_limit bounds its buffer pool only; a single value (a
// list of 600 million numbers, a string of 1.5 GB) is allocated outside
// it and would grow the process past any limit without this one.
func dataLimitMiB(memoryLimitMiB int64) int64 { return 2*memoryLimitMiB + dataHeadroomMiB }

// vmDataMiB is the process's data (VmData of /proc/self/status, what
// RLIMIT_DATA counts) in MiB; 0 where it cannot be read.
func vmDataMiB() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmData:"); ok {
			kB, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return kB >> 10
		}
	}
	return 0
}

// limitData lowers the process's RLIMIT_DATA soft limit to limitMiB (a
// lower limit already in place stays) and returns the limit in force, in
// MiB. DuckDB's allocations past it fail as "Out of Memory Error: Failed
// to allocate ... (bad allocation)", which the query returns. It is set
// once the session is open, over what the process holds then (a moment
// of sql --at is replayed in Go's heap, which never shrinks in
// RLIMIT_DATA's count).
func limitData(limitMiB int64) (int64, error) {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_DATA, &rl); err != nil {
		return 0, fmt.Errorf("read the process's data limit: %w", err)
	}
	want := uint64(limitMiB) << 20
	if rl.Cur != unix.RLIM_INFINITY && rl.Cur <= want {
		return int64(rl.Cur >> 20), nil
	}
	if rl.Max != unix.RLIM_INFINITY && want > rl.Max {
		want = rl.Max
	}
	rl.Cur = want
	if err := unix.Setrlimit(unix.RLIMIT_DATA, &rl); err != nil {
		return 0, fmt.Errorf("limit the process's data to %d MiB: %w", limitMiB, err)
	}
	return int64(want >> 20), nil
}

func sqlCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:      "sql",
		Usage:     "query the history with DuckDB; views jobs, usage, fairshare, associations, runs and priority are defined",
		ArgsUsage: `"SELECT ..." (or - to read the query from stdin)`,
		Description: "Runs one statement over the committed generation of the history (a run committing meanwhile\n" +
			"changes nothing it reads). Every view is defined: a table with no file yet has an empty view.\n" +
			"The session is read-only and confined to the history: only SELECT (with DESCRIBE, SHOW, SUMMARIZE,\n" +
			"PRAGMA) and EXPLAIN (not EXPLAIN ANALYZE) run, and DuckDB reads the generation's own files and no\n" +
			"other: COPY, ATTACH, INSTALL, LOAD, SET, CREATE and read_csv of another file are refused. The views\n" +
			"read the Parquet files at query time, so the history's files must stay readable while it runs.\n" +
			"Rows are written as they come, in memory bounded by --memory-limit: a result goes through a DuckDB\n" +
			"temporary table, spilled past the limit into a directory under $TMPDIR that the command removes\n" +
			"(put TMPDIR on a disk, not a tmpfs, for results larger than the limit); a table is aligned on its\n" +
			"first 10000 rows, or 16 MiB of them (a wider value after them is written whole). The spill files\n" +
			"may take up to --temp-limit; the process's data is capped at twice --memory-limit plus 256 MiB\n" +
			"over what the session holds once open (RLIMIT_DATA), so that a single huge value fails the query\n" +
			"rather than filling the machine's memory. A session that SIGKILL ended leaves its directory: the\n" +
			"next sql or report removes it (SIGINT and SIGTERM stop the query and remove it at once, exit 130\n" +
			"and 143).\n" +
			"With --at T the session also has the relations " + query.FairshareAt + " and " + query.PriorityAt + ", with the columns of the\n" +
			"views fairshare and priority: one cluster's fair share and queue (event pending) at the second T, as\n" +
			"sshare --at and sprio --at show them: the stored snapshot of T, else the moment replayed from the\n" +
			"history (docs/sql.md, A moment). " + query.PriorityAt + " is empty when the run computed no job priority. A T\n" +
			"no moment covers (before the history, after its last run's --to, or in a part written before\n" +
			"fairledger kept moments) is an error (exit 1). --tz is the zone of --at and of the log; the\n" +
			"relations' times are UTC, as the views'.",
		Flags: append(pastFlags("give the session the relations "+query.FairshareAt+" and "+query.PriorityAt+": the fair share and queue at this second "+
			"(YYYY-MM-DD[THH:MM[:SS]] in --tz, RFC 3339 or @UNIX)"),
			&cli.StringFlag{Name: "format", Value: query.FormatTable, Usage: "table, csv or json"},
			&cli.Int64Flag{Name: "memory-limit", Value: sqlMemoryLimitMiB, Usage: "DuckDB's memory limit in MiB, past which it spills to $TMPDIR; the query may add twice it plus 256 MiB to the process's data (0: DuckDB's default, 80% of the memory, and no cap)"},
			&cli.Int64Flag{Name: "temp-limit", Value: sqlTempLimitMiB, Usage: "the most the query's spill files in $TMPDIR may take, in MiB (0: DuckDB's default, 90% of the disk's free space)"},
			tzFlag(),
		),
		Action: func(c *cli.Context) error { return interruptible(c, func() error { return runSQL(c, stdout, stderr) }) },
	}
}

// runSQL is sql's action.
func runSQL(c *cli.Context, stdout, stderr io.Writer) error {
	log := newLogger(c, stderr)
	stmt, err := sqlQuery(c)
	if err != nil {
		return err
	}
	if stmt == "-" {
		b, err := io.ReadAll(os.Stdin)
		if err != nil {
			return fmt.Errorf("read query: %w", err)
		}
		stmt = string(b)
	}
	if strings.TrimSpace(stmt) == "" {
		return usagef("sql needs a query")
	}
	switch f := c.String("format"); f {
	case query.FormatTable, query.FormatCSV, query.FormatJSON:
	default:
		return usagef("--format %q: want table, csv or json", f)
	}
	if c.Int64("memory-limit") < 0 {
		return usagef("--memory-limit %d: want 0 or more MiB", c.Int64("memory-limit"))
	}
	if c.Int64("temp-limit") < 0 {
		return usagef("--temp-limit %d: want 0 or more MiB", c.Int64("temp-limit"))
	}
	loc, at, err := atFlag(c)
	if err != nil {
		return err
	}
	lim := sqlLimits{memoryMiB: c.Int64("memory-limit"), tempMiB: c.Int64("temp-limit")}
	opt := query.DuckDBOptions{MemoryLimitMiB: lim.memoryMiB, TempLimitMiB: lim.tempMiB}
	switch {
	case !at.IsZero():
		opt.Moment = sqlMoment(log, c.String("history"), c.String("cluster"), loc, at)
	case c.IsSet("cluster") || c.IsSet("tz"):
		return usagef("--cluster and --tz choose the moment of --at: give --at too")
	}
	db, err := query.OpenDuckDBWith(c.Context, c.String("history"), opt)
	if err != nil {
		return err
	}
	defer db.Close()
	if len(db.Missing) > 0 {
		log.Info().Strs("tables", db.Missing).Msg("no files yet for these tables: their views are empty")
	}
	if lim.memoryMiB > 0 {
		if lim.dataMiB, err = limitData(vmDataMiB() + dataLimitMiB(lim.memoryMiB)); err != nil {
			return err
		}
	}
	rows, err := db.Stream(c.Context, stmt)
	if err != nil {
		return lim.hint(err)
	}
	defer rows.Close()
	w, err := query.NewResultWriter(stdout, c.String("format"), rows.Columns, rows.Types)
	if err != nil {
		return err
	}
	for {
		row, err := rows.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return lim.hint(err)
		}
		if err := w.Write(row); err != nil {
			return fmt.Errorf("write result: %w", err)
		}
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("write result: %w", err)
	}
	return rows.Close()
}

// sqlLimits are the limits of an sql session, which its errors name.
type sqlLimits struct {
	memoryMiB, tempMiB int64
	dataMiB            int64 // the process's RLIMIT_DATA in MiB; 0 when not set
}

// hint says which of sql's limits a query ran out of (query.LimitError),
// and the flag that raises it, in place of DuckDB's advice, which the
// locked session refuses.
func (l sqlLimits) hint(err error) error {
	var le *query.LimitError
	if !errors.As(err, &le) {
		return err
	}
	if le.Limit == query.LimitTemp {
		if l.tempMiB == 0 {
			return fmt.Errorf("%w: the query's spill files filled the disk of $TMPDIR (%s); free space there, point TMPDIR at a larger disk, or narrow the query", err, os.TempDir())
		}
		return fmt.Errorf("%w: the query's spill files in $TMPDIR (%s) would pass --temp-limit %d MiB; raise --temp-limit if that disk has room, or narrow the query", err, os.TempDir(), l.tempMiB)
	}
	if l.memoryMiB == 0 {
		return fmt.Errorf("%w: the query needs more memory than DuckDB's default limit (80%% of the machine's); narrow the query", err)
	}
	return fmt.Errorf("%w: the query needs more memory than --memory-limit %d MiB allows (DuckDB's buffer pool %d MiB, the process's data %d MiB); "+
		"raise --memory-limit, or narrow the query: one value (a list, a string) is held in memory whole and cannot spill", err, l.memoryMiB, l.memoryMiB, l.dataMiB)
}

// interruptibleAction is action run by interruptible.
func interruptibleAction(action cli.ActionFunc) cli.ActionFunc {
	return func(c *cli.Context) error { return interruptible(c, func() error { return action(c) }) }
}

// interruptible runs a command's action with c.Context canceled by the
// first SIGINT or SIGTERM (signalContext): DuckDB stops the query, the
// action returns, and its deferred cleanups remove its temporary files.
// A command stopped by a signal exits 128 + its number.
func interruptible(c *cli.Context, action func() error) error {
	ctx, stop := signalContext(c.Context)
	defer stop()
	c.Context = ctx
	err := action()
	var ie *interruptError
	if !errors.As(context.Cause(ctx), &ie) {
		return err
	}
	if err == nil || errors.Is(err, context.Canceled) {
		return fmt.Errorf("%s interrupted by %w; its temporary files are removed", c.Command.Name, ie)
	}
	return fmt.Errorf("%s interrupted by %w; its temporary files are removed: %v", c.Command.Name, ie, err)
}

// sqlMoment returns the moment sql --at gives its session
// (query.DuckDBOptions.Moment): the fair share and queue of the cluster
// (the only one when "") at at, read from the session's own generation v
// of the history in dir as sshare --at and sprio --at read them
// (fairshareAt): the stored snapshot of that second, else the moment
// replayed from the history. A second no moment covers is an error saying
// what to do, rather than the stored snapshot before it that sshare falls
// back to: a query cannot tell the two apart.
func sqlMoment(log zerolog.Logger, dir, cluster string, loc *time.Location, at time.Time) func(*history.View) (*query.Moment, error) {
	return func(v *history.View) (*query.Moment, error) {
		f := func(t time.Time) string { return t.In(loc).Format(time.RFC3339) }
		cluster, err := sshareCluster(v, dir, cluster)
		if err != nil {
			return nil, err
		}
		past, err := fairshareAt(v, dir, cluster, at)
		if err != nil {
			return nil, err
		}
		if past.noMoment != nil {
			// past.noMoment names the cluster and the second.
			return nil, fmt.Errorf("sql --at %s: %w; "+
				"give an --at between the start of the cluster's first run and the --to of its last "+
				"(sshare --at shows the stored snapshot before a second without one), "+
				"or query the stored snapshots in the views fairshare and priority without --at (docs/sql.md#a-moment)",
				f(at), past.noMoment)
		}
		m := &query.Moment{Cluster: cluster, Time: past.Time, Fairshare: past.Rows, Priority: past.priority()}
		ev := log.Info().Str("cluster", cluster).Str("at", f(at))
		what := "the stored snapshot " + f(past.Time)
		if pm := past.moment; pm != nil {
			ev = ev.Str("tick", f(pm.Tick)).Str("replayed_from", f(pm.Seed))
			what = fmt.Sprintf("the moment %s, replayed from the history's state at %s (decay tick %s)", f(pm.Time), f(pm.Seed), f(pm.Tick))
		} else if m.Priority, err = v.PriorityAt(cluster, past.Time); err != nil {
			return nil, history.DamageHint(err, dir, v.Generation())
		}
		ev.Int(query.FairshareAt, len(m.Fairshare)).Int(query.PriorityAt, len(m.Priority)).
			Msgf("%s and %s hold cluster %s at %s: %s", query.FairshareAt, query.PriorityAt, cluster, f(at), what)
		return m, nil
	}
}
