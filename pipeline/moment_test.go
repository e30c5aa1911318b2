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
	h, err := history.Open(hist)
	if err != nil {
		t.Fatal(err)
	}
	v, err := h.View()
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	return pipeline.Moment(v, cluster, at)
}

// rowsByKey renders snapshot rows (their time left out) keyed by
// association, for comparing two snapshots of one instant.
func rowsByKey(rows []record.FairshareRow) map[string]string {
	out := map[string]string{}
	for _, r := range rows {
		var b strings.Builder
		v := reflect.ValueOf(r)
		for i := range v.NumField() {
			f, name := v.Field(i), v.Type().Field(i).Name
			switch {
			case name == "Snapshot":
			case f.Kind() != reflect.Pointer:
				fmt.Fprintf(&b, " %s=%v", name, f.Interface())
			case f.IsNil():
				fmt.Fprintf(&b, " %s=NULL", name)
			default:
				fmt.Fprintf(&b, " %s=%v", name, f.Elem().Interface())
			}
		}
		s := b.String()
		out[r.Account+"/"+r.User+"/"+r.Partition] = s
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

	ends := jobEnds(t, sacct)
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

// jobEnds are the end times of the finished jobs of a sacct file (Unix
// times), sorted.
func jobEnds(t *testing.T, sacct string) []time.Time {
	t.Helper()
	data, err := os.ReadFile(sacct)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	hdr := strings.Split(lines[0], "|")
	col := slices.Index(hdr, "End")
	var out []time.Time
	for _, l := range lines[1:] {
		if s, err := strconv.ParseInt(strings.Split(l, "|")[col], 10, 64); err == nil {
			out = append(out, time.Unix(s, 0).UTC())
		}
	}
	slices.SortFunc(out, func(a, b time.Time) int { return a.Compare(b) })
	return out
}
