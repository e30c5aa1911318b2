package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/fairledger/fairledger/export"
)

func sqlCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:      "sql",
		Usage:     "query the history with DuckDB; views jobs, usage, fairshare, associations and runs are defined",
		ArgsUsage: `"SELECT ..." (or - to read the query from stdin)`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "history", Usage: "history directory", Required: true},
			&cli.StringFlag{Name: "format", Value: export.FormatTable, Usage: "table, csv or json"},
		},
		Action: func(c *cli.Context) error {
			log := newLogger(c, stderr)
			query, err := sqlQuery(c)
			if err != nil {
				return err
			}
			if query == "-" {
				b, err := io.ReadAll(os.Stdin)
				if err != nil {
					return fmt.Errorf("read query: %w", err)
				}
				query = string(b)
			}
			if strings.TrimSpace(query) == "" {
				return usagef("sql needs a query")
			}
			switch f := c.String("format"); f {
			case export.FormatTable, export.FormatCSV, export.FormatJSON:
			default:
				return usagef("--format %q: want table, csv or json", f)
			}
			db, err := export.OpenDuckDB(c.Context, c.String("history"))
			if err != nil {
				return err
			}
			defer db.Close()
			if len(db.Missing) > 0 {
				log.Info().Strs("tables", db.Missing).Msg("no files yet for these tables; their views are not defined")
			}
			res, err := db.Query(c.Context, query)
			if err != nil {
				return err
			}
			return export.WriteResult(stdout, res, c.String("format"))
		},
	}
}
