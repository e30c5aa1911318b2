package encode

import (
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// TestJobLeaves checks that every field of the encoder finds its column by
// name in the writer schema, each column once, and that a schema lacking
// them is refused.
func TestJobLeaves(t *testing.T) {
	t.Parallel()
	s := jobsWriterSchema(internStrings(nil))
	leaves, err := jobLeaves(s)
	if err != nil {
		t.Fatal(err)
	}
	cols := s.Columns()
	for c, f := range leaves {
		if got := strings.Join(cols[c], "/"); got != f.path() {
			t.Errorf("column %d is %s, encoder field %s", c, got, f.path())
		}
	}
	type short struct {
		JobID string `parquet:"job_id"`
	}
	if _, err := jobLeaves(parquet.SchemaOf(short{})); err == nil {
		t.Error("jobLeaves of a one-column schema: no error")
	}
}
