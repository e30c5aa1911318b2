// Command fairledger recomputes a Slurm cluster's fair-share history from
// its job records. See docs/cli/fairledger.md for the commands,
// flags and exit codes.
package main

import (
	"os"
)

func main() {
	os.Exit(run(os.Args, os.Stdout, os.Stderr))
}
