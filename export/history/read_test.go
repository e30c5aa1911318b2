package history

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/schemas"
)

// readHistory writes a history for the read API: cluster c1 has the
// sample snapshot's four rows at three times, s1 (Jan 15) and s2 (Jan 31,
// 23:00) in January's partition and s3 (Mar 1) in March's, none in
// February; c2 has one snapshot, on Feb 10. Cluster c1's runs started an
// hour after each snapshot (in January, February and March), recording
// the TRES cpu,mem; cpu,gres/gpu; and cpu,license/matlab; c2 has no run.
func readHistory(t *testing.T) (h *Store, s1, s2, s3 time.Time) {
	t.Helper()
	h = openHistory(t)
	s1, s2, s3 = ts("2025-01-15T00:00:00Z", 0), ts("2025-01-31T23:00:00Z", 0), ts("2025-03-01T00:00:00Z", 0)
	at := func(snap time.Time) []record.FairshareRow {
		rows := sampleFairshare()
		for i := range rows {
			rows[i].Snapshot = snap
		}
		return rows
	}
	for _, w := range []struct {
		cluster string
		rows    []record.FairshareRow
	}{
		{"c1", append(at(s1), at(s2)...)},
		{"c1", at(s3)},
		{"c2", at(ts("2025-02-10T00:00:00Z", 0))},
	} {
		if err := h.WritePartition(schemas.TableFairshare, w.cluster, w.rows[0].Snapshot, w.rows); err != nil {
			t.Fatal(err)
		}
	}
	for i, r := range []struct {
		started time.Time
		tres    []string
	}{
		{s1.Add(time.Hour), []string{"cpu", "mem"}},
		{s2.Add(time.Hour), []string{"cpu", "gres/gpu"}},
		{s3.Add(time.Hour), []string{"cpu", "license/matlab"}},
	} {
		cfg, err := record.MarshalConfig(record.RunConfig{Cluster: "c1", TRES: r.tres})
		if err != nil {
			t.Fatal(err)
		}
		run := record.RunRow{RunID: "run" + string(rune('1'+i)), Started: r.started, Finished: r.started, Config: cfg}
		if _, err := h.AppendRun("c1", run); err != nil {
			t.Fatal(err)
		}
	}
	return h, s1, s2, s3
}

// TestReadAPI checks what the read API finds in readHistory's history:
// the clusters and months of a table, the snapshot sshare shows for a
// time (the newest at or before it, going back over a month without
// snapshots; the first one, marked Before, for a time before all), and
// the settings of the run that computed it (the first run at or after the
// snapshot, else the latest before; the static TRES without a run).
func TestReadAPI(t *testing.T) {
	t.Parallel()
	h, s1, s2, s3 := readHistory(t)
	v, err := h.View()
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()

	if got := v.Clusters(schemas.TableFairshare); !slices.Equal(got, []string{"c1", "c2"}) {
		t.Errorf("Clusters(fairshare) = %v, want [c1 c2]", got)
	}
	if got := v.Clusters(schemas.TableRuns); !slices.Equal(got, []string{"c1"}) {
		t.Errorf("Clusters(runs) = %v, want [c1]", got)
	}
	months, err := v.Months(schemas.TableFairshare, "c1")
	want := []time.Time{ts("2025-01-01T00:00:00Z", 0), ts("2025-03-01T00:00:00Z", 0)}
	if err != nil || !slices.Equal(months, want) {
		t.Errorf("Months(fairshare, c1) = %v, %v; want %v", months, err, want)
	}
	if months, err := v.Months(schemas.TableFairshare, "c3"); err != nil || len(months) != 0 {
		t.Errorf("Months of a cluster without files = %v, %v; want none", months, err)
	}

	for _, c := range []struct {
		name    string
		cluster string
		at      time.Time
		want    time.Time // zero: no rows
		before  bool
	}{
		{"latest", "c1", time.Time{}, s3, false},
		{"in a month without snapshots", "c1", ts("2025-02-15T00:00:00Z", 0), s2, false},
		{"between two of a month", "c1", ts("2025-01-20T00:00:00Z", 0), s1, false},
		{"at a snapshot", "c1", s2, s2, false},
		{"before the first", "c1", ts("2025-01-01T00:00:00Z", 0), s1, true},
		{"other cluster", "c2", time.Time{}, ts("2025-02-10T00:00:00Z", 0), false},
		{"unknown cluster", "c3", time.Time{}, time.Time{}, false},
		{"unknown cluster at a time", "c3", s2, time.Time{}, false},
	} {
		snap, err := v.Snapshot(c.cluster, c.at)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		wantRows := 4
		if c.want.IsZero() {
			wantRows = 0
		}
		if snap.Cluster != c.cluster || !snap.Time.Equal(c.want) || snap.Before != c.before || len(snap.Rows) != wantRows {
			t.Errorf("%s: Snapshot(%s, %v) = %s at %v before=%v with %d rows; want %s at %v before=%v with %d rows", c.name,
				c.cluster, c.at, snap.Cluster, snap.Time, snap.Before, len(snap.Rows), c.cluster, c.want, c.before, wantRows)
		}
		for _, r := range snap.Rows {
			if !r.Snapshot.Equal(c.want) {
				t.Errorf("%s: a row of snapshot %v", c.name, r.Snapshot)
			}
		}
	}

	for _, c := range []struct {
		name    string
		cluster string
		at      time.Time
		want    []string
	}{
		{"first run after", "c1", s1, []string{"cpu", "mem"}},
		{"first run after, a month later", "c1", s2, []string{"cpu", "gres/gpu"}},
		{"latest run before", "c1", s3.Add(2 * time.Hour), []string{"cpu", "license/matlab"}},
		{"no run", "c2", s1, schemas.StaticTRES()},
	} {
		cfg, err := v.RunConfig(c.cluster, c.at)
		if err != nil || !slices.Equal(cfg.TRES, c.want) {
			t.Errorf("%s: RunConfig(%s, %v).TRES = %v, %v; want %v", c.name, c.cluster, c.at, cfg.TRES, err, c.want)
		}
	}
}

// TestReplace: Txn.replace drops a partition's segments and writes their rows
// as one segment in one commit; segments of two partitions are refused.
func TestReplace(t *testing.T) {
	t.Parallel()
	h := openHistory(t)
	usage := sampleUsage() // three rows of January
	tx, err := h.Begin()
	if err != nil {
		t.Fatal(err)
	}
	var segs []Partition
	for _, rows := range [][]record.UsageRow{usage[:1], usage[1:]} {
		p, err := tx.Write(schemas.TableUsage, "c1", jan, rows, false)
		if err != nil {
			t.Fatal(err)
		}
		segs = append(segs, p)
	}
	feb, err := tx.Write(schemas.TableUsage, "c1", ts("2025-02-01T00:00:00Z", 0), usage[:1], false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.replace([]Partition{segs[0], feb}, usage, false); err == nil || !strings.Contains(err.Error(), "not of one partition") {
		t.Errorf("Replace of two partitions' segments: %v, want an error", err)
	}
	p, err := tx.replace(segs, usage, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	files := histFiles(t, h, schemas.TableUsage, "c1", "2025-01")
	if len(files) != 1 || files[0] != p || p.Rows != 3 || !p.Hot {
		t.Errorf("January's files after Replace = %+v; want one hot segment of 3 rows", files)
	}
	var back []record.UsageRow
	if err := h.ReadPartition(schemas.TableUsage, "c1", jan, &back); err != nil || len(back) != 3 {
		t.Errorf("ReadPartition after Replace = %d rows, %v; want 3", len(back), err)
	}
}
