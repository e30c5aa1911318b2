package billing

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
)

// docTracked is the configured TRES list of the hand-worked billing
// vectors (the AccountingStorageTRES part; the always-on TRES are implied).
var docTracked = []string{"bb/datawarp", "gres/gpu", "gres/gpu:a100", "license/lic1"}

func TestParseWeights(t *testing.T) {
	t.Parallel()
	// Expected per-base-unit values are worked out by hand from Slurm's
	// _tres_weight_item and get_convert_unit_val: mem and bb/*
	// have base MiB (a suffix above M divides by 1024 per step, K and M
	// change nothing); every other TRES is a count (K ÷1024, M ÷1024², …).
	tests := []struct {
		in   string
		want Weights
	}{
		// Mem=0.25G per MiB: 0.25/1024 = 0.000244140625.
		{"CPU=1.0,Mem=0.25G,GRES/gpu=2.0,license/lic1=1.5", Weights{{"cpu", 1}, {"mem", 0.000244140625}, {"gres/gpu", 2}, {"license/lic1", 1.5}}},
		{"CPU=1.0,Mem=0.25G", Weights{{"cpu", 1}, {"mem", 0.000244140625}}},
		// mem suffixes (_tres_weight_item, get_convert_unit_val).
		{"Mem=0.25", Weights{{"mem", 0.25}}},
		{"Mem=0.25M", Weights{{"mem", 0.25}}},
		{"mem=0.25m", Weights{{"mem", 0.25}}},
		{"Mem=256K", Weights{{"mem", 256}}},         // K is below MiB: no-op
		{"Mem=1T", Weights{{"mem", 1.0 / 1048576}}}, // 1024² MiB per TiB
		{"Mem=1P", Weights{{"mem", 1.0 / 1073741824}}},
		{"Mem=2g", Weights{{"mem", 2.0 / 1024}}},
		// Slurm reads only the first character after the number.
		{"Mem=0.25GB", Weights{{"mem", 0.000244140625}}},
		// bb/* has base MiB like mem.
		{"bb/datawarp=1G", Weights{{"bb/datawarp", 1.0 / 1024}}},
		{"BB/datawarp=1K", Weights{{"bb/datawarp", 1}}},
		// count TRES: any suffix divides by 1024^n.
		{"CPU=1K", Weights{{"cpu", 1.0 / 1024}}},
		{"cpu=1M", Weights{{"cpu", 1.0 / 1048576}}},
		{"CPU=3G", Weights{{"cpu", 3.0 / (1 << 30)}}},
		{"Node=1T", Weights{{"node", 1.0 / (1 << 40)}}},
		{"GRES/gpu=1P", Weights{{"gres/gpu", 1.0 / (1 << 50)}}},
		{"fs/disk=1G", Weights{{"fs/disk", 1.0 / (1 << 30)}}},
		{"VMem=2k", Weights{{"vmem", 2.0 / 1024}}},
		{"Pages=1", Weights{{"pages", 1}}},
		// strtod numbers: sign, fraction, exponent.
		{"CPU=-1.5", Weights{{"cpu", -1.5}}},
		{"CPU=.5", Weights{{"cpu", 0.5}}},
		{"CPU=5.", Weights{{"cpu", 5}}},
		{"CPU=+2", Weights{{"cpu", 2}}},
		{"CPU=1e-3", Weights{{"cpu", 0.001}}},
		{"CPU=2.5E2", Weights{{"cpu", 250}}},
		{"Mem=-0.5G", Weights{{"mem", -0.5 / 1024}}},
		{"CPU=-0.25,Mem=-2G", Weights{{"cpu", -0.25}, {"mem", -2.0 / 1024}}},
		// strtod reads hexadecimal too (glibc strtod("0x10") = 16, checked
		// with a C program on x86-64): _tres_weight_item takes it.
		{"CPU=0x10", Weights{{"cpu", 16}}},
		{"CPU=-0x10", Weights{{"cpu", -16}}},
		{"CPU=0x1.8p1", Weights{{"cpu", 3}}},
		{"CPU=0x.8", Weights{{"cpu", 0.5}}},
		{"cpu=0X1P+2K", Weights{{"cpu", 4.0 / 1024}}},
		// An exact subnormal: glibc's strtod leaves errno 0 (no underflow
		// exception for an exact result), so slurmctld takes it.
		{"CPU=0x1p-1074", Weights{{"cpu", 0x1p-1074}}},
		{"CPU=2.2250738585072014e-308", Weights{{"cpu", 0x1p-1022}}},
		// An exact 0 is no underflow: "0e-400" is 0 with errno 0.
		{"CPU=0e-400", Weights{{"cpu", 0}}},
		// No number before a unit: strtod converts nothing and returns 0,
		// val_unit is "G", get_convert_unit_val(MiB, 'G') = 1024, so the
		// weight is 0/1024 = 0 (_tres_weight_item).
		{"Mem=G", Weights{{"mem", 0}}},
		{"CPU=k", Weights{{"cpu", 0}}},
		// case-insensitive type and name; typed GRES keeps its type.
		{"gReS/GPU:A100=20", Weights{{"gres/gpu:a100", 20}}},
		{"License/MATLAB=3", Weights{{"license/matlab", 3}}},
		// billing weight parsed and dropped.
		{"CPU=1,billing=3", Weights{{"cpu", 1}}},
		{"Billing=7", nil},
		// last repeat wins (Slurm overwrites weights[tres_id]).
		{"CPU=1,cpu=2", Weights{{"cpu", 2}}},
		// empty items are skipped (strtok), blanks around items ignored.
		{",CPU=1,, Mem=1 ,", Weights{{"cpu", 1}, {"mem", 1}}},
		{"", nil},
		{"  ", nil},
		// summation order, slurmctld's TRES array: the static TRES by id
		// (cpu 1, mem 2, node 4, fs/disk 6), then the others by type
		// (bb < gres < license), then name.
		{"license/b=1,gres/gpu=1,node=1,bb/x=1,mem=1,cpu=1,fs/disk=1,gres/gpu:a100=1", Weights{
			{"cpu", 1}, {"mem", 1}, {"node", 1}, {"fs/disk", 1}, {"bb/x", 1}, {"gres/gpu", 1}, {"gres/gpu:a100", 1}, {"license/b", 1},
		}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.in), func(t *testing.T) {
			got, err := ParseWeights(tt.in, nil)
			if err != nil {
				t.Errorf("ParseWeights(%q) error: %v", tt.in, err)
				return
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseWeights(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseWeightsErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		tracked []string
		want    error  // sentinel
		msg     string // substring of the message
	}{
		{"energy=1", nil, ErrEnergy, `item "energy=1": energy cannot be weighted`},
		{"Energy=0.5", docTracked, ErrEnergy, "NO_VAL64"},
		{"CPU", nil, ErrSyntax, `item "CPU": no '='`},
		{"CPU=", nil, ErrSyntax, "no weight after '='"},
		{"=1", nil, ErrSyntax, "no TRES before '='"},
		{"CPU=abc", nil, ErrNumber, `"abc"`},
		{"CPU=-", nil, ErrNumber, `"-"`},
		// strtod reads infinities and NaN (errno 0) and slurmctld takes
		// them, but a job's billing is then ±inf, or NaN for a count of 0
		// (0 × inf): refused as no usage can be computed.
		{"CPU=inf", nil, ErrNumber, `"inf"`},
		{"CPU=-Infinity", nil, ErrNumber, `"-Infinity"`},
		{"CPU=nan", nil, ErrNumber, `"nan"`},
		{"CPU=nan(0x12)", nil, ErrNumber, `"nan(0x12)"`},
		// strtod sets ERANGE and _tres_weight_item fails, so slurmctld
		// refuses the line: overflow, underflow to 0, an inexact
		// subnormal (glibc: strtod("1e-310") = 1e-310 with errno 34).
		{"CPU=1e999", nil, ErrNumber, "out of range"},
		{"CPU=0x1p1024", nil, ErrNumber, "out of range"},
		{"CPU=1e-400", nil, ErrNumber, "underflows"},
		{"CPU=1e-310", nil, ErrNumber, "underflows"},
		{"CPU=-0x1.0000000000001p-1060", nil, ErrNumber, "underflows"},
		{"CPU=1X", nil, ErrUnit, `have "X" in "1X"`},
		{"CPU=1 K", nil, ErrUnit, `have " "`},
		{"CPU=1e", nil, ErrUnit, `have "e"`},
		// "0x" without a hexadecimal digit: strtod reads the 0 alone.
		{"CPU=0x", nil, ErrUnit, `have "x"`},
		{"CPU=0xg", nil, ErrUnit, `have "x"`},
		{"foo=1", nil, ErrUnknownType, `type "foo"`},
		{"gres=1", nil, ErrUnknownType, "gres needs a name"},
		{"gres/=1", nil, ErrUnknownType, "gres needs a name"},
		{"cpu/x=1", nil, ErrUnknownType, "cpu takes no /NAME"},
		// tracked check (_get_tres_id): typed GRES must be listed itself.
		{"GRES/gpu=2", []string{"gres/gpu:a100"}, ErrNotTracked, `"gres/gpu": TRES is not tracked`},
		{"fs/lustre=1", []string{}, ErrNotTracked, `"fs/lustre"`},
		{"license/lic2=1", docTracked, ErrNotTracked, `"license/lic2"`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			w, err := ParseWeights(tt.in, tt.tracked)
			if err == nil {
				t.Errorf("ParseWeights(%q) = %v, want error %v", tt.in, w, tt.want)
				return
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("ParseWeights(%q) error %v, want errors.Is %v", tt.in, err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("ParseWeights(%q) error %q, want it to contain %q", tt.in, err, tt.msg)
			}
			var we *WeightsError
			if !errors.As(err, &we) || we.Input != tt.in {
				t.Errorf("ParseWeights(%q) error %v, want a *WeightsError naming the input", tt.in, err)
			}
		})
	}
}

func TestParseWeightsTracked(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		tracked []string
	}{
		{"GRES/gpu=2", []string{"GRES/GPU"}},
		{"gres/gpu:a100=2", docTracked},
		{"fs/disk=1,vmem=1,pages=1,node=1,billing=1", []string{}}, // always tracked
		{"CPU=1,Mem=1G", nil},
		{"bb/datawarp=1", docTracked},
		{"license/lic1=1", []string{" License/LIC1 "}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if _, err := ParseWeights(tt.in, tt.tracked); err != nil {
				t.Errorf("ParseWeights(%q, %q) error: %v", tt.in, tt.tracked, err)
			}
		})
	}
}

func TestParseWeightsReportsAllItems(t *testing.T) {
	t.Parallel()
	in := "foo=1,CPU=x,Mem=0.25G,energy=2,GRES/gpu=1Q"
	_, err := ParseWeights(in, nil)
	var we *WeightsError
	if !errors.As(err, &we) {
		t.Fatalf("ParseWeights(%q) error %v, want *WeightsError", in, err)
	}
	var items []string
	for _, it := range we.Items {
		items = append(items, it.Item)
	}
	want := []string{"foo=1", "CPU=x", "energy=2", "GRES/gpu=1Q"}
	if !reflect.DeepEqual(items, want) {
		t.Errorf("ParseWeights(%q) bad items = %q, want %q", in, items, want)
	}
	for _, sentinel := range []error{ErrUnknownType, ErrNumber, ErrEnergy, ErrUnit} {
		if !errors.Is(err, sentinel) {
			t.Errorf("ParseWeights(%q) error %v, want errors.Is %v", in, err, sentinel)
		}
	}
	wantMsg := `TRESBillingWeights="foo=1,CPU=x,Mem=0.25G,energy=2,GRES/gpu=1Q": item "foo=1": `
	if !strings.HasPrefix(err.Error(), wantMsg) {
		t.Errorf("ParseWeights(%q) error %q, want prefix %q", in, err, wantMsg)
	}
}

func TestWeightsStringRoundTrip(t *testing.T) {
	t.Parallel()
	in := "CPU=1.0,Mem=0.25G,GRES/gpu=2.0,license/lic1=1.5,node=-3e-7"
	w, err := ParseWeights(in, nil)
	if err != nil {
		t.Fatal(err)
	}
	const want = "cpu=1,mem=0.000244140625,node=-3e-07,gres/gpu=2,license/lic1=1.5"
	if got := w.String(); got != want {
		t.Errorf("Weights.String() = %q, want %q", got, want)
	}
	back, err := ParseWeights(w.String(), nil)
	if err != nil || !reflect.DeepEqual(back, w) {
		t.Errorf("ParseWeights(%q) = %v, %v, want %v", w.String(), back, err, w)
	}
	if v, ok := w.Get("GRES/GPU"); !ok || v != 2 {
		t.Errorf("Weights.Get(GRES/GPU) = %v, %v, want 2, true", v, ok)
	}
	if v, ok := w.Get("vmem"); ok {
		t.Errorf("Weights.Get(vmem) = %v, %v, want 0, false", v, ok)
	}
}

func TestModeFromFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		flags []string
		want  Mode
	}{
		{nil, Sum},
		{[]string{"NO_NORMAL_TRES"}, Sum},
		// testdata/slurmconf/slurm.conf_aalto_ansible_role_template_FAIR_TREE_MAX_TRES.conf.j2
		// (AaltoSciComp/ansible_role_slurm, files/slurm.conf.j2)
		{[]string{"FAIR_TREE", "SMALL_RELATIVE_TO_TIME", "MAX_TRES"}, MaxTRES},
		{[]string{"max_tres"}, MaxTRES},
		{[]string{"MAX_TRES_GRES"}, MaxTRESGRES},
		{[]string{"Max_Tres_Gres"}, MaxTRESGRES},
		// both written: MAX_TRES_GRES wins (it is tested first, as Slurm does).
		{[]string{"MAX_TRES", "MAX_TRES_GRES"}, MaxTRESGRES},
		{[]string{"MAX_TRES_GRES", "MAX_TRES"}, MaxTRESGRES},
	}
	for _, tt := range tests {
		t.Run(cmp.Or(strings.Join(tt.flags, ","), "no flags"), func(t *testing.T) {
			if got := ModeFromFlags(tt.flags); got != tt.want {
				t.Errorf("ModeFromFlags(%q) = %v, want %v", tt.flags, got, tt.want)
			}
		})
	}
}

