package billing

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// bill runs Billable and Truncate for one job in a one-partition table.
func bill(t *testing.T, weights string, flags, tracked []string, alloc map[string]float64) (float64, int64) {
	t.Helper()
	tab, err := Compile([]Partition{{Name: "p", TRESBillingWeights: weights}}, flags, tracked)
	if err != nil {
		t.Fatalf("Compile(%q): %v", weights, err)
	}
	dense := tab.DenseTRES()
	cols := make([][]float64, len(dense))
	for j, tres := range dense {
		cols[j] = []float64{alloc[tres]} // absent TRES count 0, as in the dense columns
	}
	b := []float64{-99}
	Billable(b, []int32{0}, cols, tab)
	bs := []int64{-99}
	Truncate(bs, b)
	return b[0], bs[0]
}

// TestBillableDoc checks billing vectors worked by hand from Slurm's
// calc_job_billable_tres and assoc_mgr_tres_weighted: the billable double
// (Σ or max of weight × allocated count) and the truncated billing= integer.
func TestBillableDoc(t *testing.T) {
	t.Parallel()
	const w4 = "CPU=1.0,Mem=0.25G,GRES/gpu=2.0,license/lic1=1.5"
	const w2 = "CPU=1.0,Mem=0.25G"
	sum, maxT, maxG := []string(nil), []string{"MAX_TRES"}, []string{"MAX_TRES_GRES"}
	type m = map[string]float64
	tests := []struct {
		row     string
		flags   []string
		weights string
		alloc   m
		want    float64
		wantInt int64
	}{
		{"B1 no weights: the CPU count", sum, "", m{"cpu": 4, "mem": 16384, "node": 1, "gres/gpu": 1}, 4, 4},
		{"B2 SUM cpu and mem", sum, w4, m{"cpu": 1, "mem": 8192, "node": 1}, 3, 3},
		{"B3 SUM with a license, truncated", sum, w4, m{"cpu": 1, "mem": 8192, "node": 1, "license/lic1": 1}, 4.5, 4},
		{"B4 SUM with a license, whole", sum, w4, m{"cpu": 1, "mem": 10240, "node": 1, "license/lic1": 1}, 5, 5},
		{"B5 MAX_TRES cpu and mem", maxT, w4, m{"cpu": 1, "mem": 8192, "node": 1}, 2, 2},
		{"B6 MAX_TRES license summed outside the max", maxT, w4, m{"cpu": 1, "mem": 8192, "node": 1, "license/lic1": 1}, 3.5, 3},
		{"B7 MAX_TRES_GRES cpu and mem", maxG, w4, m{"cpu": 1, "mem": 8192, "node": 1}, 2, 2},
		{"B8 MAX_TRES_GRES gpu summed outside the max", maxG, w4, m{"cpu": 1, "mem": 8192, "node": 1, "gres/gpu": 1}, 4, 4},
		{"B9 MAX_TRES one gpu in the max", maxT, w4, m{"cpu": 1, "mem": 8192, "node": 1, "gres/gpu": 1}, 2, 2},
		{"B10 MAX_TRES two gpus in the max", maxT, w4, m{"cpu": 1, "mem": 8192, "node": 1, "gres/gpu": 2}, 4, 4},
		{"B11 SUM 1 CPU and 60 GiB", sum, w2, m{"cpu": 1, "mem": 61440, "node": 1}, 16, 16},
		{"B12 SUM 16 CPUs and 1 GiB, truncated", sum, w2, m{"cpu": 16, "mem": 1024, "node": 1}, 16.25, 16},
		{"B13 SUM 16 CPUs and 60 GiB", sum, w2, m{"cpu": 16, "mem": 61440, "node": 1}, 31, 31},
		{"B14 MAX_TRES 1 CPU and 60 GiB", maxT, w2, m{"cpu": 1, "mem": 61440, "node": 1}, 15, 15},
		{"B15 MAX_TRES 15 CPUs and 1 GiB", maxT, w2, m{"cpu": 15, "mem": 1024, "node": 1}, 15, 15},
		{"B16 MAX_TRES 16 CPUs and 64 GiB", maxT, w2, m{"cpu": 16, "mem": 65536, "node": 1}, 16, 16},
	}
	for _, tt := range tests {
		t.Run(tt.row, func(t *testing.T) {
			b, bs := bill(t, tt.weights, tt.flags, docTracked, tt.alloc)
			if b != tt.want || bs != tt.wantInt {
				t.Errorf("%s: Billable(%s, %q, %v) = %v (billing=%d), want %v (billing=%d)",
					tt.row, ModeFromFlags(tt.flags), tt.weights, tt.alloc, b, bs, tt.want, tt.wantInt)
			}
		})
	}
}

