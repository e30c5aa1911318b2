package billing_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fairledger/fairledger/billing"
	"github.com/fairledger/fairledger/ingest"
	"github.com/fairledger/fairledger/internal/synth"
	"github.com/fairledger/fairledger/schemas"
)

// TestRoundTripGenerator writes a synthetic cluster whose billing= values
// the generator computed from known TRESBillingWeights (synth.Billing, an
// independent implementation), reads it back through slurm.conf → Compile
// and sacct → Apply, and requires billing_slurm == sacct's billing= on
// every row that has one.
func TestRoundTripGenerator(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := synth.WriteDir(dir, synth.Options{Seed: 11, Jobs: 30000}); err != nil {
		t.Fatal(err)
	}
	conf, err := ingest.ReadSlurmConf(filepath.Join(dir, synth.SlurmConfFile))
	if err != nil {
		t.Fatal(err)
	}
	var parts []billing.Partition
	for _, p := range conf.Partitions {
		parts = append(parts, billing.Partition{Name: p.Name, TRESBillingWeights: p.TRESBillingWeights})
	}
	table, err := billing.Compile(parts, conf.PriorityFlags, append(billing.AlwaysTracked(), conf.AccountingStorageTRES...))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, synth.QOSFile))
	if err != nil {
		t.Fatal(err)
	}
	qos, _, err := ingest.ParseQOS(synth.QOSFile, f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var rows, compared, weighted int64
	var st billing.Stats
	sst, err := ingest.ReadSacct(filepath.Join(dir, synth.SacctFile), ingest.SacctOptions{DenseTRES: table.DenseTRES(), Allocator: mem},
		func(rec arrow.RecordBatch) error {
			out, bst, err := table.Apply(mem, rec, func(q string) (float64, bool) { return qos.UsageFactor(q), true })
			if err != nil {
				return err
			}
			defer out.Release()
			st.Add(bst)
			idx := func(name string) int {
				i, err := schemas.Index(out.Schema(), name)
				if err != nil {
					t.Fatal(err)
				}
				return i
			}
			sacct := out.Column(idx(schemas.ColBillingSacct)).(*array.Float64)
			slurm := out.Column(idx(schemas.ColBillingSlurm)).(*array.Int64)
			exact := out.Column(idx(schemas.ColBilling)).(*array.Float64)
			for i := 0; i < int(out.NumRows()); i++ {
				rows++
				if sacct.IsNull(i) {
					continue
				}
				compared++
				if int64(sacct.Value(i)) != slurm.Value(i) {
					t.Errorf("row %d: billing_slurm = %d (exact %v), sacct billing= %v", i, slurm.Value(i), exact.Value(i), sacct.Value(i))
				}
				if exact.Value(i) < float64(slurm.Value(i)) || exact.Value(i) >= float64(slurm.Value(i))+1 {
					t.Errorf("row %d: exact billing %v does not truncate to %d", i, exact.Value(i), slurm.Value(i))
				}
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	weighted = st.Weighted
	if rows != sst.Ingested || compared < rows*9/10 || weighted == 0 || st.Rows != rows {
		t.Errorf("rows %d (ingested %d), compared %d, billing stats %+v", rows, sst.Ingested, compared, st)
	}
}
