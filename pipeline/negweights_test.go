package pipeline_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fairledger/fairledger/export/history"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/pipeline"
	"github.com/fairledger/fairledger/schemas"
)

// TestNegativeBillingWeights: a slurm.conf whose TRESBillingWeights hold a
// negative weight runs (slurmctld takes any number strtod reads,
// _tres_weight_item in src/common/slurm_protocol_api.c), and every job is
// charged the billing Slurm computes, negative too. test24_1's site: no
// decay and limits enforced, so a job of N seconds adds exactly B·N to its
// user's RawUsage (_apply_new_usage: run_delta × billable_tres). Partition
// normal weighs CPU=1.5,Mem=-0.5G, -0.5/1024 per MiB (assoc_mgr_tres_weighted
// sums cpu then mem):
//
//	3001 User1 1 h, 4 CPUs, 2 GiB: 4·1.5 + 2048·(−0.5/1024) = 6 − 1  =  5   → 5·3600   = 18000
//	3002 User2 1 h, 1 CPU, 4 GiB:  1.5 − 4096·0.5/1024 = 1.5 − 2     = −0.5 → −0.5·3600 = −1800
//	3003 User3 1 h, 1 CPU, 8 GiB:  1.5 − 4                           = −2.5 → −2.5·3600 = −9000
//	3004 User1 1 h, 1 CPU, 10 GiB: 1.5 − 5                           = −3.5 → −12600
//	3005 User2 1 h, 1 CPU, 5 GiB:  1.5 − 2.5                         = −1   → −3600
//
// so User1 18000 − 12600 = 5400, User2 −1800 − 3600 = −5400, User3 −9000.
//
// billing= as slurmctld stores it (job_set_alloc_tres: the double into a
// uint64): 5; −0.5 truncates to 0; −2.5 to −2, whose x86-64 bits are
// 2^64 − 2 (NO_VAL64, so sacct prints no billing= for it) and which the
// jobs table holds as the int64 −2; −3.5 to −3, 2^64 − 3, which sacct
// prints as 18446744073709551613; −1 to 2^64 − 1, INFINITE64, which sacct
// prints as NONE (slurmdb_make_tres_string_from_simple). The sacct rows
// carry what sacct prints, and those two rows are ingested, not refused
// as damaged.
func TestNegativeBillingWeights(t *testing.T) {
	t.Parallel()
	const rows = "3001|3001|test24_1|normal|normal|AccountB|User1|2025-01-01T00:00:00|2025-01-01T00:00:00|2025-01-01T01:00:00|01:00:00|COMPLETED|4|billing=5,cpu=4,mem=2G,node=1\n" +
		"3002|3002|test24_1|normal|normal|AccountC|User2|2025-01-01T00:00:00|2025-01-01T00:00:00|2025-01-01T01:00:00|01:00:00|COMPLETED|1|cpu=1,mem=4G,node=1\n" +
		"3003|3003|test24_1|normal|normal|AccountC|User3|2025-01-01T00:00:00|2025-01-01T00:00:00|2025-01-01T01:00:00|01:00:00|COMPLETED|1|cpu=1,mem=8G,node=1\n" +
		"3004|3004|test24_1|normal|normal|AccountB|User1|2025-01-01T00:00:00|2025-01-01T00:00:00|2025-01-01T01:00:00|01:00:00|COMPLETED|1|billing=18446744073709551613,cpu=1,mem=10G,node=1\n" +
		"3005|3005|test24_1|normal|normal|AccountC|User2|2025-01-01T00:00:00|2025-01-01T00:00:00|2025-01-01T01:00:00|01:00:00|COMPLETED|1|billing=NONE,cpu=1,mem=5G,node=1\n"
	dir, files := siteWith(t, rows)
	conf := filepath.Join(dir, "slurm.conf")
	b, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	const line = "PartitionName=normal Nodes=ALL Default=YES"
	if !strings.Contains(string(b), line+"\n") {
		t.Fatalf("slurm.conf lacks %q", line)
	}
	b = []byte(strings.Replace(string(b), line+"\n", line+` TRESBillingWeights="CPU=1.5,Mem=-0.5G"`+"\n", 1))
	if err := os.WriteFile(conf, b, 0o644); err != nil {
		t.Fatal(err)
	}
	in := siteInputs(t, dir, files...)
	if w := strings.Join(in.Conf.Warnings, "\n"); !strings.Contains(w, `TRESBillingWeights="CPU=1.5,Mem=-0.5G" of partition normal: negative weight Mem=-0.5G (mem=-0.00048828125 per MiB)`) {
		t.Errorf("slurm.conf warnings %q, want the negative weight named", w)
	}
	hist := t.TempDir()
	if _, err := pipeline.Run(context.Background(), in, runOpts(hist, time.Time{})); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2025, 1, 1, 1, 0, 0, 0, time.UTC)
	u := rawUsage(t, hist, "test24_1", at)
	for user, want := range map[string]float64{"User1": 5400, "User2": -5400, "User3": -9000} {
		if u[user] != want {
			t.Errorf("RawUsage(%s) = %v, want %v", user, u[user], want)
		}
	}
	h, err := history.Open(hist)
	if err != nil {
		t.Fatal(err)
	}
	type bill struct {
		b  float64
		bs int64
	}
	want := map[int64]bill{3001: {5, 5}, 3002: {-0.5, 0}, 3003: {-2.5, -2}, 3004: {-3.5, -3}, 3005: {-1, -1}}
	n := 0
	for _, m := range partitionMonths(t, h, schemas.TableJobs, "test24_1") {
		var jobs []record.JobRow
		if err := h.ReadPartition(schemas.TableJobs, "test24_1", m, &jobs); err != nil {
			t.Fatal(err)
		}
		for _, r := range jobs {
			n++
			if w := want[r.JobIDRaw]; r.Billing != w.b || r.BillingSlurm != w.bs {
				t.Errorf("job %d: billing %v, billing_slurm %d; want %v, %d", r.JobIDRaw, r.Billing, r.BillingSlurm, w.b, w.bs)
			}
		}
	}
	if n != len(want) {
		t.Errorf("%d job rows, want %d", n, len(want))
	}
}
