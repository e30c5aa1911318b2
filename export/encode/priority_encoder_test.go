package encode

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/export/record/recordtest"
	"github.com/fairledger/fairledger/schemas"
	"github.com/parquet-go/parquet-go"
)

// TestPriorityEncoderBytes checks that priorityEncoder writes exactly the
// bytes of parquet-go's GenericWriter[record.PriorityRow] fed in
// record.ComparePriority order, for rows given shuffled or already sorted
// (encoderCases: none, one, around a batch, several row groups), for the
// sample rows, and for priorityCorners.
func TestPriorityEncoderBytes(t *testing.T) {
	t.Parallel()
	sample := append(recordtest.Priority(), priorityCorners()...)
	checkEncoderBytes(t, schemas.TablePriority, variedPriority, sample, record.ComparePriority, priorityEncoder)
}

// variedPriority is recordtest.VariedPriority with the times of c's
// snapshots (variedSnapshots: before 1970, with nanoseconds the file does
// not keep, in another zone, with monotonic clock readings) given to its
// pending rows, in runs of one snapshot as a month's are appended.
func variedPriority(n int, seed uint64, c snapshotCase) []record.PriorityRow {
	rows := recordtest.VariedPriority(n, seed)
	snaps := variedSnapshots(rand.New(rand.NewPCG(seed, 6)), n, c)
	for i := range rows {
		if r := &rows[i]; r.Event == record.EventPending {
			r.At = snaps[i]
			if r.Snapshot != nil {
				r.Snapshot = &snaps[i]
			}
		}
	}
	return rows
}

// priorityCorners are rows made by hand so that each way a row can look to
// the encoder is there for sure: each event; every nullable column nil and
// set; a nil, an empty, a one-entry and a many-entry TRES map, whose keys
// are inserted out of byte order and include a non-ASCII and an empty key;
// empty and non-ASCII names.
func priorityCorners() []record.PriorityRow {
	at := time.Date(2025, 2, 3, 4, 5, 6, 7000, time.UTC)
	i64 := func(v int64) *int64 { return &v }
	tm := func(t time.Time) *time.Time { return &t }
	many := map[string]float64{}
	for _, k := range []string{"mem", "cpu", "gres/gpu:a100", "", "billing", "énergie", "node", "gres/gpu", "Mem"} {
		many[k] = float64(len(many)) + 0.25
	}
	return []record.PriorityRow{
		{At: at, Event: record.EventSubmit, ComputedAt: at, JobID: 1, User: "", Account: "", Partition: "", QOS: "",
			TRESW: nil},
		{At: at, Event: record.EventPending, Snapshot: tm(at), ComputedAt: at.Add(-time.Second), JobID: 1,
			ArrayJobID: i64(1), User: "zoë", Account: "Åström_lab", Partition: "grün", QOS: "høy",
			Priority: math.MaxInt64, AgeW: math.NaN(), AssocW: math.Inf(-1), FairShareW: math.Copysign(0, -1),
			TRESW: map[string]float64{}, Site: -1, Nice: math.MinInt64, Submit: tm(at.Add(-time.Hour)), Eligible: tm(at)},
		{At: at, Event: record.EventStart, Snapshot: tm(at.Add(-time.Hour)), ComputedAt: at, JobID: 1, User: "bob",
			Account: "physics", Partition: "cpu", QOS: "normal", TRESW: map[string]float64{"cpu": 12.5},
			Submit: tm(at.Add(-2 * time.Hour)), WaitSec: i64(7200), Rank: i64(1), Waiting: i64(0)},
		{At: at.Add(time.Microsecond), Event: record.EventPending, Snapshot: tm(at), ComputedAt: at, JobID: 2,
			User: "alice", Account: "chem", Partition: "gpu", QOS: "high", TRESW: many, Eligible: tm(at),
			WaitSec: i64(0), Rank: i64(math.MaxInt64)},
		{At: at.Add(time.Microsecond), Event: record.EventPending, Snapshot: tm(at), ComputedAt: at, JobID: 2,
			User: "alice", Account: "chem", Partition: "cpu", QOS: "high", TRESW: many, Waiting: i64(-1)},
	}
}

// TestAppendMapEntries checks the levels and the order of a Go map's
// values against the rules of the Parquet format and of parquet-go, worked
// out by hand: a nil or an empty map is one null (repetition and definition
// level 0) in each leaf; a map's entries come in the byte order of their
// keys, the first at repetition level 0 and the next at 1, all at
// definition level 1; values follow their keys.
func TestAppendMapEntries(t *testing.T) {
	t.Parallel()
	type leafValue struct {
		key      string
		val      float64
		rep, def int
	}
	cases := []struct {
		name string
		m    map[string]float64
		want []leafValue
	}{
		{"nil", nil, []leafValue{{"", 0, 0, 0}}},
		{"empty", map[string]float64{}, []leafValue{{"", 0, 0, 0}}},
		{"one", map[string]float64{"cpu": 2}, []leafValue{{"cpu", 2, 0, 1}}},
		{"many", map[string]float64{"node": 3, "Mem": 1, "cpu": 2, "énergie": 5, "gres/gpu": 4},
			[]leafValue{{"Mem", 1, 0, 1}, {"cpu", 2, 1, 1}, {"gres/gpu", 4, 1, 1}, {"node", 3, 1, 1}, {"énergie", 5, 1, 1}}},
	}
	var entries []mapEntry
	for _, c := range cases {
		var keys, vals []parquet.Value
		keys, vals, entries = appendMapEntries(keys, vals, c.m, entries)
		var got []leafValue
		for j := range keys {
			k, v := keys[j], vals[j]
			if k.RepetitionLevel() != v.RepetitionLevel() || k.DefinitionLevel() != v.DefinitionLevel() {
				t.Errorf("%s: entry %d: key levels (%d, %d), value levels (%d, %d), want equal", c.name, j,
					k.RepetitionLevel(), k.DefinitionLevel(), v.RepetitionLevel(), v.DefinitionLevel())
			}
			lv := leafValue{rep: k.RepetitionLevel(), def: k.DefinitionLevel()}
			if !k.IsNull() {
				lv.key, lv.val = string(k.ByteArray()), v.Double()
			}
			got = append(got, lv)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("appendMapEntries(%s) = %+v, want %+v", c.name, got, c.want)
		}
	}
}
