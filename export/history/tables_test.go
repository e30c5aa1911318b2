package history

import (
	"bytes"
	"slices"
	"testing"

	"github.com/fairledger/fairledger/schemas"
)

// TestTableList: the store's list of tables describes each table of
// schemas.Tables once, in its order, with a row type whose Parquet schema
// is the table's. The schemas tests check the rest of the chain from the
// same list: TestTablesWellFormed names every table once, TestViewsCoverTables
// that views.sql has a view for each and no other, TestTableDocs that each
// has its schemas/<table>.md and no other doc is there.
func TestTableList(t *testing.T) {
	t.Parallel()
	var described, defined []string
	for _, d := range tables {
		described = append(described, d.tableName())
	}
	for _, def := range schemas.Tables() {
		defined = append(defined, def.Name)
	}
	if !slices.Equal(described, defined) {
		t.Errorf("tables describes %v, schemas.Tables defines %v; want the same tables in the same order", described, defined)
	}
	if err := checkSchemas(); err != nil {
		t.Errorf("checkSchemas: %v", err)
	}
	for _, d := range tables {
		if got, _, err := tableNamed(d.tableName()); err != nil || got != d {
			t.Errorf("tableNamed(%q) = %v, %v; want its descriptor", d.tableName(), got, err)
		}
	}
	if _, _, err := tableNamed("nope"); err == nil {
		t.Errorf("tableNamed(%q) succeeded, want an error", "nope")
	}
}

// TestMerge: Txn.merge replaces a partition's segments by one settled
// segment holding exactly their rows, the bytes one segment of those rows
// has (EncodeRows), for a table written as rows and for the jobs.
func TestMerge(t *testing.T) {
	t.Parallel()
	h := openHistory(t)
	tx, err := h.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Abort()
	usage, jobs := sampleUsage(), sampleJobs()
	cases := []struct {
		table            string
		first, rest, all any
	}{
		{schemas.TableUsage, usage[:1], usage[1:], usage},
		{schemas.TableJobs, jobs[:1], jobs[1:], jobs},
	}
	for _, c := range cases {
		var segs []Partition
		for _, rows := range []any{c.first, c.rest} {
			p, err := tx.Write(c.table, "c1", jan, rows, true)
			if err != nil {
				t.Fatal(err)
			}
			segs = append(segs, p)
		}
		merged, err := tx.merge(segs)
		if err != nil {
			t.Fatalf("Merge(%s) = %v", c.table, err)
		}
		files := tx.Files(c.table, "c1")
		if len(files) != 1 || files[0].Path != merged.Path || merged.Hot {
			t.Errorf("%s after Merge: files %+v, merged %+v; want the one settled segment", c.table, files, merged)
		}
		want, err := EncodeRows(c.table, c.all)
		if err != nil {
			t.Fatal(err)
		}
		got, err := readBytes(tx, merged)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: the merged segment is not one segment of the rows of both (%d bytes, want %d)", c.table, len(got), len(want))
		}
	}
	if _, err := tx.merge(nil); err == nil {
		t.Error("Merge(nil) succeeded, want an error")
	}
}

// readBytes reads file p, written by tx, verified against its entry.
func readBytes(tx *Txn, p Partition) ([]byte, error) {
	return readVerified(tx.filePath(p), p)
}
