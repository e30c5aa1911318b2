package record_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/fairshare"
	"github.com/fairledger/fairledger/schemas"
)

// fairshareRowBeforeTRESRun is record.FairshareRow as histories written before
// the tres_run_mins column stored it.
type fairshareRowBeforeTRESRun struct {
	Snapshot     time.Time `parquet:"snapshot,timestamp(microsecond:utc)"`
	Algorithm    string    `parquet:"algorithm,dict"`
	Account      string    `parquet:"account,dict"`
	User         string    `parquet:"user,dict"`
	Partition    string    `parquet:"partition,dict"`
	Parent       string    `parquet:"parent,dict"`
	Depth        int32     `parquet:"depth"`
	IsUser       bool      `parquet:"is_user"`
	RawShares    *int64    `parquet:"raw_shares"`
	SharesParent bool      `parquet:"shares_parent"`
	NormShares   *float64  `parquet:"norm_shares"`
	RawUsage     *float64  `parquet:"raw_usage"`
	NormUsage    *float64  `parquet:"norm_usage"`
	EffectvUsage *float64  `parquet:"effectv_usage"`
	FairShare    *float64  `parquet:"fair_share"`
	LevelFS      *float64  `parquet:"level_fs"`
	Rank         *int32    `parquet:"rank"`
	GrpTRESMins  *string   `parquet:"grp_tres_mins"`
}

// TestTRESRunMinsColumn writes a snapshot with TRESRunMins cells and reads
// them back onto their tree positions, and reads a partition written
// before the column existed: its cells are NULL, record.TRESRunMinsFromRows gives
// nil and sshare -l prints the zeros of the TRES list.
func TestTRESRunMinsColumn(t *testing.T) {
	t.Parallel()
	snap := ts("2025-03-01T00:00:00Z", 0)
	one := 1.0
	shares := int64(1)
	mk := func(account, user, parent string, depth int32, run string) record.FairshareRow {
		r := record.FairshareRow{Snapshot: snap, Algorithm: "fair_tree", Account: account, User: user, Parent: parent,
			Depth: depth, IsUser: user != "", NormShares: &one, RawUsage: &one, EffectvUsage: &one}
		if parent != "" {
			r.RawShares = &shares
			r.NormUsage = &one
		}
		if run != "" {
			r.TRESRunMins = &run
		}
		return r
	}
	rows := []record.FairshareRow{
		mk("root", "", "", 0, "cpu=620,mem=1054480"),
		mk("a", "", "root", 1, "cpu=620,mem=1054480"),
		mk("a", "bob", "a", 2, "cpu=20,mem=10000"),
		mk("a", "alice", "a", 2, "cpu=600,mem=1044480"),
	}
	h := openHistory(t)
	if err := h.WritePartition(schemas.TableFairshare, "c1", snap, rows); err != nil {
		t.Fatal(err)
	}
	var back []record.FairshareRow
	if err := h.ReadPartition(schemas.TableFairshare, "c1", snap, &back); err != nil {
		t.Fatal(err)
	}
	tree, res, err := record.FairshareFromRows(back)
	if err != nil {
		t.Fatal(err)
	}
	got := sshareString(t, tree, res, fairshare.SshareOptions{Long: true, NoHeader: true, Fields: []string{"Account", "User", "TRESRunMins"},
		TRES: []string{"cpu", "mem"}, TRESRunMins: record.TRESRunMinsFromRows(back, tree)})
	want := "root||cpu=620,mem=1054480\n a||cpu=620,mem=1054480\n  a|alice|cpu=600,mem=1044480\n  a|bob|cpu=20,mem=10000\n"
	if got != want {
		t.Errorf("sshare after the round trip:\n%s\nwant\n%s", got, want)
	}

	// The same rows as a history before the column stored them.
	old := make([]fairshareRowBeforeTRESRun, len(rows))
	for i, r := range rows {
		old[i] = fairshareRowBeforeTRESRun{r.Snapshot, r.Algorithm, r.Account, r.User, r.Partition, r.Parent, r.Depth, r.IsUser,
			r.RawShares, r.SharesParent, r.NormShares, r.RawUsage, r.NormUsage, r.EffectvUsage, r.FairShare, r.LevelFS, r.Rank, r.GrpTRESMins}
	}
	var file bytes.Buffer
	if err := parquet.Write(&file, old); err != nil {
		t.Fatal(err)
	}
	commitForeign(t, h, foreignFile{Table: schemas.TableFairshare, Cluster: "c1", Month: "2025-03", Data: file.Bytes()})
	back = nil
	if err := h.ReadPartition(schemas.TableFairshare, "c1", snap, &back); err != nil {
		t.Fatalf("read a partition without tres_run_mins: %v", err)
	}
	for _, r := range back {
		if r.TRESRunMins != nil {
			t.Errorf("%s|%s: tres_run_mins %q in a file without the column", r.Account, r.User, *r.TRESRunMins)
		}
	}
	if tree, res, err = record.FairshareFromRows(back); err != nil {
		t.Fatal(err)
	}
	if cells := record.TRESRunMinsFromRows(back, tree); cells != nil {
		t.Errorf("TRESRunMinsFromRows of an old partition = %q, want nil", cells)
	}
	got = sshareString(t, tree, res, fairshare.SshareOptions{Long: true, NoHeader: true, Fields: []string{"Account", "User", "TRESRunMins"},
		TRES: []string{"cpu", "mem"}})
	want = "root||cpu=0,mem=0\n a||cpu=0,mem=0\n  a|alice|cpu=0,mem=0\n  a|bob|cpu=0,mem=0\n"
	if got != want {
		t.Errorf("sshare of an old partition:\n%s\nwant\n%s", got, want)
	}
}
