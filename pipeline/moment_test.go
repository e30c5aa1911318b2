package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/pipeline"
)

// momentAt replays the fair share of cluster at at from the history hist.
func momentAt(t *testing.T, hist, cluster string, at time.Time) (*pipeline.MomentResult, error) {
	t.Helper()
	v := openView(t, hist)
	defer v.Close()
	return pipeline.Moment(v, cluster, at)
}

// fieldsLine renders every field of the struct r but those named in skip,
// a pointer's target or NULL, for comparing rows by value.
func fieldsLine(r any, skip ...string) string {
	var b strings.Builder
	v := reflect.ValueOf(r)
	for i := range v.NumField() {
		f, name := v.Field(i), v.Type().Field(i).Name
		switch {
		case slices.Contains(skip, name):
		case f.Kind() != reflect.Pointer:
			fmt.Fprintf(&b, " %s=%v", name, f.Interface())
		case f.IsNil():
			fmt.Fprintf(&b, " %s=NULL", name)
		default:
			fmt.Fprintf(&b, " %s=%v", name, f.Elem().Interface())
		}
	}
	return b.String()
}

// rowsByKey renders snapshot rows (their time left out) keyed by
// association, for comparing two snapshots of one instant.
func rowsByKey(rows []record.FairshareRow) map[string]string {
	out := map[string]string{}
	for _, r := range rows {
		out[r.Account+"/"+r.User+"/"+r.Partition] = fieldsLine(r, "Snapshot")
	}
	return out
}

// TestMomentEqualsRunTo: the fair share Moment replays at any second of a
// history written by one run (daily snapshots) is, row for row and bit for
// bit, the snapshot a run ending at that second stores (run --to T, the
// form the live comparisons check against slurmctld). The times are drawn
// at random between the snapshots, plus the hard ones: a stored snapshot,
// a decay tick, the seconds of a job's start and end and the one after,
// and the history's last second. The cluster ticks every 5 minutes with
// limits enforced (RawUsage's end charges and TRESRunMins count).
func TestMomentEqualsRunTo(t *testing.T) {
	t.Parallel()
	dir, from, end := nightlyCluster(t, 600)
	sacct := filepath.Join(dir, "sacct.psv")
	single := filepath.Join(t.TempDir(), "single")
	if _, err := pipeline.Run(context.Background(), siteInputs(t, dir, sacct), runOpts(single, end)); err != nil {
		t.Fatal(err)
	}
	// The same cluster run night by night, as a site runs it: each night
	// resumes from the last and knows only the jobs started by its end.
	nightly := filepath.Join(t.TempDir(), "nightly")
	nights(t, dir, nightly, from, from.AddDate(0, 0, 8))

	ends := jobColumnTimes(t, sacct, "End")
	rng := rand.New(rand.NewPCG(7, 34))
	var times []time.Time
	for range 8 {
		times = append(times, from.Add(time.Duration(rng.Int64N(int64(8*24*time.Hour/time.Second)))*time.Second))
	}
	e := ends[len(ends)/4]
	times = append(times,
		from.AddDate(0, 0, 3),                    // a stored snapshot
		from.AddDate(0, 0, 3).Add(5*time.Minute), // a decay tick
		e, e.Add(time.Second), e.Add(-time.Second), // a job's end
		from.AddDate(0, 0, 8)) // the nightly history's last second
	for _, at := range times {
		t.Run(at.Format(time.RFC3339), func(t *testing.T) {
			one := filepath.Join(t.TempDir(), "h")
			o := runOpts(one, at)
			o.SnapshotEvery = 0
			if _, err := pipeline.Run(context.Background(), siteInputs(t, dir, sacct), o); err != nil {
				t.Fatal(err)
			}
			want := rowsByKey(snapshotAt(t, one, "synth", at))
			for _, hist := range []string{single, nightly} {
				got, err := momentAt(t, hist, "synth", at)
				if err != nil {
					t.Fatal(err)
				}
				have := rowsByKey(got.Rows)
				if len(have) != len(want) {
					t.Fatalf("%s: %d rows, the run's snapshot has %d", filepath.Base(hist), len(have), len(want))
				}
				for k, w := range want {
					if have[k] != w {
						t.Errorf("%s, %s:\nmoment %s\nrun    %s", filepath.Base(hist), k, have[k], w)
					}
				}
				if !got.Time.Equal(at) || got.Tick.After(at) || got.Seed.After(at) {
					t.Errorf("%s: time %s, tick %s, seed %s for %s", filepath.Base(hist), got.Time, got.Tick, got.Seed, at)
				}
			}
		})
	}
	// Outside the history: before its first run's start, after its end.
	for _, at := range []time.Time{from.AddDate(0, 0, -1), end.Add(time.Second)} {
		if _, err := momentAt(t, single, "synth", at); !errors.Is(err, pipeline.ErrNoMoment) {
			t.Errorf("moment at %s: %v, want ErrNoMoment", at, err)
		}
	}
}

