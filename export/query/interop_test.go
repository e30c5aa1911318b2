package query

import (
	"database/sql"
	"testing"

	"github.com/fairledger/fairledger/schemas"
)

// TestDuckDBReadsHistory reads files written by WritePartition with DuckDB,
// another engine, straight through the current symlink (as the DuckDB CLI
// reads a history): the map, NULLs, +Inf and microsecond timestamps survive.
func TestDuckDBReadsHistory(t *testing.T) {
	t.Parallel()
	h := openHistory(t)
	if err := h.WritePartition(schemas.TableJobs, "c1", jan, sampleJobs()); err != nil {
		t.Fatal(err)
	}
	if err := h.WritePartition(schemas.TableFairshare, "c1", jan, sampleFairshare()); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var gpu float64
	var startUS, nullEnds int64
	var cluster string
	q := `SELECT tres['gres/gpu:a100'], epoch_us(start), cluster FROM read_parquet('` + h.Dir + `/current/jobs/*/*/*.parquet', hive_partitioning = true) WHERE job_id = '101_3'`
	if err := db.QueryRow(q).Scan(&gpu, &startUS, &cluster); err != nil {
		t.Fatalf("%v\n%s", err, q)
	}
	// 2025-01-02T10:00:00Z = 1735812000 s, plus 250 µs.
	if gpu != 2 || startUS != 1735812000_000250 || cluster != "c1" {
		t.Errorf("duckdb 101_3: gpu %v, start %d µs, cluster %q; want 2, 1735812000000250, c1", gpu, startUS, cluster)
	}
	if err := db.QueryRow(`SELECT count(*) FROM read_parquet('` + h.Dir + `/current/jobs/*/*/*.parquet') WHERE "end" IS NULL`).Scan(&nullEnds); err != nil {
		t.Fatal(err)
	}
	if nullEnds != 1 {
		t.Errorf("duckdb jobs with NULL end = %d, want 1", nullEnds)
	}
	var infs, nullLevel int64
	if err := db.QueryRow(`SELECT count(*) FILTER (WHERE isinf(level_fs)), count(*) FILTER (WHERE level_fs IS NULL) FROM read_parquet('`+h.Dir+`/current/fairshare/*/*/*.parquet')`).Scan(&infs, &nullLevel); err != nil {
		t.Fatal(err)
	}
	// sampleFairshare: physics and bob have level_fs +Inf; root and alice NULL.
	if infs != 2 || nullLevel != 2 {
		t.Errorf("duckdb fairshare: %d infinite and %d NULL level_fs, want 2 and 2", infs, nullLevel)
	}
}