// TestBillableSumVersusMaxTRES checks that the same three jobs bill
// differently as a sum and with PriorityFlags=MAX_TRES, with the examples of
// Slurm's multifactor priority page
// (SchedMD/slurm doc/html/priority_multifactor.shtml, TRESBillingWeights
// section): partition CPU=1.0,Mem=0.25G on 16-CPU 64 GB nodes. The page's
// MAX_TRES table uses 15 CPUs for Job2 and 64 GB for Job3, unlike its SUM
// table; both are kept as written there.
func TestBillableSumVersusMaxTRES(t *testing.T) {
	t.Parallel()
	const gb = 1024 // MiB
	type m = map[string]float64
	tests := []struct {
		job   string
		flags []string
		alloc m
		want  float64
	}{
		{"Job1 SUM (1*1.0)+(60*0.25)", nil, m{"cpu": 1, "mem": 60 * gb}, 16},
		{"Job2 SUM (16*1.0)+(1*0.25)", nil, m{"cpu": 16, "mem": 1 * gb}, 16.25},
		{"Job3 SUM (16*1.0)+(60*0.25)", nil, m{"cpu": 16, "mem": 60 * gb}, 31},
		{"Job1 MAX((1*1.0),(60*0.25))", []string{"MAX_TRES"}, m{"cpu": 1, "mem": 60 * gb}, 15},
		{"Job2 MAX((15*1.0),(1*0.25))", []string{"MAX_TRES"}, m{"cpu": 15, "mem": 1 * gb}, 15},
		{"Job3 MAX((16*1.0),(64*0.25))", []string{"MAX_TRES"}, m{"cpu": 16, "mem": 64 * gb}, 16},
	}
	for _, tt := range tests {
		t.Run(tt.job, func(t *testing.T) {
			if b, _ := bill(t, "CPU=1.0,Mem=0.25G", tt.flags, nil, tt.alloc); b != tt.want {
				t.Errorf("%s: Billable = %v, want %v", tt.job, b, tt.want)
			}
		})
	}
}

