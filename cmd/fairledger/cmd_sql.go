package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"github.com/urfave/cli/v2"

	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/export/query"
)

// sqlMemoryLimitMiB is sql's default DuckDB memory limit.
const sqlMemoryLimitMiB = 512

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
			"first 10000 rows (a wider value after them is written whole).\n" +
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
			&cli.Int64Flag{Name: "memory-limit", Value: sqlMemoryLimitMiB, Usage: "DuckDB's memory limit in MiB, past which it spills to $TMPDIR (0: DuckDB's default, 80% of the memory)"},
			tzFlag(),
		),
		Action: func(c *cli.Context) error {
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
			loc, at, err := atFlag(c)
			if err != nil {
				return err
			}
			opt := query.DuckDBOptions{MemoryLimitMiB: c.Int64("memory-limit")}
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
			rows, err := db.Stream(c.Context, stmt)
			if err != nil {
				return memoryHint(err)
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
					return memoryHint(err)
				}
				if err := w.Write(row); err != nil {
					return fmt.Errorf("write result: %w", err)
				}
			}
			if err := w.Close(); err != nil {
				return fmt.Errorf("write result: %w", err)
			}
			return rows.Close()
		},
	}
}

// memoryHint adds to DuckDB's out-of-memory error the flag that raises
// its limit.
func memoryHint(err error) error {
	if query.OutOfMemory(err) {
		return fmt.Errorf("%w (raise --memory-limit)", err)
	}
	return err
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
