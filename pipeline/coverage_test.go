package pipeline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/ingest"
	"github.com/fairledger/fairledger/pipeline"
)

// runningAt counts the jobs of a sacct file (Unix times) that started
// before at and had not ended by it, and of those the ones that ended
// before gone: read from the file itself, not from the run.
func runningAt(t *testing.T, full string, at, gone time.Time) (running, endedBefore int) {
	t.Helper()
	hdr, lines := sacctLines(t, full)
	col := map[string]int{}
	for i, h := range strings.Split(hdr, "|") {
		col[h] = i
	}
	for _, l := range lines {
		f := strings.Split(l, "|")
		start, err := strconv.ParseInt(f[col["Start"]], 10, 64)
		if err != nil || start >= at.Unix() {
			continue
		}
		end, err := strconv.ParseInt(f[col["End"]], 10, 64)
		if err == nil && end <= at.Unix() {
			continue
		}
		running++
		if err == nil && end < gone.Unix() {
			endedBefore++
		}
	}
	return running, endedBefore
}

// checkpointJSON decodes the history's checkpoint of cluster synth at at.
func checkpointJSON(t *testing.T, hist string, at time.Time) map[string]any {
	t.Helper()
	v := openView(t, hist)
	defer v.Close()
	b, err := v.ReadState("synth", "checkpoint-"+at.UTC().Format("20060102T150405Z")+".json")
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCoverageMissedNights: two nights are skipped and the next file
// covers only its last day (sacct -S one day back). The run used to exit
// without error, charging the jobs running at the checkpoint that ended in
// the gap as still running and losing every job that ran only in the gap.
// Without --sacct-start it is refused from the records (jobs running at
// the checkpoint are missing, and no record ends at or before it); with a
// declared start after the checkpoint it is refused as a gap; the file
// that covers the gap, declared, is accepted and charges every job.
func TestCoverageMissedNights(t *testing.T) {
	t.Parallel()
	dir, from, _ := nightlyCluster(t, 2000)
	full := filepath.Join(dir, "sacct.psv")
	hist := t.TempDir()
	ck := from.AddDate(0, 0, 5) // 2025-01-25: the last night run
	nights(t, dir, hist, from, ck)
	night := ck.AddDate(0, 0, 3) // 2025-01-28, after two missed nights
	short := filepath.Join(dir, "short.psv")
	sacctAsOf(t, full, short, night.AddDate(0, 0, -1), night)
	running, missing := runningAt(t, full, ck, night.AddDate(0, 0, -1))
	if missing == 0 {
		t.Fatalf("none of the %d jobs running at %s ended in the gap: make the cluster busier", running, ck)
	}
	before := snapshotDir(t, hist)

	_, err := runTo(t, dir, hist, night, short)
	refused(t, err, fmt.Sprintf("%d of the %d jobs running at the checkpoint", missing, running), hist, before)
	for _, want := range []string{"(2025-01-25T00:00:00Z) are missing from the sacct input, and no record of it ends at or before the checkpoint",
		"TZ=UTC SLURM_TIME_FORMAT=%s sacct -a -D -P -S 2025-01-25T00:00:00 -E 2025-01-28T00:00:00 -o JobID,JobIDRaw,",
		"--sacct-start 2025-01-25T00:00:00Z"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q\nlacks %q", err, want)
		}
	}
	_, err = dryRun(t, dir, hist, night, short)
	refused(t, err, "jobs running at the checkpoint", hist, before)

	// Declared, the same file is a gap.
	opt := runOpts(hist, night)
	opt.SacctStart, opt.SacctEnd = night.AddDate(0, 0, -1), night
	_, err = pipeline.Run(context.Background(), siteInputs(t, dir, short), opt)
	refused(t, err, "--sacct-start 2025-01-27T00:00:00Z is after 2025-01-25T00:00:00Z, where the history of cluster \"synth\" resumes", hist, before)

	// The file fetched from the checkpoint on, declared, is accepted: every
	// job running at the checkpoint is in it.
	wide := filepath.Join(dir, "wide.psv")
	sacctAsOf(t, full, wide, ck, night)
	opt.SacctStart = ck
	sum, err := pipeline.Run(context.Background(), siteInputs(t, dir, wide), opt)
	if err != nil {
		t.Fatal(err)
	}
	if sum.CarriedUnseen != 0 || !sum.Coverage.FromFlag || !sum.Coverage.ToFlag || !sum.Coverage.From.Equal(ck) || !sum.Coverage.To.Equal(night) {
		t.Errorf("carried unseen %d, coverage %+v; want 0 and the declared span %s to %s", sum.CarriedUnseen, sum.Coverage, ck, night)
	}
	if z := checkpointJSON(t, hist, night)["time_zone"]; z != "UTC" {
		t.Errorf("checkpoint zone %v, want UTC", z)
	}
	v := openView(t, hist)
	defer v.Close()
	cfg, err := v.RunConfig("synth", time.Now().Add(time.Hour)) // the latest run's
	if err != nil {
		t.Fatal(err)
	}
	want := record.SacctCoverage{From: ck.Unix(), FromSource: "flag", To: night.Unix(), ToSource: "flag"}
	if cfg.SacctCoverage == nil || *cfg.SacctCoverage != want {
		t.Errorf("runs config sacct_coverage %+v, want %+v", cfg.SacctCoverage, want)
	}
}