// TestBillableHand checks cases worked out by hand from _tres_weight_item and assoc_mgr_tres_weighted; the
// arithmetic is in each comment.
func TestBillableHand(t *testing.T) {
	t.Parallel()
	sum, maxT, maxG := []string(nil), []string{"MAX_TRES"}, []string{"MAX_TRES_GRES"}
	type m = map[string]float64
	const typed = "CPU=1,Mem=0.5G,GRES/gpu=10,GRES/gpu:a100=20"
	typedJob := m{"cpu": 8, "mem": 65536, "node": 1, "gres/gpu": 2, "gres/gpu:a100": 2}
	const lic = "CPU=1,license/matlab=3,license/comsol=0.5"
	licJob := m{"cpu": 4, "license/matlab": 2, "license/comsol": 3}
	const nodeW = "node=10,cpu=0.5,mem=1G"
	nodeJob := m{"node": 4, "cpu": 64, "mem": 16384}
	tests := []struct {
		name    string
		flags   []string
		weights string
		alloc   m
		want    float64
		wantInt int64
	}{
		// Typed GPUs, both gres/gpu and gres/gpu:a100 weighted and allocated
		// (assoc_mgr_tres_weighted: no de-duplication). v: cpu 8·1=8, mem 65536·0.5/1024=32,
		// gres/gpu 2·10=20, gres/gpu:a100 2·20=40.
		{"typed gpu SUM 8+32+20+40", sum, typed, typedJob, 100, 100},
		{"typed gpu MAX_TRES max(8,32,20,40)", maxT, typed, typedJob, 40, 40},
		{"typed gpu MAX_TRES_GRES max(8,32)+20+40", maxG, typed, typedJob, 92, 92},
		// Only the typed GRES weighted: 8 + 2·20 = 48 (gres/gpu unweighted).
		{"typed only SUM 8+40", sum, "CPU=1,GRES/gpu:a100=20", typedJob, 48, 48},
		// Licenses are global: always summed. 4 + 2·3 + 3·0.5 = 11.5.
		{"licenses SUM 4+6+1.5", sum, lic, licJob, 11.5, 11},
		{"licenses MAX_TRES max(4)+6+1.5", maxT, lic, licJob, 11.5, 11},
		{"licenses MAX_TRES_GRES max(4)+6+1.5", maxG, lic, licJob, 11.5, 11},
		// A hand-worked case: 4 nodes, 64 CPUs, 16 GiB. v: node 40, cpu 32, mem 16.
		{"4 nodes MAX_TRES max(32,16,40)", maxT, nodeW, nodeJob, 40, 40},
		{"4 nodes MAX_TRES_GRES max(32,16,40)", maxG, nodeW, nodeJob, 40, 40},
		{"4 nodes SUM 40+32+16", sum, nodeW, nodeJob, 88, 88},
		// Unit suffixes applied to a job.
		{"Mem=256K is 256/MiB: 4·256", sum, "Mem=256K", m{"cpu": 1, "mem": 4}, 1024, 1024},
		{"Mem=1T: 1 TiB = 1048576 MiB → 1", sum, "Mem=1T", m{"cpu": 1, "mem": 1048576}, 1, 1},
		{"Mem=2G: 3 GiB → 6", sum, "Mem=2G", m{"cpu": 1, "mem": 3072}, 6, 6},
		{"CPU=1K: 2048 CPUs → 2", sum, "CPU=1K", m{"cpu": 2048}, 2, 2},
		{"bb/datawarp=1G: 5 GiB → 5", sum, "bb/datawarp=1G", m{"bb/datawarp": 5120}, 5, 5},
		{"fs/disk=2M: 2^21 → 4", sum, "fs/disk=2M", m{"fs/disk": 1 << 21}, 4, 4},
		// Negative and fractional weights: 4·1.5 + 2048·(−0.5/1024) = 6 − 1.
		{"negative mem weight 6-1", sum, "CPU=1.5,Mem=-0.5G", m{"cpu": 4, "mem": 2048}, 5, 5},
		// Negative total: 3·−1.5 = −4.5, truncated toward zero.
		{"negative total", sum, "CPU=-1.5", m{"cpu": 3}, -4.5, -4},
		// MAX_TRES over negatives: unweighted node (v = 0) is in the max, so
		// max(−4, −1, 0) = 0; plus the global license 1·2.
		{"MAX_TRES negative node-level", maxT, "CPU=-1,Mem=-1G,license/lic1=2", m{"cpu": 4, "mem": 1024, "license/lic1": 1}, 2, 2},
		// 0.25·3 + 0.1·7 in doubles: 0.1·7 rounds up to 0.7000000000000001;
		// 0.75 + that is exactly halfway between 1.45 and 1.4500000000000002
		// and rounds to even, 1.4500000000000002; truncated 1.
		{"fractional", sum, "CPU=0.25,node=0.1", m{"cpu": 3, "node": 7}, 1.4500000000000002, 1},
		// A billing weight alone leaves Slurm an all-zero weight array: B = 0,
		// not the CPU count.
		{"billing weight only", sum, "billing=2", m{"cpu": 8}, 0, 0},
		// No weights: the CPU count whatever the mode (calc_job_billable_tres).
		{"no weights MAX_TRES", maxT, "", m{"cpu": 6, "mem": 1e6}, 6, 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, bs := bill(t, tt.weights, tt.flags, nil, tt.alloc)
			if b != tt.want || bs != tt.wantInt {
				t.Errorf("%s: Billable(%s, %q, %v) = %v (billing=%d), want %v (billing=%d)",
					tt.name, ModeFromFlags(tt.flags), tt.weights, tt.alloc, b, bs, tt.want, tt.wantInt)
			}
		})
	}
}

