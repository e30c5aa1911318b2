// Command fairledger recomputes a Slurm cluster's fair-share history from
// its job records. See the README for the commands and exit codes.
package main

import (
	"os"
)

func main() {
	os.Exit(run(os.Args, os.Stdout, os.Stderr))
}
