package pipeline

import (
	"bufio"
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow"

	"github.com/fairledger/fairledger/ingest"
	"github.com/fairledger/fairledger/priority"
)

// TestPriorityReplayLive replays the priority scenario a live Slurm 22.05
// cluster ran (testdata/slurm-e2e/prio, docs/slurm-e2e.md): from its
// slurm.conf, sacctmgr and sacct dumps alone, with each user's FairShare
// as the capture's sshare printed it the same minute and the decay ticks
// of its slurmctld log, every `sprio -l` line slurmctld printed must come
// out byte for byte, and no other.
func TestPriorityReplayLive(t *testing.T) {
	dir := filepath.Join("..", "testdata", "slurm-e2e", "prio")
	conf, err := ingest.ReadSlurmConf(filepath.Join(dir, "slurm.conf"))
	if err != nil {
		t.Fatal(err)
	}
	assoc, _, err := ingest.ReadAssoc(filepath.Join(dir, "assoc.psv"))
	if err != nil {
		t.Fatal(err)
	}
	qos, _, err := ingest.ReadQOS(filepath.Join(dir, "qos.psv"))
	if err != nil {
		t.Fatal(err)
	}
	rel := ingest.SlurmVersion{Major: 22, Minor: 5}
	m, err := newPrioModel(conf, assoc, qos, rel)
	if err != nil {
		t.Fatal(err)
	}
	var jobs []prioJob
	if _, err := ingest.ReadSacct(filepath.Join(dir, "sacct.psv"), ingest.SacctOptions{KeepPending: true, RequestColumns: true},
		func(rec arrow.Record) error {
			jobs, err = m.appendPrioJobs(jobs, rec)
			return err
		}); err != nil {
		t.Fatal(err)
	}
	log, err := ingest.ReadSlurmctldLogs([]string{filepath.Join(dir, "slurmctld.log")}, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	recorded := map[uint32]bool{}
	for i := range jobs {
		recorded[jobs[i].job.ID] = true
	}
	matched, total := 0, 0
	for _, cp := range readTSV(t, filepath.Join(dir, "sprio.tsv")) {
		name, at := cp[0], cp[1]
		sec, err := strconv.ParseFloat(at, 64)
		if err != nil {
			t.Fatal(err)
		}
		now := int64(math.Floor(sec))
		var tick int64
		for _, tk := range log.Ticks {
			if tk.Logged.Unix() <= now {
				tick = tk.Logged.Unix()
			}
		}
		fs := sshareFairShare(t, filepath.Join(dir, "sshare", strings.TrimSuffix(name, ".txt")+".psv"))
		var rows []priority.Row
		for _, p := range newQueue(jobs).at(nil, now, tick) {
			p.job.FairShare = fs[[2]string{p.job.Account, p.job.User}]
			rows = m.params.AppendRows(rows, &m.cluster, []priority.Job{p.job}, p.at)
		}
		var b bytes.Buffer
		if err := priority.WriteSprio(&b, rows, priority.SprioOptions{Release: m.params.Release, Long: true,
			Weights: m.params.Weights, TRES: m.cluster.TRES}); err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join(dir, "sprio", name))
		if err != nil {
			t.Fatal(err)
		}
		wl := strings.Split(strings.TrimSuffix(string(want), "\n"), "\n")
		gl := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		for _, l := range wl[1:] {
			total++
			switch {
			case slices.Contains(gl, l):
				matched++
			case !recorded[jobNumber(t, l)]:
				// The pending remainder of array 7 at 04.txt: a pending
				// record whose Eligible is Unknown, which sacct of every
				// state for a window leaves out (docs/sprio.md).
				t.Logf("%s: job %s is in no sacct record", name, strings.Fields(l)[0])
			default:
				t.Errorf("%s: slurmctld printed\n%s\nfairledger has no such line", name, l)
			}
		}
		for _, l := range gl[1:] {
			if !slices.Contains(wl, l) {
				t.Errorf("%s: fairledger printed\n%s\nslurmctld has no such line", name, l)
			}
		}
		// sprio's order: Slurm's lines but those of jobs in no record.
		inOrder := slices.DeleteFunc(slices.Clone(wl), func(l string) bool { return !slices.Contains(gl, l) })
		if !t.Failed() && !slices.Equal(inOrder, gl) {
			t.Errorf("%s: the same lines in another order:\n%s\nwant\n%s", name, b.String(), want)
		}
	}
	t.Logf("%d/%d sprio -l lines of the live cluster reproduced", matched, total)
}

// readTSV reads a tab-separated file's fields; lines starting with '#'
// are comments.
func readTSV(t *testing.T, path string) [][]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if !strings.HasPrefix(l, "#") {
			out = append(out, strings.Split(l, "\t"))
		}
	}
	return out
}

// jobNumber is the job id a sprio line starts with.
func jobNumber(t *testing.T, line string) uint32 {
	t.Helper()
	n, err := strconv.ParseUint(strings.Fields(line)[0], 10, 32)
	if err != nil {
		t.Fatalf("sprio line %q: %v", line, err)
	}
	return uint32(n)
}

// sshareFairShare reads the FairShare of each user association of an
// `sshare -a -l -P` capture, keyed by (account, user).
func sshareFairShare(t *testing.T, path string) map[[2]string]float64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var head []string
	out := map[[2]string]float64{}
	for sc.Scan() {
		c := strings.Split(sc.Text(), "|")
		if head == nil {
			head = c
			continue
		}
		acct, user := c[slices.Index(head, "Account")], c[slices.Index(head, "User")]
		if user == "" {
			continue
		}
		v, err := strconv.ParseFloat(c[slices.Index(head, "FairShare")], 64)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out[[2]string{strings.TrimSpace(acct), user}] = v
	}
	return out
}