// TestBillableMixedPartitions runs one kernel call over several partitions
// and an unknown one, which must be left untouched.
func TestBillableMixedPartitions(t *testing.T) {
	t.Parallel()
	tab, err := Compile([]Partition{
		{Name: "gpu", TRESBillingWeights: "CPU=1.0,Mem=0.25G,GRES/gpu=2.0,license/lic1=1.5"},
		{Name: "cpu"},
		{Name: "big", TRESBillingWeights: "CPU=1.0,Mem=0.25G"},
	}, nil, docTracked)
	if err != nil {
		t.Fatal(err)
	}
	wantDense := []string{"cpu", "mem", "gres/gpu", "license/lic1"}
	if got := tab.DenseTRES(); !reflect.DeepEqual(got, wantDense) {
		t.Fatalf("DenseTRES() = %q, want %q", got, wantDense)
	}
	// Rows: B3 in gpu; B1 in cpu; B12 in big; unknown; B4 in gpu.
	part := []int32{tab.PartitionIndex("gpu"), tab.PartitionIndex("cpu"), tab.PartitionIndex("big"), tab.PartitionIndex("nope"), 0}
	cols := [][]float64{
		{1, 4, 16, 32, 1},             // cpu
		{8192, 16384, 1024, 0, 10240}, // mem
		{0, 1, 0, 0, 0},               // gres/gpu
		{1, 0, 0, 0, 1},               // license/lic1
	}
	out := []float64{-1, -1, -1, -7, -1}
	Billable(out, part, cols, tab)
	want := []float64{4.5, 4, 16.25, -7, 5}
	if !reflect.DeepEqual(out, want) {
		t.Errorf("Billable(mixed) = %v, want %v", out, want)
	}
}

func TestCompileErrors(t *testing.T) {
	t.Parallel()
	_, err := Compile([]Partition{
		{Name: "a", TRESBillingWeights: "CPU=1,energy=1"},
		{Name: "b", TRESBillingWeights: "GRES/gpu=2"},
		{Name: "a"},
		{Name: ""},
		{Name: "ok", TRESBillingWeights: "CPU=2"},
	}, nil, []string{"license/x"})
	if err == nil {
		t.Fatal("Compile(bad partitions) = nil error")
	}
	for _, want := range []string{
		`partition a: TRESBillingWeights="CPU=1,energy=1": item "energy=1": energy cannot be weighted`,
		`partition b: TRESBillingWeights="GRES/gpu=2": item "GRES/gpu=2": "gres/gpu": TRES is not tracked`,
		"partition a: defined twice",
		"partition #4: empty PartitionName",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Compile error %q, want it to contain %q", err, want)
		}
	}
	if !errors.Is(err, ErrEnergy) || !errors.Is(err, ErrNotTracked) {
		t.Errorf("Compile error %v, want errors.Is ErrEnergy and ErrNotTracked", err)
	}
	if strings.Contains(err.Error(), "partition ok") {
		t.Errorf("Compile error %q mentions the good partition", err)
	}
}

