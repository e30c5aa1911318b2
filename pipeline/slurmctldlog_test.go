package pipeline

import (
	"slices"
	"testing"
	"time"

	"github.com/fairledger/fairledger/ingest"
)

// The log's ticks, with the unlogged one a run_delta before the first, and
// its job ends ordered against the tick of their second by the lines'
// milliseconds.
func TestCtldLogOrder(t *testing.T) {
	t.Parallel()
	at := logClock(t)
	base := at("00:00:00.000").Unix()
	l := &ingest.SlurmctldLog{Millis: true,
		Ticks: []ingest.LogTick{{Logged: at("00:01:00.227"), DeltaSec: 60}, {Logged: at("00:02:00.227"), DeltaSec: 60}},
		JobEnds: []ingest.LogJobEnd{
			{JobID: 7, Logged: at("00:01:00.100")}, // before the tick of its second
			{JobID: 8, Logged: at("00:01:00.500")}, // after it
			{JobID: 9, Logged: at("00:01:30.000")}, // between ticks
			{JobID: 10, Logged: at("00:02:00.228")},
			// A time limit slurmctld noticed after the tick, logged in the
			// next second, its record ending in the tick's second (the
			// live 24.11.5 job 18: End 17:55:51, line 17:55:52.001).
			{JobID: 11, Logged: at("00:02:01.001")},
		},
	}
	c := newCtldLog(l)
	if want := []int64{base, base + 60, base + 120}; !slices.Equal(c.ticks, want) {
		t.Errorf("ticks %v, want %v", c.ticks, want)
	}
	for _, x := range []struct {
		id, end int64
		after   bool
	}{{7, base + 60, false}, {8, base + 60, true}, {8, base + 61, false}, {9, base + 90, false}, {10, base + 120, true}, {11, base + 120, true}, {11, base + 121, false}} {
		if got := c.endsAfter(x.id, x.end); got != x.after {
			t.Errorf("job %d ending at +%d s: after the tick %v, want %v", x.id, x.end-base, got, x.after)
		}
	}
	// Without milliseconds nothing can be ordered: every end is before.
	l.Millis = false
	if c := newCtldLog(l); c.endsAfter(8, base+60) {
		t.Error("a log without milliseconds ordered job 8 after its tick")
	}
}

// The double charge from the log's lines (docs/slurm-versions.md §10):
// an end after the tick's line whose job the tick's pass had charged
// (PassCharged), with its own "ran for" δ counted from before the tick,
// was charged twice; ticks at 00:01:00 and 00:02:00.
func TestCtldLogChargedTwice(t *testing.T) {
	t.Parallel()
	at := logClock(t)
	base := at("00:00:00.000").Unix()
	l := &ingest.SlurmctldLog{Millis: true,
		Ticks: []ingest.LogTick{{Logged: at("00:01:00.227"), DeltaSec: 60}, {Logged: at("00:02:00.227"), DeltaSec: 60}},
		JobEnds: []ingest.LogJobEnd{
			{JobID: 8, Logged: at("00:02:00.300"), RanSec: 60, PassCharged: true},   // from 00:01:00 again: twice
			{JobID: 9, Logged: at("00:02:00.400"), RanSec: 0, PassCharged: true},    // after g_last_ran moved
			{JobID: 10, Logged: at("00:02:00.500"), RanSec: 60, PassCharged: false}, // before the pass: once
			{JobID: 11, Logged: at("00:02:01.100"), RanSec: 61, PassCharged: true},  // the next second, from 00:01:00: twice
			{JobID: 12, Logged: at("00:02:30.000"), RanSec: 30, PassCharged: true},  // 30 s after the tick: once
			{JobID: 13, Logged: at("00:02:00.600"), RanSec: -1, PassCharged: true},  // no "ran for" line
		},
	}
	c := newCtldLog(l)
	for _, x := range []struct {
		id, end int64
		sec     int64
		twice   bool
	}{{8, base + 120, 60, true}, {9, base + 120, 0, false}, {10, base + 120, 0, false}, {11, base + 121, 61, true}, {12, base + 150, 0, false}, {13, base + 120, 0, false}} {
		if sec, ok := c.chargedTwice(x.id, x.end); ok != x.twice || sec != x.sec {
			t.Errorf("job %d: charged twice %v (%d s), want %v (%d s)", x.id, ok, sec, x.twice, x.sec)
		}
	}
}

// The log's holds pair with the job's next release: job 10 held and
// released, held again and never released; job 11 only released (it was
// submitted held: its record says so, not the log).
func TestCtldLogHolds(t *testing.T) {
	t.Parallel()
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return base.Add(time.Duration(s) * time.Second) }
	l := &ingest.SlurmctldLog{Millis: true,
		Ticks: []ingest.LogTick{{Logged: at(60), DeltaSec: 60}},
		Holds: []ingest.LogHold{
			{JobID: 10, Logged: at(100)},
			{JobID: 11, Release: true, Logged: at(110)},
			{JobID: 10, Release: true, Logged: at(200)},
			{JobID: 10, Logged: at(300)},
		},
	}
	c := newCtldLog(l)
	b := base.Unix()
	want := []logHold{{10, b + 100, b + 200}, {10, b + 300, 0}}
	if !slices.Equal(c.holds, want) {
		t.Errorf("holds %+v, want %+v", c.holds, want)
	}
}

// A start of slurmctld that recovered its last tick (1000 s after base)
// and logged its first tick 118 s after it: the restart's tick is
// 1000 + 118, the first logged after the start.
func TestCtldLogRestartTicks(t *testing.T) {
	t.Parallel()
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return base.Add(time.Duration(ms) * time.Millisecond) }
	b := base.Unix()
	l := &ingest.SlurmctldLog{Millis: true,
		Ticks: []ingest.LogTick{{Logged: at(940_100), DeltaSec: 60}, {Logged: at(1_000_100), DeltaSec: 60},
			{Logged: at(1_118_200), DeltaSec: 118}, {Logged: at(1_178_200), DeltaSec: 60}},
		Recovered: []ingest.LogRecovered{{Unix: b + 1000, Logged: at(1_117_900)}},
	}
	c := newCtldLog(l)
	if want := [][2]int64{{b + 1000, b + 1118}}; !slices.Equal(c.restartTicks, want) {
		t.Errorf("restart ticks %v, want %v", c.restartTicks, want)
	}
}

// logClock returns a function reading "15:04:05.000" as that time of
// 2025-01-01 UTC, the day the tests' log lines are on.
func logClock(t *testing.T) func(string) time.Time {
	return func(s string) time.Time {
		v, err := time.Parse("15:04:05.000", s)
		if err != nil {
			t.Fatal(err)
		}
		return time.Date(2025, 1, 1, v.Hour(), v.Minute(), v.Second(), v.Nanosecond(), time.UTC)
	}
}