// TestMomentPriorityEqualsRunTo: with job priority, the queue Moment
// replays at a second between snapshots (the jobs waiting then, with the
// factors of the tick before or of their submission) is, row for row, the
// queue a run ending at that second stores at its snapshot. The cluster is
// run once and night by night; the times are drawn at random, plus a
// job's submission second and the second after.
func TestMomentPriorityEqualsRunTo(t *testing.T) {
	t.Parallel()
	dir, from, end := nightlyCluster(t, 1500)
	full := filepath.Join(dir, "sacct.psv")
	withRequest(t, full)
	opts := func(hist string, to time.Time) pipeline.Options {
		o := runOpts(hist, to)
		o.Priority = true
		return o
	}
	single := filepath.Join(t.TempDir(), "single")
	if _, err := pipeline.Run(context.Background(), siteInputs(t, dir, full), opts(single, end)); err != nil {
		t.Fatal(err)
	}
	nightly := filepath.Join(t.TempDir(), "nightly")
	last := from.AddDate(0, 0, 6)
	for n := from.AddDate(0, 0, 1); !n.After(last); n = n.AddDate(0, 0, 1) {
		f := nightFile(dir, n)
		sacctAsOfAll(t, full, f, n.AddDate(0, 0, -1), n)
		if _, err := pipeline.Run(context.Background(), siteInputs(t, dir, f), opts(nightly, n)); err != nil {
			t.Fatalf("night %s: %v", n.Format(time.DateOnly), err)
		}
	}
	rng := rand.New(rand.NewPCG(3, 9))
	var times []time.Time
	for range 6 {
		times = append(times, from.Add(time.Duration(rng.Int64N(int64(6*24*time.Hour/time.Second)))*time.Second))
	}
	sub := slices.DeleteFunc(jobColumnTimes(t, full, "Submit"), func(s time.Time) bool { return !s.After(from) || !s.Before(last) })
	s := sub[len(sub)/2]
	times = append(times, s, s.Add(time.Second))
	waited := 0
	for _, at := range times {
		t.Run(at.Format(time.RFC3339), func(t *testing.T) {
			one := filepath.Join(t.TempDir(), "h")
			o := opts(one, at)
			o.SnapshotEvery = 0
			if _, err := pipeline.Run(context.Background(), siteInputs(t, dir, full), o); err != nil {
				t.Fatal(err)
			}
			v := openView(t, one)
			want, err := v.PriorityAt("synth", at)
			v.Close()
			if err != nil {
				t.Fatal(err)
			}
			waited += len(want)
			for _, hist := range []string{single, nightly} {
				got, err := momentAt(t, hist, "synth", at)
				if err != nil {
					t.Fatal(err)
				}
				if got.Priority == nil {
					t.Fatalf("%s: no priority rows from a history with job priority", filepath.Base(hist))
				}
				if g, w := priorityKeys(got.Priority), priorityKeys(want); !slices.Equal(g, w) {
					t.Errorf("%s: %d rows\n%s\nthe run's snapshot %d\n%s", filepath.Base(hist), len(g), strings.Join(g, "\n"), len(w), strings.Join(w, "\n"))
				}
			}
		})
	}
	if waited == 0 {
		t.Error("no job waited at any of the times: the test proves nothing; make the cluster busier")
	}
	t.Logf("%d rows of waiting jobs compared", waited)
}

// priorityKeys renders priority rows as sorted lines of every field.
func priorityKeys(rows []record.PriorityRow) []string {
	var out []string
	for _, r := range rows {
		out = append(out, fieldsLine(r))
	}
	slices.Sort(out)
	return out
}

// jobColumnTimes are the values of a time column (Unix times) of a sacct
// file, sorted.
func jobColumnTimes(t *testing.T, sacct, column string) []time.Time {
	t.Helper()
	data, err := os.ReadFile(sacct)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	col := slices.Index(strings.Split(lines[0], "|"), column)
	if col < 0 {
		t.Fatalf("%s has no column %s", sacct, column)
	}
	var out []time.Time
	for _, l := range lines[1:] {
		if s, err := strconv.ParseInt(strings.Split(l, "|")[col], 10, 64); err == nil {
			out = append(out, time.Unix(s, 0).UTC())
		}
	}
	slices.SortFunc(out, func(a, b time.Time) int { return a.Compare(b) })
	return out
}

