package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/fairledger/fairledger/export/query"
	"github.com/urfave/cli/v2"
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
			"first 10000 rows (a wider value after them is written whole).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "history", Usage: "history directory", Required: true},
			&cli.StringFlag{Name: "format", Value: query.FormatTable, Usage: "table, csv or json"},
			&cli.Int64Flag{Name: "memory-limit", Value: sqlMemoryLimitMiB, Usage: "DuckDB's memory limit in MiB, past which it spills to $TMPDIR (0: DuckDB's default, 80% of the memory)"},
		},
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
			db, err := query.OpenDuckDBWith(c.Context, c.String("history"), query.DuckDBOptions{MemoryLimitMiB: c.Int64("memory-limit")})
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
