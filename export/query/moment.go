package query

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/schemas"
)

// The relations of a session opened with a moment (DuckDBOptions.Moment):
// the fairshare and priority tables' columns, with the same names and
// types as their views, holding the rows of one cluster at one instant.
const (
	// FairshareAt holds the moment's fairshare rows: the tree as a
	// snapshot at that instant would have stored it.
	FairshareAt = "fairshare_at"
	// PriorityAt holds the moment's priority rows: the jobs waiting at
	// that instant (event pending), each in each partition it waited in;
	// empty when the run computed no job priority.
	PriorityAt = "priority_at"
)

// Moment is one cluster's fair share and queue at one instant, as rows of
// the fairshare and priority tables (pipeline.MomentResult, or a stored
// snapshot's rows when one is at that instant).
type Moment struct {
	// Cluster fills the relations' column cluster.
	Cluster string
	// Time is the instant; it names the moment in errors.
	Time time.Time
	// Fairshare are the rows of FairshareAt.
	Fairshare []record.FairshareRow
	// Priority are the rows of PriorityAt (none without job priority).
	Priority []record.PriorityRow
}

// momentRelation is one relation of a moment: its name, the history table
// whose columns it has, and its rows as history.EncodeRows takes them.
type momentRelation struct {
	name, table string
	rows        any
	n           int
}

// loadMoment creates the relations FairshareAt and PriorityAt of m as
// in-memory tables, before the session is locked: each is created empty
// from views.sql's fairledger_empty_<table>() (the view's columns and
// types), then filled by name from a Parquet file of the rows written with
// the history's own encoder into the session's private directory and
// removed at once. The locked session is given no path: it reads the
// tables from memory, and its statements, read-only, cannot change them.
func (d *DB) loadMoment(ctx context.Context, m *Moment) error {
	rels := []momentRelation{
		{FairshareAt, schemas.TableFairshare, m.Fairshare, len(m.Fairshare)},
		{PriorityAt, schemas.TablePriority, m.Priority, len(m.Priority)},
	}
	for _, r := range rels {
		if err := d.loadRelation(ctx, m, r); err != nil {
			return fmt.Errorf("moment %s of cluster %s: relation %s: %w", m.Time.UTC().Format(time.RFC3339), m.Cluster, r.name, err)
		}
		d.Moments = append(d.Moments, r.name)
	}
	return nil
}

func (d *DB) loadRelation(ctx context.Context, m *Moment, r momentRelation) error {
	if _, err := d.db.ExecContext(ctx, "CREATE TABLE "+r.name+" AS FROM fairledger_empty_"+r.table+"()"); err != nil {
		return err
	}
	if r.n == 0 {
		return nil
	}
	b, err := history.EncodeRows(r.table, r.rows)
	if err != nil {
		return fmt.Errorf("encode rows: %w", err)
	}
	f := filepath.Join(d.tmp, r.name+".parquet")
	if err := os.WriteFile(f, b, 0o600); err != nil {
		return err
	}
	defer os.Remove(f)
	// The month is the UTC month of the row's time, as the table's
	// partition of the row would be (schemas.MonthKey).
	timeCol := "snapshot"
	if r.table == schemas.TablePriority {
		timeCol = "event_time"
	}
	ins := "INSERT INTO " + r.name + " BY NAME SELECT *, " + SQLString(m.Cluster) + " AS cluster, " +
		"strftime(timezone('UTC', " + timeCol + "), '%Y-%m') AS month " +
		"FROM read_parquet(" + SQLString(globLiteral(f)) + ", hive_partitioning = false)"
	if _, err := d.db.ExecContext(ctx, ins); err != nil {
		return err
	}
	return os.Remove(f)
}