// TestMomentsEqualMoment: Moments over every minute of two hours that cross
// a stored snapshot (two seeds, one replay each) gives each minute's
// moment as Moment alone does.
func TestMomentsEqualMoment(t *testing.T) {
	t.Parallel()
	dir, from, end := nightlyCluster(t, 600)
	hist := filepath.Join(t.TempDir(), "h")
	if _, err := pipeline.Run(context.Background(), siteInputs(t, dir, filepath.Join(dir, "sacct.psv")), runOpts(hist, end)); err != nil {
		t.Fatal(err)
	}
	var times []time.Time
	for at := from.AddDate(0, 0, 2).Add(-time.Hour); !at.After(from.AddDate(0, 0, 2).Add(time.Hour)); at = at.Add(time.Minute) {
		times = append(times, at.Add(17*time.Second))
	}
	v := openView(t, hist)
	defer v.Close()
	i, seeds := 0, map[time.Time]bool{}
	err := pipeline.Moments(v, "synth", times, func(got *pipeline.MomentResult) error {
		if !got.Time.Equal(times[i]) {
			t.Fatalf("moment %d at %s, want %s", i, got.Time, times[i])
		}
		seeds[got.Seed] = true
		one, err := pipeline.Moment(v, "synth", times[i])
		if err != nil {
			return err
		}
		if !reflect.DeepEqual(rowsByKey(got.Rows), rowsByKey(one.Rows)) || !got.Tick.Equal(one.Tick) {
			t.Errorf("%s: Moments and Moment differ", times[i])
		}
		i++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if i != len(times) || len(seeds) != 2 {
		t.Errorf("%d moments of %d, from %d seeds, want 2", i, len(times), len(seeds))
	}
	if err := pipeline.Moments(v, "synth", []time.Time{times[1], times[0]}, func(*pipeline.MomentResult) error { return nil }); err == nil {
		t.Error("times out of order: no error")
	}
}

// TestMomentSeedDamaged: verify finds a moment seed whose bytes changed,
// says what it serves, and --repair removes it; the seconds it answered
// for are then no moment (the seed before it holds only the jobs of its
// own span), those of the seeds around it still are.
func TestMomentSeedDamaged(t *testing.T) {
	t.Parallel()
	dir, from, end := nightlyCluster(t, 300)
	hist := filepath.Join(t.TempDir(), "h")
	if _, err := pipeline.Run(context.Background(), siteInputs(t, dir, filepath.Join(dir, "sacct.psv")), runOpts(hist, end)); err != nil {
		t.Fatal(err)
	}
	day := from.AddDate(0, 0, 2)
	name := history.MomentSeedName(day.Unix())
	file := filepath.Join(hist, "current", "state", "cluster=synth", name)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x40
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := history.Open(hist)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := h.Verify("")
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) != 1 || !strings.HasSuffix(rep.Problems[0].Path, name) || !strings.Contains(rep.Problems[0].Repair, "sshare --at") {
		t.Fatalf("verify: %+v, want one problem, %s, naming sshare --at", rep.Problems, name)
	}
	if _, err := h.Repair(""); err != nil {
		t.Fatal(err)
	}
	if rep, err := h.Verify(""); err != nil || len(rep.Problems) != 0 {
		t.Fatalf("after repair: %+v, %v", rep.Problems, err)
	}
	for _, c := range []struct {
		at   time.Time
		want bool
	}{{day.Add(-time.Hour), true}, {day.Add(5 * time.Hour), false}, {day.AddDate(0, 0, 1).Add(5 * time.Hour), true}} {
		_, err := momentAt(t, hist, "synth", c.at)
		if got := err == nil; got != c.want || err != nil && !errors.Is(err, pipeline.ErrNoMoment) {
			t.Errorf("moment at %s: %v, want a moment: %v", c.at, err, c.want)
		}
	}
}

// TestMomentAfterRecompute: a recompute of a nightly history from one of
// its checkpoints (run --from, every sacct file from then on) replaces the
// seeds of its window and keeps those before: moments before and inside
// the window still equal the run ending at their second.
func TestMomentAfterRecompute(t *testing.T) {
	t.Parallel()
	dir, from, _ := nightlyCluster(t, 600)
	full := filepath.Join(dir, "sacct.psv")
	hist := filepath.Join(t.TempDir(), "h")
	nights(t, dir, hist, from, from.AddDate(0, 0, 6))
	opt := runOpts(hist, from.AddDate(0, 0, 6))
	opt.From = from.AddDate(0, 0, 2)
	if _, err := pipeline.Run(context.Background(), siteInputs(t, dir, full), opt); err != nil {
		t.Fatal(err)
	}
	for _, at := range []time.Time{from.AddDate(0, 0, 1).Add(7 * time.Hour), from.AddDate(0, 0, 3).Add(13*time.Hour + 17*time.Second),
		from.AddDate(0, 0, 5).Add(2 * time.Hour)} {
		one := filepath.Join(t.TempDir(), "one")
		o := runOpts(one, at)
		o.SnapshotEvery = 0
		if _, err := pipeline.Run(context.Background(), siteInputs(t, dir, full), o); err != nil {
			t.Fatal(err)
		}
		got, err := momentAt(t, hist, "synth", at)
		if err != nil {
			t.Fatal(err)
		}
		if g, w := rowsByKey(got.Rows), rowsByKey(snapshotAt(t, one, "synth", at)); !reflect.DeepEqual(g, w) {
			t.Errorf("%s: the moment differs from the run ending then", at)
		}
	}
}
