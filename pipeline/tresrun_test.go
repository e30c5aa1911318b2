package pipeline

import (
	"slices"
	"testing"

	"github.com/fairledger/fairledger/decay"
)

// TestRunningAt checks which jobs runningAt puts at each snapshot's tick,
// by hand: ticks every 300 s from origin 0; snapshots at 1000 (tick 900),
// 1200 (tick 1200, on the grid), 1250 (tick 1200 again) and 5000 (tick
// 4800). A job runs at tick T when start < T and it is still running or
// ends after T.
func TestRunningAt(t *testing.T) {
	jobs := decay.Jobs{
		Start: []int64{0, 900, 899, 100, 1000, 1199, 4800, 600, 10},
		End:   []int64{decay.Running, 2000, 900, 1201, 1100, 1200, decay.Running, 4801, 20},
	}
	// 0: from 0, running: ticks 900, 1200, 1200, 4800.
	// 1: starts on tick 900 (not running at it), ends 2000: 1200, 1200.
	// 2: ends on tick 900 (not running at it): none.
	// 3: 100-1201: 900, 1200, 1200.
	// 4: 1000-1100, between ticks: none.
	// 5: 1199-1200, ends on tick 1200: none.
	// 6: starts on the last tick: none.
	// 7: 600-4801: 900, 1200, 1200, 4800.
	// 8: 10-20: none.
	ticks, at := runningAt(jobs, []int64{1000, 1200, 1250, 5000}, 0, 300)
	if want := []int64{900, 1200, 1200, 4800}; !slices.Equal(ticks, want) {
		t.Errorf("ticks = %v, want %v", ticks, want)
	}
	want := [][]int32{{0, 3, 7}, {0, 1, 3, 7}, {0, 1, 3, 7}, {0, 7}}
	for i := range want {
		if !slices.Equal(at[i], want[i]) {
			t.Errorf("snapshot %d (tick %d): jobs %v, want %v", i, ticks[i], at[i], want[i])
		}
	}
	// A window too long for the lookup table (binary search): the far
	// snapshot sees the two jobs still running, 0 and 6.
	far := int64(300 << 23)
	ticks, at = runningAt(jobs, []int64{1000, 1200, far}, 0, 300)
	for i, w := range [][]int32{{0, 3, 7}, {0, 1, 3, 7}, {0, 6}} {
		if !slices.Equal(at[i], w) {
			t.Errorf("long window, snapshot %d (tick %d): jobs %v, want %v", i, ticks[i], at[i], w)
		}
	}
	// A grid not through 0: origin 7, ticks
	// at 7 + 300k; the snapshot at 1000 is taken at tick 907.
	ticks, at = runningAt(decay.Jobs{Start: []int64{906, 907}, End: []int64{908, decay.Running}}, []int64{1000}, 7, 300)
	if ticks[0] != 907 || !slices.Equal(at[0], []int32{0}) {
		t.Errorf("origin 7: tick %d, jobs %v, want 907, [0]", ticks[0], at[0])
	}
}
