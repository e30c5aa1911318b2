package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The scripts' stand-ins for Slurm's clients, for fairledger nightly: they
// answer from the files of $FAKE_SLURM (db.psv, a sacct -P file with Unix
// times, all of the cluster's jobs; assoc.psv; qos.psv) as slurmdbd would.
// A file $FAKE_SLURM/down makes every call fail as sacct does when
// slurmdbd is unreachable; $FAKE_SLURM/empty makes sacct print its header
// only; every call is appended to $FAKE_SLURM/calls.

// fakeSacct answers sacct: --version, or the jobs of db.psv that were
// running in [-S, -E] (pending ones too with -s), as sacct -P prints them.
func fakeSacct(args []string, stdout, stderr io.Writer) int {
	dir := os.Getenv("FAKE_SLURM")
	logCall(dir, "sacct", args)
	if len(args) == 1 && args[0] == "--version" {
		fmt.Fprintln(stdout, "slurm 22.05.8")
		return 0
	}
	if _, err := os.Stat(filepath.Join(dir, "down")); err == nil {
		fmt.Fprintln(stderr, "sacct: error: slurm_persist_conn_open_without_init: failed to open persistent connection to host:localhost:6819: Connection refused")
		fmt.Fprintln(stderr, "sacct: error: Problem talking to the database: Connection refused")
		return 1
	}
	var from, to int64
	states := false
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "-S", "-E":
			t, err := time.ParseInLocation("2006-01-02T15:04:05", args[i+1], time.UTC)
			if err != nil {
				fmt.Fprintf(stderr, "sacct: error: Invalid time specification %q\n", args[i+1])
				return 1
			}
			if args[i] == "-S" {
				from = t.Unix()
			} else {
				to = t.Unix()
			}
			i++
		case "-s":
			states = true
			i++
		}
	}
	f, err := os.Open(filepath.Join(dir, "db.psv"))
	if err != nil {
		fmt.Fprintln(stderr, "sacct: error:", err)
		return 1
	}
	defer f.Close()
	out := bufio.NewWriterSize(stdout, 1<<20)
	defer out.Flush()
	stdout = out
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	sc.Scan()
	header := sc.Text()
	fmt.Fprintln(stdout, header)
	if _, err := os.Stat(filepath.Join(dir, "empty")); err == nil {
		return 0
	}
	col := map[string]int{}
	for i, h := range strings.Split(header, "|") {
		col[h] = i
	}
	num := func(f []string, name string) (int64, bool) {
		n, err := strconv.ParseInt(f[col[name]], 10, 64)
		return n, err == nil
	}
	for sc.Scan() {
		f := strings.Split(sc.Text(), "|")
		start, started := num(f, "Start")
		end, ended := num(f, "End")
		submit, _ := num(f, "Submit")
		keep := started && start <= to && (!ended || end >= from)
		if !started {
			keep = states && submit <= to
		}
		if keep {
			fmt.Fprintln(stdout, sc.Text())
		}
	}
	return 0
}

// fakeSacctmgr answers sacctmgr -P show assoc|qos from assoc.psv and qos.psv.
func fakeSacctmgr(args []string, stdout, stderr io.Writer) int {
	dir := os.Getenv("FAKE_SLURM")
	logCall(dir, "sacctmgr", args)
	if _, err := os.Stat(filepath.Join(dir, "down")); err == nil {
		fmt.Fprintln(stderr, "sacctmgr: error: Problem talking to the database: Connection refused")
		return 1
	}
	file := ""
	for _, a := range args {
		switch a {
		case "assoc":
			file = "assoc.psv"
		case "qos":
			file = "qos.psv"
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		fmt.Fprintln(stderr, "sacctmgr: error:", err)
		return 1
	}
	stdout.Write(b)
	return 0
}

func logCall(dir, name string, args []string) {
	f, err := os.OpenFile(filepath.Join(dir, "calls"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintln(f, name, strings.Join(args, " "))
}
