package query

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/schemas"
)

// The commits of these tests rewrite cluster c1's usage: 30 rows, users
// u00..u29, u00-u09 and u10-u19 as two segments of January (the second a
// hot one), u20-u29 as February. Row i of commit k bills k·10⁶ + i
// seconds, so every row says which commit wrote it and the table's sum,
// 30·k·10⁶ + 435, which commit a reader sees; rows of two commits mixed
// give a sum no commit wrote.
const (
	concRows  = 30
	concScale = 1_000_000
)

var concFeb = ts("2025-02-01T00:00:00Z", 0)

// concUsage is the usage rows lo..hi-1 of commit k, in month.
func concUsage(k, lo, hi int, month time.Time) []record.UsageRow {
	var rows []record.UsageRow
	for i := lo; i < hi; i++ {
		rows = append(rows, record.UsageRow{Account: "lab", User: fmt.Sprintf("u%02d", i), PeriodStart: month.Add(time.Duration(i) * time.Hour),
			BillingSec: float64(k*concScale + i), CPUSec: 1})
	}
	return rows
}

// concSum is the sum of billing_sec that commit k leaves.
func concSum(k int) float64 { return float64(concRows*k*concScale + concRows*(concRows-1)/2) }

// concCommit makes commit k: every usage segment of c1 removed and the
// three segments of commit k written, in one generation.
func concCommit(h *history.Store, k int) error {
	tx, err := h.Begin()
	if err != nil {
		return err
	}
	for _, p := range tx.Base().Files(schemas.TableUsage, "c1") {
		tx.Remove(p)
	}
	for _, w := range []struct {
		rows []record.UsageRow
		hot  bool
	}{{concUsage(k, 0, 10, jan), false}, {concUsage(k, 10, 20, jan), true}, {concUsage(k, 20, 30, concFeb), false}} {
		if _, err := tx.Write(schemas.TableUsage, "c1", w.rows[0].PeriodStart, w.rows, w.hot); err != nil {
			tx.Abort()
			return err
		}
	}
	return tx.Commit()
}

// concCommitOf returns the commit whose sum is sum, or an error when no
// commit wrote that sum (a mixture of commits).
func concCommitOf(sum float64) (int, error) {
	k := int((sum - concSum(0)) / (concRows * concScale))
	if k < 1 || concSum(k) != sum {
		return 0, fmt.Errorf("sum %v is no commit's (nearest: commit %d, %v)", sum, k, concSum(k))
	}
	return k, nil
}

// concCheckRows checks rows read from one partition: n rows, all written
// by commit gen, in the table's order.
func concCheckRows(rows []record.UsageRow, n int, gen int64) error {
	if len(rows) != n {
		return fmt.Errorf("%d rows, want %d", len(rows), n)
	}
	for i := range rows {
		if k := int64(rows[i].BillingSec) / concScale; k != gen {
			return fmt.Errorf("row %s of commit %d in generation %d", rows[i].User, k, gen)
		}
		if i > 0 && record.CompareUsage(&rows[i-1], &rows[i]) >= 0 {
			return fmt.Errorf("rows %s and %s out of order", rows[i-1].User, rows[i].User)
		}
	}
	return nil
}