func TestTruncate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		b    float64
		want int64
	}{
		{"half truncated toward zero", 4.5, 4},
		{"just under one truncated toward zero", 0.9999, 0},
		{"Σ: 16 CPUs + 1 GiB × 0.25", 16.25, 16},
		{"Σ: 16 CPUs + 60 GiB × 0.25", 31, 31},
		{"negative: x86-64 bits of Slurm's uint64, see Truncate", -4.5, -4},
		{"negative half toward zero", -0.5, 0},
		{"NaN", math.NaN(), 0},
		{"above int64", 1e19, math.MaxInt64},
		{"below int64", -1e19, math.MinInt64},
	}
	out := make([]int64, 1)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			Truncate(out, []float64{tt.b})
			if out[0] != tt.want {
				t.Errorf("Truncate(%v) = %v, want %v", tt.b, out[0], tt.want)
			}
		})
	}
}

func TestUsageFactor(t *testing.T) {
	t.Parallel()
	// _apply_new_usage: q = UsageFactor if >= 0, else 1.
	tests := []struct {
		name    string
		f, want float64
	}{
		{"double", 2, 2},
		{"half", 0.5, 0.5},
		{"free", 0, 0},
		{"negative means 1", -1, 1},
		{"NaN means 1", math.NaN(), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := UsageFactor(tt.f); got != tt.want {
				t.Errorf("UsageFactor(%v) = %v, want %v", tt.f, got, tt.want)
			}
		})
	}
	out := make([]float64, 3)
	UsageFactors(out, []int32{1, -1, 0}, []float64{0.5, 2})
	if want := []float64{2, 1, 0.5}; !reflect.DeepEqual(out, want) {
		t.Errorf("UsageFactors = %v, want %v", out, want)
	}
}
