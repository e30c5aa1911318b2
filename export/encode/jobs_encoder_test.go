package encode

import (
	"bytes"
	"testing"

	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/schemas"
)

// TestJobsEncoderBytes checks that the jobs encoder, given the rows as a
// record.JobTable sorted by record.JobTable.Sort, writes exactly the bytes of
// parquet-go's GenericWriter[record.JobRow] fed in record.CompareJobs order (the generic
// encoder every other table uses), for row counts around the batch and
// row-group sizes, for rows given sorted or not, and for starts with
// nanoseconds and monotonic clock readings.
func TestJobsEncoderBytes(t *testing.T) {
	t.Parallel()
	def, err := schemas.TableByName(schemas.TableJobs)
	if err != nil {
		t.Fatal(err)
	}
	big := 2*RowGroupRows + 100
	if testing.Short() {
		big = RowGroupRows + 1
	}
	shuffled := variedJobs(5000, 9, false)
	var sorted []record.JobRow
	for _, i := range sortedOrder(shuffled, record.CompareJobs) {
		sorted = append(sorted, shuffled[i])
	}
	cases := []struct {
		name string
		rows []record.JobRow
	}{
		{"none", nil},
		{"sample", sampleJobs()},
		{"one batch", variedJobs(writeBatch, 1, false)},
		{"batch+1", variedJobs(writeBatch+1, 2, false)},
		{"already sorted", sorted},
		{"row groups", variedJobs(big, 3, false)},
		{"monotonic starts", variedJobs(3*writeBatch, 5, true)},
	}
	for _, c := range cases {
		var want, got bytes.Buffer
		if err := encoder(c.rows, record.CompareJobs, def.SortBy)(&want); err != nil {
			t.Fatalf("%s: generic encoder: %v", c.name, err)
		}
		if err := jobsEncoder(jobTableOf(c.rows), def.SortBy)(&got); err != nil {
			t.Fatalf("%s: jobs encoder: %v", c.name, err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%s (%d rows): jobs encoder wrote %d bytes that differ from the generic encoder's %d",
				c.name, len(c.rows), got.Len(), want.Len())
		}
	}
}
