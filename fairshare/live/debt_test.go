package live

import (
	"slices"
	"testing"

	"github.com/fairledger/fairledger/decay"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/fairshare"
)

// TestTRESRunDebt follows a double-charged end's debt through the clamp
// at 0 (docs/slurm-versions.md §10), worked by hand in cpu-seconds; with
// 60 cpus, sshare's minutes equal the seconds of one cpu. Tree root → A →
// A/u1, A/u2; ticks every 60 s from 0; q = 1; slurmctld's counters:
//
//   - X (u1, start 0, limit 600 s) +600; ticks 60 and 120 −60 each: 480.
//     It ends after tick 120's pass, which charged it, and its end counts
//     from tick 60 ("ran for 60 seconds"): it removes 540, not 480, so
//     u1 underflows to 0 (fairledger: 0 too, no debt) and A, root owe 60;
//   - Y (u2, start 30, limit 300 s) +300; ticks 60 −30, 120 −60: 210;
//     ticks 180, 240 −60 each: 90; tick 300 −30 (to its limit, 330): 0.
//     It ends at 340 (past its limit) removing nothing more;
//   - Z (u2, start 400, limit 600 s) +600.
//
// A and root, slurmctld against fairledger: at 150, 150 against 210; at
// 250, 30 against 90; at 330, 0 against 30 (tick 300 underflowed: the
// debt is now 30); at 410, 600 and 600: Y's end left fairledger at 0
// before Z started, so the debt is gone, although neither snapshot 330
// nor 410 shows that moment.
func TestTRESRunDebt(t *testing.T) {
	t.Parallel()
	_, uni, p := project(t, []fairshare.Node{
		{Account: "root", Parent: -1},
		{Account: "A", Parent: 0, Shares: 1},
		{Account: "A", User: "u1", Parent: 1, Shares: 1},
		{Account: "A", User: "u2", Parent: 1, Shares: 1},
	})
	u1, _ := uni.Index(fairshare.Key{Account: "A", User: "u1"})
	u2, _ := uni.Index(fairshare.Key{Account: "A", User: "u2"})
	dict := record.NewJobDict()
	normal := dict.Name("normal")
	cpus := dict.TRESSet(map[string]float64{"cpu": 60})
	sched, err := decay.NewSchedule(0, 60, nil)
	if err != nil {
		t.Fatal(err)
	}
	jobs := decay.Jobs{
		Start: []int64{0, 30, 400},
		End:   []int64{120, 340, decay.Running},
		Assoc: []int32{int32(u1), int32(u2), int32(u2)},
	}
	config := func(lo int64, snaps []int64, debt []uint64) TRESRunConfig {
		return TRESRunConfig{
			Names: []string{"cpu"}, Jobs: jobs, Dict: dict,
			Extra:  Extra{TRES: []uint32{cpus, cpus, cpus}, QOS: []uint32{normal, normal, normal}, LimitMin: []uint32{10, 5, 10}},
			Factor: func(string) float64 { return 1 },
			Sched:  sched, After: map[int32]bool{0: true}, Lo: lo, Snaps: snaps, PeriodSec: 60, Since: 0,
			Twice: map[int32]int64{0: 60}, CarriedDebt: debt,
		}
	}
	// Per snapshot: root, A, A/u1, A/u2.
	want := map[int64][]string{
		150: {"cpu=150", "cpu=150", "", "cpu=210"},
		250: {"cpu=30", "cpu=30", "", "cpu=90"},
		330: {"", "", "", "cpu=30"},
		410: {"cpu=600", "cpu=600", "", "cpu=600"},
	}
	check := func(name string, r *TRESRun, snaps []int64) {
		t.Helper()
		for i, at := range snaps {
			cells, err := r.Cells(i, at, p, len(p.Credit))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(cells, want[at]) {
				t.Errorf("%s, at %d: %q, want %q", name, at, cells, want[at])
			}
		}
	}
	snaps := []int64{150, 250, 330, 410}
	check("one run", NewTRESRun(config(0, snaps, nil)), snaps)

	// A run resumed at 150 from what the first snapshot owed: the same.
	first := NewTRESRun(config(0, snaps[:1], nil))
	check("first night", first, snaps[:1])
	owed := slices.Clone(first.Debts())
	a, _ := uni.Index(fairshare.Key{Account: "A"})
	if owed[a] != 3600 || owed[u1] != 0 { // 60 s of 60 cpus
		t.Errorf("owed after 150: A %d, A/u1 %d cpu-seconds; want 3600 and 0", owed[a], owed[u1])
	}
	check("resumed", NewTRESRun(config(150, snaps[1:], owed)), snaps[1:])

	// A restart at 200 rebuilds every value: fairledger's from then on.
	r := NewTRESRun(config(0, snaps, nil))
	r.restarts = []int64{200}
	cells, err := r.Cells(0, 150, p, len(p.Credit))
	if err != nil || cells[1] != "cpu=150" {
		t.Errorf("before the restart: A %q (%v), want cpu=150", cells[1], err)
	}
	// Y rebuilt at 200 from tick 180: 300 − ⌊(180 − 30)⌋ = 150, tick 240
	// −60: 90.
	if cells, err = r.Cells(1, 250, p, len(p.Credit)); err != nil || cells[1] != "cpu=90" {
		t.Errorf("after the restart: A %q (%v), want cpu=90", cells[1], err)
	}
}

// TestTwiceEndSecs checks what a double-charged end removes beyond its
// job's value, by hand: a job started at 0 with a 600 s limit, ticks every
// 60 s, ending right after tick 120's pass charged it, its end counting
// from tick 60: 600 − 60 = 540 against 600 − 120 = 480, 60 s of each
// TRES; with q = 0.5, ⌊270⌋ − ⌊240⌋ = 30. A job past its limit by the
// earlier tick removes nothing either way.
func TestTwiceEndSecs(t *testing.T) {
	t.Parallel()
	sched, err := decay.NewSchedule(0, 60, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		j    fairshare.RunJob
		from int64
		want []uint64
	}{
		{fairshare.RunJob{Start: 0, End: 120, EndsAfterTick: true, LimitSec: 600, Factor: 1}, 60, []uint64{120, 30000}},
		{fairshare.RunJob{Start: 0, End: 120, EndsAfterTick: true, LimitSec: 600, Factor: 0.5}, 60, []uint64{60, 15000}},
		// Started at 90, after the earlier tick: the end counts from its
		// start, (690 − 90) − (690 − 120) = 30.
		{fairshare.RunJob{Start: 90, End: 120, EndsAfterTick: true, LimitSec: 600, Factor: 1}, 60, []uint64{60, 15000}},
		{fairshare.RunJob{Start: 0, End: 120, EndsAfterTick: true, LimitSec: 60, Factor: 1}, 60, []uint64{0, 0}},
	} {
		got := make([]uint64, 2)
		fairshare.TwiceEndSecs(sched, nil, c.j, c.from, []uint64{2, 500}, got)
		if !slices.Equal(got, c.want) {
			t.Errorf("%+v from %d: %v, want %v", c.j, c.from, got, c.want)
		}
	}
}