func TestTableAccessors(t *testing.T) {
	t.Parallel()
	tab, err := Compile([]Partition{{Name: "x", TRESBillingWeights: "node=1,license/a=2,Mem=1G"}, {Name: "y"}}, []string{"MAX_TRES"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tab.DenseTRES(), []string{"cpu", "mem", "node", "license/a"}; !reflect.DeepEqual(got, want) {
		t.Errorf("DenseTRES() = %q, want %q", got, want)
	}
	if got, want := tab.Partitions(), []string{"x", "y"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Partitions() = %q, want %q", got, want)
	}
	if tab.Mode() != MaxTRES {
		t.Errorf("Mode() = %v, want MAX_TRES", tab.Mode())
	}
	if w, cpu := tab.Weights(1); w != nil || !cpu {
		t.Errorf("Weights(y) = %v, %v, want nil, true", w, cpu)
	}
	if w, cpu := tab.Weights(0); w.String() != "mem=0.0009765625,node=1,license/a=2" || cpu {
		t.Errorf("Weights(x) = %v, %v, want mem=0.0009765625,node=1,license/a=2, false", w, cpu)
	}
	if i := tab.PartitionIndex("X"); i != -1 {
		t.Errorf("PartitionIndex(X) = %d, want -1 (names are case-sensitive)", i)
	}
}

// TestBillableMatchesFormula compares the kernels bit for bit with a literal
// transcription of assoc_mgr_tres_weighted (Slurm's loop: node max starting at 0 updated with
// MAX(m, v) = m > v ? m : v, global sum starting at 0, B = m + g) on random
// jobs and random weights, negative and fractional ones included.
func TestBillableMatchesFormula(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 11))
	names := []string{"cpu", "mem", "node", "bb/x", "gres/gpu", "gres/gpu:a100", "license/l", "vmem"}
	for trial := 0; trial < 200; trial++ {
		var parts []Partition
		for p := 0; p < 3; p++ {
			var items []string
			for _, n := range names {
				if r.IntN(2) == 0 {
					items = append(items, n+"="+strconv.FormatFloat((r.Float64()-0.3)*10, 'g', 6, 64))
				}
			}
			parts = append(parts, Partition{Name: strconv.Itoa(p), TRESBillingWeights: strings.Join(items, ",")})
		}
		for _, flags := range [][]string{nil, {"MAX_TRES"}, {"MAX_TRES_GRES"}} {
			tab, err := Compile(parts, flags, nil)
			if err != nil {
				t.Fatal(err)
			}
			dense := tab.DenseTRES()
			const n = 50
			part := make([]int32, n)
			cols := make([][]float64, len(dense))
			for j := range cols {
				cols[j] = make([]float64, n)
				for i := range cols[j] {
					cols[j][i] = float64(r.IntN(5000))
				}
			}
			for i := range part {
				part[i] = int32(r.IntN(3))
			}
			out := make([]float64, n)
			Billable(out, part, cols, tab)
			mode := ModeFromFlags(flags)
			for i := range out {
				w, cpuOnly := tab.Weights(part[i])
				want := cols[0][i]
				if !cpuOnly {
					m, g := 0.0, 0.0
					for j, tres := range dense {
						wt, _ := w.Get(tres)
						v := float64(cols[j][i] * wt)
						node := tres == "cpu" || tres == "mem" || tres == "node"
						gres := strings.HasPrefix(tres, "gres/")
						if (mode == MaxTRES && (node || gres)) || (mode == MaxTRESGRES && node) {
							if !(m > v) {
								m = v
							}
						} else {
							g += v
						}
					}
					want = m + g
				}
				if math.Float64bits(out[i]) != math.Float64bits(want) {
					t.Fatalf("%s %q row %d: Billable = %v, formula %v", mode, parts[part[i]].TRESBillingWeights, i, out[i], want)
				}
			}
		}
	}
}

