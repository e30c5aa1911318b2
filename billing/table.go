package billing

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/fairledger/fairledger/internal/release"
)

// Mode is how the weighted TRES values of a job are combined (Slurm's
// assoc_mgr_tres_weighted).
type Mode uint8

const (
	// Sum is Slurm's default: B = Σ count·weight over every TRES.
	Sum Mode = iota
	// MaxTRES is PriorityFlags=MAX_TRES: B = max over the node-level TRES
	// (cpu, mem, node, every gres/*) + Σ over the global ones (license/*,
	// bb/*, fs/*, vmem, pages, …).
	MaxTRES
	// MaxTRESGRES is PriorityFlags=MAX_TRES_GRES (Slurm ≥ 25.05): B = max
	// over cpu, mem, node + Σ over gres/* and the global TRES.
	MaxTRESGRES
)

// String returns the PriorityFlags spelling of the mode ("SUM" for Sum).
func (m Mode) String() string {
	switch m {
	case Sum:
		return "SUM"
	case MaxTRES:
		return "MAX_TRES"
	case MaxTRESGRES:
		return "MAX_TRES_GRES"
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// ModeFromFlags picks the mode from slurm.conf PriorityFlags the way
// slurmctld does: a case-insensitive substring search (xstrcasestr) for
// MAX_TRES_GRES first, then MAX_TRES. Like Slurm it therefore also matches
// these words inside longer ones.
func ModeFromFlags(priorityFlags []string) Mode {
	all := strings.ToUpper(strings.Join(priorityFlags, ","))
	switch {
	case strings.Contains(all, "MAX_TRES_GRES"):
		return MaxTRESGRES
	case strings.Contains(all, "MAX_TRES"):
		return MaxTRES
	}
	return Sum
}

// maxTRESGRES: PriorityFlags=MAX_TRES_GRES came with 25.05 (commit
// 3748dc30e6 "Add new MAX_TRES_GRES PriorityFlags option"; CHANGELOG
// 25.05.0rc1). Before, src/common/read_config.c only matches MAX_TRES, by
// substring, which the word MAX_TRES_GRES satisfies: that slurmctld bills
// it as MAX_TRES, without a message.
var maxTRESGRES = release.Series{Major: 25, Minor: 5}

// CheckRelease refuses a mode that Slurm release series rel does not have:
// MaxTRESGRES before maxTRESGRES, which that slurmctld bills as MaxTRES, so
// the site's slurm.conf should say MAX_TRES.
func (m Mode) CheckRelease(rel release.Series) error {
	if m == MaxTRESGRES && rel.Before(maxTRESGRES) {
		return fmt.Errorf("PriorityFlags=MAX_TRES_GRES: Slurm %s has no such flag (it came with %s); "+
			"its slurmctld matches the flag's name by substring and bills as MAX_TRES: write MAX_TRES", rel, maxTRESGRES)
	}
	return nil
}

// inMax reports whether a TRES takes part in the max under mode m (as
// opposed to being summed).
func (m Mode) inMax(tres string) bool {
	switch m {
	case MaxTRES:
		return tres == "cpu" || tres == "mem" || tres == "node" || strings.HasPrefix(tres, "gres/")
	case MaxTRESGRES:
		return tres == "cpu" || tres == "mem" || tres == "node"
	}
	return false
}

// Partition is what billing needs of one slurm.conf partition.
type Partition struct {
	// Name is the PartitionName, matched case-sensitively against sacct's
	// Partition as slurmctld does.
	Name string
	// TRESBillingWeights is the raw value with PartitionName=DEFAULT
	// inheritance already resolved; empty when the partition has none.
	TRESBillingWeights string
}

// Table is the compiled billing configuration of a cluster: one weight row
// per partition over the dense TRES columns the kernels read. It is
// immutable and safe for concurrent use.
type Table struct {
	mode      Mode
	names     []string
	byName    map[string]int32
	weights   []Weights
	noWeights []bool    // per partition: no TRESBillingWeights, B = CPU count
	dense     []string  // kernel column order; dense[0] == "cpu"
	inMax     []bool    // per dense column: in the max under mode
	w         []float64 // len(names)*len(dense), row p holds partition p's weights
	wMax      []float64 // w where inMax, else 0 (MAX modes only)
	wSum      []float64 // w where !inMax, else 0 (MAX modes only)
}

// Compile builds the Table for a cluster. parts are its partitions in any
// order (names must be unique and non-empty), priorityFlags its PriorityFlags
// (see ModeFromFlags), tracked its AccountingStorageTRES entries (nil skips
// the tracked check, see ParseWeights).
//
// A partition whose TRESBillingWeights is empty bills the CPU count. A
// non-empty string whose items all drop out (say "billing=2") still counts as
// weights, all zero, so its jobs bill 0: Slurm keeps the parsed weight array
// whenever the string is non-empty.
//
// Every problem of every partition is reported at once (errors.Join), each
// prefixed with its partition.
func Compile(parts []Partition, priorityFlags []string, tracked []string) (*Table, error) {
	set := trackedSet(tracked)
	t := &Table{
		mode:      ModeFromFlags(priorityFlags),
		names:     make([]string, 0, len(parts)),
		byName:    make(map[string]int32, len(parts)),
		weights:   make([]Weights, 0, len(parts)),
		noWeights: make([]bool, 0, len(parts)),
	}
	var errs []error
	seen := make(map[string]bool, len(parts))
	for i, p := range parts {
		if p.Name == "" {
			errs = append(errs, fmt.Errorf("partition #%d: empty PartitionName", i+1))
			continue
		}
		if seen[p.Name] {
			errs = append(errs, fmt.Errorf("partition %s: defined twice", p.Name))
			continue
		}
		seen[p.Name] = true
		w, err := parseWeights(p.TRESBillingWeights, set)
		if err != nil {
			errs = append(errs, fmt.Errorf("partition %s: %w", p.Name, err))
			continue
		}
		t.byName[p.Name] = int32(len(t.names))
		t.names = append(t.names, p.Name)
		t.weights = append(t.weights, w)
		t.noWeights = append(t.noWeights, strings.TrimSpace(p.TRESBillingWeights) == "")
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("compile billing table: %w", errors.Join(errs...))
	}

	col := map[string]int{"cpu": 0}
	t.dense = []string{"cpu"}
	for _, ws := range t.weights {
		for _, x := range ws {
			if _, ok := col[x.TRES]; !ok {
				col[x.TRES] = 0
				t.dense = append(t.dense, x.TRES)
			}
		}
	}
	sort.Slice(t.dense, func(i, j int) bool { return TRESLess(t.dense[i], t.dense[j]) })
	t.inMax = make([]bool, len(t.dense))
	for j, name := range t.dense {
		col[name] = j
		t.inMax[j] = t.mode.inMax(name)
	}
	nc := len(t.dense)
	t.w = make([]float64, len(t.names)*nc)
	for p, ws := range t.weights {
		for _, x := range ws {
			t.w[p*nc+col[x.TRES]] = x.PerUnit
		}
	}
	if t.mode != Sum {
		t.wMax = make([]float64, len(t.w))
		t.wSum = make([]float64, len(t.w))
		for k, v := range t.w {
			if t.inMax[k%nc] {
				t.wMax[k] = v
			} else {
				t.wSum[k] = v
			}
		}
	}
	return t, nil
}

// Mode returns the combination mode chosen from PriorityFlags.
func (t *Table) Mode() Mode { return t.mode }

// DenseTRES returns the canonical names of the TRES the kernels read, in
// column order: cpu first, then every TRES weighted by some partition, in
// summation order (see TRESLess). Ask the sacct reader for these as dense
// columns (schemas.DenseTRESColumn); Billable takes them in this order.
func (t *Table) DenseTRES() []string { return append([]string(nil), t.dense...) }

// Partitions returns the partition names in table-index order.
func (t *Table) Partitions() []string { return append([]string(nil), t.names...) }

// PartitionIndex returns the table index of a partition, or -1 when
// slurm.conf does not define it.
func (t *Table) PartitionIndex(name string) int32 {
	if i, ok := t.byName[name]; ok {
		return i
	}
	return -1
}

// Weights returns the parsed weights of partition i (nil when it has none)
// and whether it bills the CPU count for lack of TRESBillingWeights.
func (t *Table) Weights(i int32) (w Weights, cpuCount bool) {
	return append(Weights(nil), t.weights[i]...), t.noWeights[i]
}