// TestReadersDuringCommits: while one goroutine commits 40 times, one
// reader loops over OpenDuckDB + a query + Close and another over history.View +
// ReadPartition + Close. No read fails, and each answer is exactly the
// state the commit of the pinned generation left (never a mixture of two
// commits, never going back); old generations are removed as soon as no
// reader holds them.
func TestReadersDuringCommits(t *testing.T) {
	t.Parallel()
	const commits = 40
	h := openHistory(t)
	if err := concCommit(h, 1); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var (
		stop             atomic.Bool
		failures         atomic.Int64
		sqlReads, vReads atomic.Int64
		wg               sync.WaitGroup
		mu               sync.Mutex
		seen             = map[string]map[int64]bool{"sql": {}, "view": {}}
	)
	fail := func(who string, err error) {
		if failures.Add(1) <= 10 {
			t.Errorf("%s: %v", who, err)
		}
	}
	saw := func(who string, gen int64) {
		mu.Lock()
		seen[who][gen] = true
		mu.Unlock()
	}
	// The DuckDB reader.
	wg.Go(func() {
		var last int64
		for !stop.Load() {
			err := func() error {
				d, err := OpenDuckDB(ctx, h.Dir)
				if err != nil {
					return err
				}
				defer d.Close()
				res, err := d.Query(ctx, "SELECT count(*), sum(billing_sec), count(DISTINCT month) FROM usage")
				if err != nil {
					return err
				}
				n, sum, months := res.Rows[0][0], res.Rows[0][1].(float64), res.Rows[0][2]
				k, err := concCommitOf(sum)
				if err != nil {
					return fmt.Errorf("generation %d: %w", d.Generation, err)
				}
				if n != int64(concRows) || months != int64(2) || int64(k) != d.Generation || d.Generation < last {
					return fmt.Errorf("generation %d (after %d): %v rows, %v months, sum of commit %d; want %d rows, 2 months, commit %d",
						d.Generation, last, n, months, k, concRows, d.Generation)
				}
				last = d.Generation
				saw("sql", d.Generation)
				return nil
			}()
			if err != nil {
				fail("sql reader", err)
			}
			sqlReads.Add(1)
		}
	})
	// The history.View reader.
	wg.Go(func() {
		var last int64
		for !stop.Load() {
			err := func() error {
				v, err := h.View()
				if err != nil {
					return err
				}
				defer v.Close()
				if v.Generation() < last {
					return fmt.Errorf("generation %d after %d", v.Generation(), last)
				}
				last = v.Generation()
				for _, m := range []struct {
					month time.Time
					n     int
				}{{jan, 20}, {concFeb, 10}} {
					var rows []record.UsageRow
					if err := v.ReadPartition(schemas.TableUsage, "c1", m.month, &rows); err != nil {
						return err
					}
					if err := concCheckRows(rows, m.n, v.Generation()); err != nil {
						return fmt.Errorf("generation %d, %s: %w", v.Generation(), m.month.Format(schemas.MonthLayout), err)
					}
				}
				saw("view", v.Generation())
				return nil
			}()
			if err != nil {
				fail("view reader", err)
			}
			vReads.Add(1)
		}
	})
	// The writer, here. After each commit it waits (a little) for both
	// readers to finish a read, so that they see many generations; they
	// read meanwhile, so that reads overlap every commit.
	const readers = 2
	for k := 2; k <= commits && failures.Load() == 0; k++ {
		if err := concCommit(h, k); err != nil {
			t.Errorf("commit %d: %v", k, err)
			break
		}
		// Each reader pins at most one generation at a time.
		if gens := histGenerations(t, h); len(gens) > keepGenerations+readers || !slices.Contains(gens, genName(int64(k))) {
			t.Errorf("after commit %d the generations are %v: want %s and at most %d in all", k, gens, genName(int64(k)), keepGenerations+readers)
		}
		s, v := sqlReads.Load(), vReads.Load()
		for deadline := time.Now().Add(5 * time.Second); (sqlReads.Load() < s+1 || vReads.Load() < v+1) && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
	}
	stop.Store(true)
	wg.Wait()
	if n := failures.Load(); n != 0 {
		t.Fatalf("%d failed reads", n)
	}
	mu.Lock()
	t.Logf("%d SQL reads saw %d generations, %d view reads saw %d", sqlReads.Load(), len(seen["sql"]), vReads.Load(), len(seen["view"]))
	if len(seen["sql"]) < 2 || len(seen["view"]) < 2 {
		t.Errorf("the readers saw generations %v and %v: want several each", seen["sql"], seen["view"])
	}
	mu.Unlock()

	// Readers gone: the next commit leaves only itself and the one before.
	if err := concCommit(h, commits+1); err != nil {
		t.Fatal(err)
	}
	if gens := histGenerations(t, h); !slices.Equal(gens, []string{genName(commits), genName(commits + 1)}) {
		t.Errorf("after the readers stopped the generations are %v, want %s and %s", gens, genName(commits), genName(commits+1))
	}
	var rows []record.UsageRow
	if err := h.ReadPartition(schemas.TableUsage, "c1", jan, &rows); err != nil {
		t.Fatal(err)
	}
	if err := concCheckRows(rows, 20, commits+1); err != nil {
		t.Error(err)
	}
}

// TestPinnedGenerationKept: a history.View and a DuckDB session keep reading the
// generation they pinned while later commits remove the generations no
// one holds; once released, the next commit removes it too.
func TestPinnedGenerationKept(t *testing.T) {
	t.Parallel()
	h := openHistory(t)
	ctx := context.Background()
	if err := concCommit(h, 1); err != nil {
		t.Fatal(err)
	}
	v, err := h.View()
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	d, err := OpenDuckDB(ctx, h.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for k := 2; k <= 5; k++ {
		if err := concCommit(h, k); err != nil {
			t.Fatal(err)
		}
	}
	wantGens := func(want ...int64) {
		t.Helper()
		var names []string
		for _, n := range want {
			names = append(names, genName(n))
		}
		if gens := histGenerations(t, h); !slices.Equal(gens, names) {
			t.Errorf("generations %v, want %v", gens, names)
		}
	}
	wantGens(1, 4, 5)
	var rows []record.UsageRow
	if err := v.ReadPartition(schemas.TableUsage, "c1", jan, &rows); err != nil {
		t.Fatal(err)
	}
	if err := concCheckRows(rows, 20, 1); err != nil {
		t.Errorf("pinned view: %v", err)
	}
	sqlSum := func(d *DB) float64 {
		t.Helper()
		res, err := d.Query(ctx, "SELECT sum(billing_sec) FROM usage")
		if err != nil {
			t.Fatal(err)
		}
		return res.Rows[0][0].(float64)
	}
	if got := sqlSum(d); got != concSum(1) || d.Generation != 1 {
		t.Errorf("pinned DuckDB session: generation %d, sum %v; want generation 1, %v", d.Generation, got, concSum(1))
	}
	d2, err := OpenDuckDB(ctx, h.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := sqlSum(d2); got != concSum(5) || d2.Generation != 5 {
		t.Errorf("new DuckDB session: generation %d, sum %v; want generation 5, %v", d2.Generation, got, concSum(5))
	}
	d2.Close()

	// The view let go, the DuckDB session still holds generation 1.
	v.Close()
	if err := concCommit(h, 6); err != nil {
		t.Fatal(err)
	}
	wantGens(1, 5, 6)
	if got := sqlSum(d); got != concSum(1) {
		t.Errorf("pinned DuckDB session after another commit: sum %v, want %v", got, concSum(1))
	}
	d.Close()
	if err := concCommit(h, 7); err != nil {
		t.Fatal(err)
	}
	wantGens(6, 7)
}
