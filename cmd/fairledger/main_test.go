package main

import (
	"fmt"
	"os"
	"testing"

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
	})
}

// TestScripts runs the CLI scripts in testdata/cli: one .txtar per
// behaviour, bad input and its exact error included.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{Dir: "../../testdata/cli"})
}
