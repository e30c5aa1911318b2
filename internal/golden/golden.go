// Package golden reads the project's golden cases: Slurm's test trees
// (test24.1, test24.4) written once as data files, each an association
// tree, every user's raw usage and the sshare output Slurm expects for
// them. A case lives in the testdata/ of the package it belongs to
// (fairshare/testdata/test24_4.txt); the tests of every package that
// replays it read that one file through Load.
//
// It is test support: only _test.go files import it. It reads files but
// imports nothing from the project, so fairshare's own tests can use it:
// that is also why a test tree's associations (Spec, from a case or
// written by hand) are placed by Nodes as plain values that each package
// copies into its fairshare.Node.
//
// # Format
//
// A case file is text. A line "[name]" opens the section name; a line
// starting with '#' is a comment and a blank line is ignored, in or out of
// a section; every other line is data of the current section, kept as
// written (leading spaces included: sshare indents). Data before the first
// section is an error, and so is a section opened twice.
//
// Two sections are tables with a header naming their columns, '|'
// separated like sacctmgr -P:
//
//   - [associations]: Account|User|ParentName|Share, one association a line,
//     in the order of the case's table. An account's parent is ParentName; a
//     user association's is its Account (ParentName blank). Share is an
//     integer or "parent" (FairShare=parent).
//   - [usage]: Account|User|RawUsage, a user association's own raw usage;
//     associations not listed have none.
//
// The other sections are plain lines the tests compare with: [sshare -a -l
// -p] (the output with its header), [slurm.conf] (the case as a site, for
// the tests that replay it as jobs), and any a case adds.
package golden

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Assoc is one row of a case's [associations], with its [usage].
type Assoc struct {
	// Account, User, ParentName and Share are the row's cells as written.
	Account, User, ParentName, Share string
	// RawUsage is the association's own raw usage from [usage] (0 when
	// not listed).
	RawUsage float64
}

// IsUser reports a user association.
func (a Assoc) IsUser() bool { return a.User != "" }

// IsRoot reports the root account.
func (a Assoc) IsRoot() bool { return a.User == "" && a.ParentName == "" }

// Name returns the user's name for a user association, else the account's.
func (a Assoc) Name() string {
	if a.IsUser() {
		return a.User
	}
	return a.Account
}

// Parent returns the name of the parent account: the account of a user
// association, ParentName for an account ("" for root).
func (a Assoc) Parent() string {
	if a.IsUser() {
		return a.Account
	}
	return a.ParentName
}

// Case is one golden case file.
type Case struct {
	// Name is the file's base name without extension ("test24_4").
	Name string
	// Assocs is the [associations] table, in file order.
	Assocs []Assoc

	sections map[string][]string
}

// Load reads the case file at path, relative to the module root (the
// directory holding go.mod), e.g. "fairshare/testdata/test24_4.txt": the
// same string in every package that reads the case, wherever the test
// runs from. It fails the test on any error.
func Load(tb testing.TB, path string) *Case {
	tb.Helper()
	root, err := moduleRoot()
	if err != nil {
		tb.Fatal(err)
	}
	f, err := os.Open(filepath.Join(root, filepath.FromSlash(path)))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	c, err := Parse(path, f)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// moduleRoot returns the nearest directory at or above the working
// directory that holds go.mod (go test runs a package's tests in its
// directory).
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", fmt.Errorf("golden: no go.mod at or above the working directory")
		}
		dir = up
	}
}

