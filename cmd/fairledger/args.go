package main

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// urfave/cli stops reading flags at the first positional argument: in
// `fairledger sql --history H "SELECT 1" --format json` the --format is
// one more argument, not a flag. Commands therefore check their arguments
// and refuse, as a usage error, anything that would silently drop a flag.

// noArgs refuses positional arguments of a command that takes none, saying
// why when a flag follows the stray argument.
func noArgs(c *cli.Context) error {
	args := c.Args().Slice()
	if len(args) == 0 {
		return nil
	}
	msg := c.Command.Name + " takes no arguments (got " + quoteList(args) + ")"
	if hasFlag(args) {
		msg += "; flags after an argument are not read: give each value with its own flag (--sacct A --sacct B)"
	}
	return usagef("%s", msg)
}

// sqlQuery joins sql's arguments into the query. Words after the first
// that look like flags are refused: they would be read as part of the query
// (or ignored) instead of as flags.
func sqlQuery(c *cli.Context) (string, error) {
	args := c.Args().Slice()
	if len(args) > 1 && hasFlag(args[1:]) {
		return "", usagef("sql: flags after the query are not read (got %s after %q): put the flags before the query, and quote the query as one argument",
			quoteList(args[1:]), args[0])
	}
	return strings.Join(args, " "), nil
}

// hasFlag reports whether any argument looks like a flag (-x or --xx); a
// lone "-" (stdin) and "--" are not flags.
func hasFlag(args []string) bool {
	for _, a := range args {
		if len(a) > 1 && a[0] == '-' && a != "--" {
			return true
		}
	}
	return false
}

// quoteList quotes each argument, separated by spaces.
func quoteList(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = `"` + strings.ReplaceAll(a, `"`, `\"`) + `"`
	}
	return strings.Join(q, " ")
}
