package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/fairledger/fairledger/ingest"
	"github.com/fairledger/fairledger/ingest/ingesttest"
)

// TestSacctJSONE2E: each scenario's jobs dumped by its live cluster with
// `sacct --json` (sacct.json, the window and states of sacct.psv; 24.11 on)
// ingest to the rows sacct.psv gives, cell for cell, with the same counts
// of rows read, ingested, skipped (per reason) and rejected, read as a
// plain run reads them and, for the prio scenario, as run --priority does
// (the request columns and the jobs that never started). Then a run from
// each file gives the same usage and fair share: `sshare -a -l -P -m` at
// every capture's second prints the same bytes, and for the prio scenario
// `sprio -l` too. The one cell allowed to differ is the elapsed time of a
// job still running, by no more than the seconds between the two dumps
// (sacct-dumps.txt): each sacct prints it as of its own clock. Only a live capture (FAIRLEDGER_SLURM_CAPTURE) has
// sacct.json.
func TestSacctJSONE2E(t *testing.T) {
	root, live := os.LookupEnv("FAIRLEDGER_SLURM_CAPTURE")
	if !live {
		t.Skip("no live capture (FAIRLEDGER_SLURM_CAPTURE)")
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	compared := 0
	for _, e := range entries {
		dir := filepath.Join(root, e.Name())
		if !fileExists(filepath.Join(dir, "sacct.json")) {
			continue
		}
		compared++
		t.Run(e.Name(), func(t *testing.T) {
			psv := readFileString(t, filepath.Join(dir, "sacct.psv"))
			js := readFileString(t, filepath.Join(dir, "sacct.json"))
			prio := fileExists(filepath.Join(dir, "sprio.tsv"))
			slack := dumpGap(t, filepath.Join(dir, "sacct-dumps.txt"))
			opts := []ingest.SacctOptions{{}}
			if prio {
				opts = append(opts, ingest.SacctOptions{KeepPending: true, RequestColumns: true})
			}
			for _, opt := range opts {
				p := ingesttest.Cells(t, "sacct.psv", []byte(psv), opt)
				j := ingesttest.Cells(t, "sacct.json", []byte(js), opt)
				ingesttest.Compare(t, p, j, slack)
				if len(p.Rows) == 0 {
					t.Errorf("sacct.psv gave no row")
				}
				t.Logf("priority columns %v: %d rows equal; %s", opt.RequestColumns, len(p.Rows), ingesttest.StatsText(p.Stats))
			}
			c := readSlurmCapture(t, dir)
			out := make(map[string]string)
			answered := 0
			for _, file := range []string{"sacct.psv", "sacct.json"} {
				hist := filepath.Join(t.TempDir(), "h")
				args := slurmRunArgs(c, hist)
				args[slices.Index(args, "--sacct")+1] = filepath.Join(dir, file)
				if prio {
					args = append(args, "--priority")
				}
				var stdout, stderr bytes.Buffer
				if code := run(append(args, "--to", "@"+c.to), &stdout, &stderr); code != 0 {
					t.Fatalf("run --sacct %s: exit %d: %s", file, code, lastLine(stderr.String()))
				}
				var all bytes.Buffer
				for _, sc := range c.captures {
					at := captureSecond(sc.at)
					queries := [][]string{{"fairledger", "sshare", "--history", hist, "--at", at, "--tz", c.tz, "-a", "-l", "-P", "-m"}}
					if prio {
						queries = append(queries, []string{"fairledger", "sprio", "--history", hist, "--at", at, "-l"})
					}
					for _, q := range queries {
						stdout.Reset()
						stderr.Reset()
						code := run(q, &stdout, &stderr)
						all.WriteString(q[1] + " --at " + at + ":\n")
						all.Write(stdout.Bytes())
						if code != 0 {
							all.WriteString("exit " + lastLine(stderr.String()) + "\n")
						} else if stdout.Len() > 0 {
							answered++
						}
					}
				}
				out[file] = all.String()
			}
			if answered == 0 {
				t.Fatalf("no sshare or sprio query answered")
			}
			if out["sacct.psv"] != out["sacct.json"] {
				t.Errorf("sshare/sprio differ:\nwith sacct.psv:\n%s\nwith sacct.json:\n%s", out["sacct.psv"], out["sacct.json"])
			}
			t.Logf("%d captures, %d answers: sshare%s equal from sacct.psv and sacct.json", len(c.captures), answered, map[bool]string{true: " and sprio", false: ""}[prio])
		})
	}
	if compared == 0 {
		t.Skipf("%s: no scenario with sacct.json", root)
	}
}

// dumpGap reads sacct-dumps.txt, "BEFORE AFTER": the Unix second before
// the -P dump and after the JSON one. The seconds between them bound how
// much later the JSON dump's running jobs' elapsed times may be.
func dumpGap(t *testing.T, path string) int64 {
	t.Helper()
	var before, after int64
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the dumps' times: %v", err)
	}
	if _, err := fmt.Sscan(string(b), &before, &after); err != nil || after < before {
		t.Fatalf("%s: %q: want two Unix seconds, the first not after the second", path, b)
	}
	return after - before
}