// Parse reads a case in the format of the package comment; name is the
// file's path, for errors and Case.Name.
func Parse(name string, r io.Reader) (*Case, error) {
	base := filepath.Base(name)
	c := &Case{Name: strings.TrimSuffix(base, filepath.Ext(base)), sections: map[string][]string{}}
	sc := bufio.NewScanner(r)
	cur, lineNo := "", 0
	for sc.Scan() {
		lineNo++
		line := strings.TrimSuffix(sc.Text(), "\r")
		switch {
		case strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			cur = line[1 : len(line)-1]
			if _, dup := c.sections[cur]; dup {
				return nil, fmt.Errorf("%s:%d: section [%s] opened twice", name, lineNo, cur)
			}
			c.sections[cur] = []string{}
		case cur == "":
			return nil, fmt.Errorf("%s:%d: data before the first section", name, lineNo)
		default:
			c.sections[cur] = append(c.sections[cur], line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := c.parseTables(name); err != nil {
		return nil, err
	}
	return c, nil
}

// parseTables fills Assocs from [associations] and [usage].
func (c *Case) parseTables(name string) error {
	rows, err := table(c.sections["associations"], "Account", "User", "ParentName", "Share")
	if err != nil {
		return fmt.Errorf("%s: [associations]: %w", name, err)
	}
	for _, r := range rows {
		c.Assocs = append(c.Assocs, Assoc{Account: r[0], User: r[1], ParentName: r[2], Share: r[3]})
	}
	rows, err = table(c.sections["usage"], "Account", "User", "RawUsage")
	if err != nil {
		return fmt.Errorf("%s: [usage]: %w", name, err)
	}
	for _, r := range rows {
		u, err := strconv.ParseFloat(r[2], 64)
		if err != nil {
			return fmt.Errorf("%s: [usage]: %s|%s: RawUsage %q: %w", name, r[0], r[1], r[2], err)
		}
		found := false
		for i := range c.Assocs {
			if a := &c.Assocs[i]; a.Account == r[0] && a.User == r[1] {
				a.RawUsage, found = u, true
			}
		}
		if !found {
			return fmt.Errorf("%s: [usage]: %s|%s is not in [associations]", name, r[0], r[1])
		}
	}
	return nil
}

// table splits '|'-separated lines under a header and returns the rows'
// cells in the order of cols, which the header must hold.
func table(lines []string, cols ...string) ([][]string, error) {
	if len(lines) == 0 {
		return nil, nil
	}
	header := strings.Split(lines[0], "|")
	idx := make([]int, len(cols))
	for k, col := range cols {
		idx[k] = -1
		for i, h := range header {
			if h == col {
				idx[k] = i
			}
		}
		if idx[k] < 0 {
			return nil, fmt.Errorf("header %q lacks column %s", lines[0], col)
		}
	}
	var rows [][]string
	for _, l := range lines[1:] {
		f := strings.Split(l, "|")
		if len(f) != len(header) {
			return nil, fmt.Errorf("line %q has %d cells, the header %d", l, len(f), len(header))
		}
		row := make([]string, len(cols))
		for k, i := range idx {
			row[k] = f[i]
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// Lines returns the data lines of a section, failing the test when the
// case has no such section.
func (c *Case) Lines(tb testing.TB, section string) []string {
	tb.Helper()
	l, ok := c.sections[section]
	if !ok {
		tb.Fatalf("golden case %s has no section [%s]", c.Name, section)
	}
	return l
}

// Text returns a section's lines, each ended by a newline: the [sshare -a
// -l -p] section as sshare prints it, the [slurm.conf] section as a file.
func (c *Case) Text(tb testing.TB, section string) string {
	tb.Helper()
	return strings.Join(c.Lines(tb, section), "\n") + "\n"
}

// AssocPSV returns the [associations] section as a sacctmgr -P dump.
func (c *Case) AssocPSV(tb testing.TB) string {
	tb.Helper()
	return c.Text(tb, "associations")
}

// SacctPSV returns the case's [usage] as a sacct -P file of finished jobs:
// one COMPLETED job per [usage] row, in that order, ids from 1001, on the
// cluster named by [slurm.conf]'s ClusterName, in partition and QOS
// "normal", one CPU (AllocTRES billing=1,cpu=1,mem=1M,node=1), started
// 2025-01-01T00:00:00 and running RawUsage seconds. On the case's site (no
// decay, limits enforced) each job charges exactly its user's raw usage.
func (c *Case) SacctPSV(tb testing.TB) string {
	tb.Helper()
	cluster := ""
	for _, l := range c.Lines(tb, "slurm.conf") {
		if v, ok := strings.CutPrefix(l, "ClusterName="); ok {
			cluster = v
		}
	}
	if cluster == "" {
		tb.Fatalf("golden case %s: [slurm.conf] names no ClusterName", c.Name)
	}
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	const stamp = "2006-01-02T15:04:05"
	var b strings.Builder
	b.WriteString("JobID|JobIDRaw|Cluster|Partition|QOS|Account|User|Submit|Start|End|Elapsed|State|AllocCPUS|AllocTRES\n")
	id := 1001
	for _, a := range c.Assocs {
		if a.RawUsage == 0 {
			continue
		}
		sec := int64(a.RawUsage)
		if float64(sec) != a.RawUsage || sec < 0 || sec >= 24*3600 {
			tb.Fatalf("golden case %s: %s|%s: RawUsage %v is not a whole number of seconds under a day", c.Name, a.Account, a.User, a.RawUsage)
		}
		end := start.Add(time.Duration(sec) * time.Second)
		fmt.Fprintf(&b, "%d|%d|%s|normal|normal|%s|%s|%s|%s|%s|%02d:%02d:%02d|COMPLETED|1|billing=1,cpu=1,mem=1M,node=1\n",
			id, id, cluster, a.Account, a.User, start.Format(stamp), start.Format(stamp), end.Format(stamp),
			sec/3600, sec/60%60, sec%60)
		id++
	}
	return b.String()
}