// TestBillableNegative checks negative and fractional weights worked by
// hand from assoc_mgr_tres_weighted (src/common/assoc_mgr.c, the same at
// slurm-22-05-8-1, slurm-24-11-5-1 and slurm-26-05-3-1 but for
// MAX_TRES_GRES, 25.05 on): v = count × weight per TRES, the node max and
// the global sum both starting at +0, B = max + sum, in slurmctld's TRES
// order, whatever the sign. billing= is B truncated into a uint64
// (job_set_alloc_tres), on x86-64 the two's-complement bits of the
// truncated value, which Truncate gives as the int64 of the same bits.
func TestBillableNegative(t *testing.T) {
	t.Parallel()
	sum, maxT, maxG := []string(nil), []string{"MAX_TRES"}, []string{"MAX_TRES_GRES"}
	type m = map[string]float64
	const mixed = "CPU=2,GRES/gpu=-10,license/lic1=-1.5"
	mixedJob := m{"cpu": 4, "mem": 1024, "node": 1, "gres/gpu": 2, "license/lic1": 3}
	tests := []struct {
		name    string
		flags   []string
		weights string
		alloc   m
		want    float64
		wantInt int64
	}{
		// cpu 4·2 = 8, gres/gpu 2·−10 = −20, license 3·−1.5 = −4.5.
		// SUM: 8 − 20 − 4.5 = −16.5, truncated −16 (bits 2^64 − 16).
		{"SUM mixed signs, negative total", sum, mixed, mixedJob, -16.5, -16},
		// MAX_TRES: gres is node-level; max(8, mem 0, node 0, −20) = 8,
		// plus the global −4.5: 3.5, truncated 3.
		{"MAX_TRES negative gres loses the max", maxT, mixed, mixedJob, 3.5, 3},
		// MAX_TRES_GRES: max(8, 0, 0) = 8, plus gres −20 (billable_gres),
		// plus global −4.5: 8 − 20 − 4.5 = −16.5.
		{"MAX_TRES_GRES negative gres summed", maxG, mixed, mixedJob, -16.5, -16},
		// Every node-level v negative: MAX_TRES's max stays at its initial
		// 0 (and an unweighted node gives v = 0 anyway): B = 0.
		{"MAX_TRES all node-level negative", maxT, "CPU=-1,Mem=-1G,node=-3", m{"cpu": 2, "mem": 2048, "node": 1}, 0, 0},
		// 2·0.5 + 3·−0.75 = 1 − 2.25 = −1.25, truncated −1 (INFINITE64's
		// bits; sacct prints billing=NONE).
		{"SUM −1.25", sum, "CPU=0.5,GRES/gpu=-0.75", m{"cpu": 2, "gres/gpu": 3}, -1.25, -1},
		// 1 CPU, 5 GiB at CPU=1,Mem=-0.5G: 1 − 5120·0.5/1024 = 1 − 2.5 =
		// −1.5; −2.x would be NO_VAL64's bits: 1 CPU, 7 GiB = −2.5 → −2.
		{"SUM −1.5", sum, "CPU=1,Mem=-0.5G", m{"cpu": 1, "mem": 5120}, -1.5, -1},
		{"SUM −2.5", sum, "CPU=1,Mem=-0.5G", m{"cpu": 1, "mem": 7168}, -2.5, -2},
		// (−1, 0) truncates to 0, which a uint64 holds: defined in C.
		{"SUM −0.5", sum, "CPU=1,Mem=-0.5G", m{"cpu": 1, "mem": 3072}, -0.5, 0},
		// Fractional: 0.1·3 rounds to 0.30000000000000004 (0.1 is
		// 0.1000000000000000055511151231257827, ×3 exactly
		// 0.30000000000000001665, nearest double 0.3000000000000000444);
		// + 0.2·1 = 0.500000000000000055511151231257827021181583404541015625
		// exactly, the midpoint of 0.5 and 0.5 + 2^-53: ties to even, 0.5.
		{"fractional 0.1·3 + 0.2", sum, "CPU=0.1,node=0.2", m{"cpu": 3, "node": 1}, 0.5, 0},
		{"fractional 0.1·3", sum, "CPU=0.1", m{"cpu": 3}, 0.30000000000000004, 0},
		// Hexadecimal, as strtod reads it: 0x1.8p1 = 3 per CPU, −0x10 = −16
		// per license: 2·3 − 16 = −10.
		{"hexadecimal weights", sum, "CPU=0x1.8p1,license/lic1=-0x10", m{"cpu": 2, "license/lic1": 1}, -10, -10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, bs := bill(t, tt.weights, tt.flags, nil, tt.alloc)
			if b != tt.want || bs != tt.wantInt {
				t.Errorf("%s: Billable(%s, %q, %v) = %v (billing=%d), want %v (billing=%d)",
					tt.name, ModeFromFlags(tt.flags), tt.weights, tt.alloc, b, bs, tt.want, tt.wantInt)
			}
		})
	}
}

// TestBillableOneNegativePartition: one partition with a negative weight
// beside one without changes only its own jobs' billing. pos
// CPU=1,Mem=0.25G, neg CPU=1,Mem=-0.25G (−0.25/1024 per MiB):
//
//	4 CPUs, 8 GiB:  pos 4 + 8192·0.25/1024 = 4 + 2 = 6;  neg 4 − 2 = 2
//	1 CPU, 16 GiB:  pos 1 + 4 = 5;                        neg 1 − 4 = −3
func TestBillableOneNegativePartition(t *testing.T) {
	t.Parallel()
	tab, err := Compile([]Partition{
		{Name: "pos", TRESBillingWeights: "CPU=1,Mem=0.25G"},
		{Name: "neg", TRESBillingWeights: "CPU=1,Mem=-0.25G"},
	}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	pos, neg := tab.PartitionIndex("pos"), tab.PartitionIndex("neg")
	part := []int32{pos, neg, pos, neg}
	cols := [][]float64{{4, 4, 1, 1}, {8192, 8192, 16384, 16384}} // cpu, mem
	out := make([]float64, 4)
	Billable(out, part, cols, tab)
	trunc := make([]int64, 4)
	Truncate(trunc, out)
	if want := []float64{6, 2, 5, -3}; !reflect.DeepEqual(out, want) {
		t.Errorf("Billable = %v, want %v", out, want)
	}
	if want := []int64{6, 2, 5, -3}; !reflect.DeepEqual(trunc, want) {
		t.Errorf("Truncate = %v, want %v", trunc, want)
	}
}