// TestCoverageEmptyInput: a header-only sacct file after a history whose
// checkpoint has running jobs used to commit days of usage charging them
// as running, "rows read 0". It is refused, with or without a declared
// span.
func TestCoverageEmptyInput(t *testing.T) {
	t.Parallel()
	dir, from, _ := nightlyCluster(t, 1000)
	full := filepath.Join(dir, "sacct.psv")
	hist := t.TempDir()
	ck := time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC)
	asOf := filepath.Join(dir, "asof.psv")
	sacctAsOf(t, full, asOf, from, ck)
	mustRun(t, dir, hist, ck, asOf)
	running, _ := runningAt(t, full, ck, ck)
	if running == 0 {
		t.Fatal("no job running at the checkpoint: make the cluster busier")
	}
	hdr, _ := sacctLines(t, full)
	empty := filepath.Join(dir, "empty.psv")
	if err := os.WriteFile(empty, []byte(hdr+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := snapshotDir(t, hist)
	to := ck.AddDate(0, 0, 4)
	want := fmt.Sprintf("the sacct input holds no job of cluster \"synth\", but %d jobs were running at the checkpoint (2025-02-01T00:00:00Z)", running)
	_, err := runTo(t, dir, hist, to, empty)
	refused(t, err, want, hist, before)
	opt := runOpts(hist, to)
	opt.SacctStart, opt.SacctEnd = ck, to
	_, err = pipeline.Run(context.Background(), siteInputs(t, dir, empty), opt)
	refused(t, err, want, hist, before)
}

// TestZoneIsTheHistorys: the same night fed again in another zone used to
// write every job a second time (sacct's local times read an hour apart).
// The checkpoint records the zone; HistoryZone reads it, and a run in
// another zone is refused, a dry run too; the same zone reruns the night.
func TestZoneIsTheHistorys(t *testing.T) {
	t.Parallel()
	dir, from, _ := nightlyCluster(t, 300)
	hist := t.TempDir()
	night := from.AddDate(0, 0, 2)
	nights(t, dir, hist, from, night)
	if z, err := pipeline.HistoryZone(hist, "synth"); err != nil || z != "UTC" {
		t.Fatalf("HistoryZone = %q, %v; want UTC", z, err)
	}
	if z, err := pipeline.HistoryZone(hist, "other"); err != nil || z != "" {
		t.Errorf("HistoryZone of a cluster the history lacks = %q, %v; want none", z, err)
	}
	missing := filepath.Join(t.TempDir(), "none")
	if z, err := pipeline.HistoryZone(missing, "synth"); err != nil || z != "" {
		t.Errorf("HistoryZone of a missing directory = %q, %v; want none", z, err)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Errorf("HistoryZone created %s", missing)
	}
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip(err) // no zone database
	}
	f := nightFile(dir, night)
	before := snapshotDir(t, hist)
	want := `--tz Europe/Berlin: the history of cluster "synth" is in zone UTC (checkpoint at 2025-01-21T00:00:00Z)`
	for _, dry := range []bool{false, true} {
		opt := runOpts(hist, night)
		opt.Location, opt.DryRun = berlin, dry
		in := siteInputs(t, dir, f)
		in.Jobs = sacctWith([]string{f}, func(o *ingest.SacctOptions) { o.Location = berlin })
		_, err := pipeline.Run(context.Background(), in, opt)
		refused(t, err, want, hist, before)
		if !strings.Contains(err.Error(), "run with --tz UTC") {
			t.Errorf("refusal %q does not name the fix", err)
		}
	}
	mustRun(t, dir, hist, night, f)
}

// TestCoverageFreshStart: test24_1's jobs A (User1, 00:00 to 01:00) and B
// (User2, 00:20 to 00:50), fetched with sacct -S 00:30 -E 01:00. A fresh
// start at --from 00:00 is refused (the input lacks what ended before
// 00:30); without --from the window starts at --sacct-start and ends at
// --sacct-end, so with no decay A is charged 01:00 − 00:30 = 1800 s and B
// 00:50 − 00:30 = 1200 s. A --sacct-end before --to is refused.
func TestCoverageFreshStart(t *testing.T) {
	t.Parallel()
	dir, files := siteWith(t, rwA+rwB)
	s, e := time.Date(2025, 1, 1, 0, 30, 0, 0, time.UTC), rwT1
	run := func(hist string, from, to time.Time) (*pipeline.Summary, error) {
		opt := runOpts(hist, to)
		opt.From, opt.SacctStart, opt.SacctEnd = from, s, e
		return pipeline.Run(context.Background(), siteInputs(t, dir, files[0]), opt)
	}
	hist := t.TempDir()
	_, err := run(hist, time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), rwT1)
	refused(t, err, "--from 2025-01-01T00:00:00Z is before --sacct-start 2025-01-01T00:30:00Z", hist, map[string][]byte{})
	sum, err := run(hist, time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if !sum.From.Equal(s) || !sum.To.Equal(e) {
		t.Errorf("window %s to %s, want %s to %s", sum.From, sum.To, s, e)
	}
	if u := rawUsage(t, hist, "test24_1", e); u["User1"] != 1800 || u["User2"] != 1200 {
		t.Errorf("raw usage at 01:00 %v, want User1 1800, User2 1200", u)
	}
	hist2 := t.TempDir()
	opt := runOpts(hist2, rwT2)
	opt.SacctEnd = e
	_, err = pipeline.Run(context.Background(), siteInputs(t, dir, files[0]), opt)
	refused(t, err, "--sacct-end 2025-01-01T01:00:00Z is before the window's end 2025-01-01T02:00:00Z", hist2, map[string][]byte{})
}
