package main

import (
	"database/sql"
	"fmt"
	"os"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2" // the scripts' duckdb command
	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"fairledger": func() { os.Exit(run(os.Args, os.Stdout, os.Stderr)) },
		// fairledger-exit runs fairledger and prints its exit code, so a
		// script can assert the exact code (testscript only sees zero or not).
		"fairledger-exit": func() {
			code := run(append([]string{"fairledger"}, os.Args[1:]...), os.Stdout, os.Stderr)
			fmt.Fprintf(os.Stderr, "exit code %d\n", code)
		},
		// duckdb runs each argument as a statement in a DuckDB of its own
		// (in memory, default settings): the scripts write history files
		// with COPY, which fairledger sql refuses.
		"duckdb": func() { os.Exit(duckdbMain(os.Args[1:])) },
		// sacct and sacctmgr stand in for Slurm's clients (fakeslurm_test.go),
		// for fairledger nightly.
		"sacct":    func() { os.Exit(fakeSacct(os.Args[1:], os.Stdout, os.Stderr)) },
		"sacctmgr": func() { os.Exit(fakeSacctmgr(os.Args[1:], os.Stdout, os.Stderr)) },
	})
}

func duckdbMain(statements []string) int {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer db.Close()
	for _, s := range statements {
		if _, err := db.Exec(s); err != nil {
			fmt.Fprintf(os.Stderr, "duckdb: %v\n", err)
			return 1
		}
	}
	return 0
}

// TestScripts runs the CLI scripts in testdata/cli: one .txtar per
// behaviour, bad input and its exact error included.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{Dir: "../../testdata/cli"})
}
