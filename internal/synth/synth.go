package synth

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"
)

// Options describe the synthetic cluster. The zero value of every field
// selects its documented default, so Options{Seed: 1} is a complete cluster.
type Options struct {
	// Seed drives all randomness (math/rand/v2 PCG streams); the same
	// Options produce byte-identical files.
	Seed int64
	// Cluster is the ClusterName; default "synth".
	Cluster string
	// Labs is the number of lab accounts; default 200. From 10 labs on, about
	// a third of them are grouped under two or three school accounts, and a
	// few labs give their users FairShare=parent.
	Labs int
	// UsersPerLab is the mean number of users per lab, default 6; the
	// distribution is skewed (many labs with 1–3 users, a few with 30).
	UsersPerLab int
	// Jobs is the number of allocation rows written by WriteSacct: every
	// plain job, array task, pending array range row, het component and
	// requeued run counts as one; step rows come on top. Default 10,000.
	Jobs int
	// From and To bound the submit (and so start) times; default
	// 2025-01-01..2025-04-01 UTC.
	From, To time.Time
	// Location is the zone sacct prints times in; default UTC.
	Location *time.Location
	// UnixTimes prints times as Unix seconds (SLURM_TIME_FORMAT=%s).
	UnixTimes bool
	// StepFraction is the probability that a started job also has step rows
	// (.batch, .extern, .0, ...); default 0.5. A negative value writes no steps.
	StepFraction float64
	// Now is when sacct was run: jobs submitted later do not exist, jobs still
	// running at Now are RUNNING with End=Unknown, jobs not started by Now are
	// PENDING. Default To.
	Now time.Time
}

// LongWindow returns Options for the decay and fair-share end-to-end tests:
// a year of jobs (2024-01-01..2025-01-01 UTC) on 40 labs, Unix times and no
// step rows, so that half-life decay and usage resets have room to act.
func LongWindow(seed int64) Options {
	return Options{
		Seed:         seed,
		Labs:         40,
		UsersPerLab:  4,
		Jobs:         50000,
		From:         time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC),
		To:           time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
		UnixTimes:    true,
		StepFraction: -1,
	}
}

// withDefaults fills in the documented defaults.
func (o Options) withDefaults() Options {
	if o.Cluster == "" {
		o.Cluster = "synth"
	}
	if o.Labs == 0 {
		o.Labs = 200
	}
	if o.UsersPerLab == 0 {
		o.UsersPerLab = 6
	}
	if o.Jobs == 0 {
		o.Jobs = 10000
	}
	if o.From.IsZero() {
		o.From = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	if o.To.IsZero() {
		o.To = time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC)
	}
	if o.Location == nil {
		o.Location = time.UTC
	}
	if o.StepFraction == 0 {
		o.StepFraction = 0.5
	}
	if o.StepFraction < 0 {
		o.StepFraction = 0
	}
	if o.Now.IsZero() {
		o.Now = o.To
	}
	return o
}

// Validate reports every problem with o, its defaults filled in, at once:
// what WriteDir and the Write methods would refuse.
func (o Options) Validate() error { return o.withDefaults().validate() }

// validate reports every problem with (defaulted) Options at once.
func (o Options) validate() error {
	var errs []error
	if o.Labs < 0 {
		errs = append(errs, fmt.Errorf("labs %d: must not be negative", o.Labs))
	}
	if o.UsersPerLab < 0 {
		errs = append(errs, fmt.Errorf("users per lab %d: must not be negative", o.UsersPerLab))
	}
	if o.Jobs < 0 {
		errs = append(errs, fmt.Errorf("jobs %d: must not be negative", o.Jobs))
	}
	if !o.To.After(o.From) {
		errs = append(errs, fmt.Errorf("time range %s..%s: To must be after From", o.From.Format(time.RFC3339), o.To.Format(time.RFC3339)))
	}
	if o.Now.Before(o.From) {
		errs = append(errs, fmt.Errorf("now %s: before From %s", o.Now.Format(time.RFC3339), o.From.Format(time.RFC3339)))
	}
	if o.StepFraction > 1 {
		errs = append(errs, fmt.Errorf("step fraction %g: above 1", o.StepFraction))
	}
	for _, c := range o.Cluster {
		if c == '|' || c == '\n' || c == ' ' {
			errs = append(errs, fmt.Errorf("cluster name %q: contains %q", o.Cluster, c))
			break
		}
	}
	return errors.Join(errs...)
}

// Partition is one partition of the synthetic cluster as slurm.conf
// declares it.
type Partition struct {
	// Name is the PartitionName.
	Name string
	// Nodes is the hostlist expression of its nodes, e.g. "sap[001-040]".
	Nodes string
	// MaxTime is the partition's time limit.
	MaxTime time.Duration
	// TRESBillingWeights is the value as written in slurm.conf; empty when
	// the partition has no weights (billing = CPU count).
	TRESBillingWeights string
	// Weights is TRESBillingWeights parsed per base unit (mem per MiB), in
	// the order written; nil when there are none.
	Weights []Weight

	nodeTypes []int     // indexes into Cluster.nodeTypes
	typeProb  []float64 // cumulative probability of each node type
	requeue   bool
	qos       string // usual QOS of its jobs
	short     bool   // only short jobs (test partition)
}

// QOS is one sacctmgr QOS record.
type QOS struct {
	Name        string  // QOS name
	UsageFactor float64 // multiplies the usage of its jobs (the q of docs/slurm-semantics.md §2.1)
	Flags       string  // e.g. "NoDecay"; empty for none
}

// nodeType is one homogeneous group of nodes.
type nodeType struct {
	hosts   string // hostlist expression
	prefix  string
	count   int
	cpus    int64
	memMiB  int64
	gpuType string // "" without GPUs
	gpus    int64
	feature string
	gresTyp string // "gres/gpu:<type>"
}

// account is one association account (school or lab).
type account struct {
	name        string
	parent      string // "" for root's children is "root"
	share       int64  // RawShares
	lineage     string
	parentUsers bool // users get FairShare=parent
}

// user is one user; it has an association in each of its accounts.
type user struct {
	name     string
	uid      int
	accounts []int // indexes into Cluster.accounts, primary first
	part     int   // preferred partition
	activity float64
}

// Cluster is a synthetic Slurm cluster built by New. It is immutable, so its
// Write methods may be called repeatedly (always producing the same bytes)
// and concurrently.
type Cluster struct {
	opt       Options
	nodeTypes []nodeType
	parts     []Partition
	partCum   []float64 // cumulative partition popularity
	qos       []QOS
	accounts  []account // schools first, then labs
	users     []user
	userCum   []float64 // cumulative user activity
}

// New builds the accounts, users, partitions and QOS of the cluster
// deterministically from o. Invalid Options are reported by the Write
// methods.
func New(o Options) *Cluster {
	o = o.withDefaults()
	c := &Cluster{opt: o}
	c.buildPartitions()
	c.qos = []QOS{
		{Name: "normal", UsageFactor: 1},
		{Name: "lowprio", UsageFactor: 0.5},
		{Name: "free", UsageFactor: 0},
		{Name: "nodecay", UsageFactor: 1, Flags: "NoDecay"},
	}
	if o.Labs > 0 && o.UsersPerLab > 0 {
		c.buildAccounts(rand.New(rand.NewPCG(uint64(o.Seed), streamAssoc)))
	}
	return c
}

// PCG stream selectors: each output has its own stream, so that changing
// how one file is generated never shifts the others.
const (
	streamAssoc = 0x5eed_a550c
	streamSacct = 0x5eed_5acc7
)

// Options returns the Options the cluster was built from, defaults filled in.
func (c *Cluster) Options() Options { return c.opt }

// Partitions returns a copy of the partitions in slurm.conf order.
func (c *Cluster) Partitions() []Partition { return slices.Clone(c.parts) }

// QOS returns a copy of the QOS records.
func (c *Cluster) QOS() []QOS { return slices.Clone(c.qos) }

// Partition returns the partition called name and whether it exists.
func (c *Cluster) Partition(name string) (Partition, bool) {
	for _, p := range c.parts {
		if p.Name == name {
			return p, true
		}
	}
	return Partition{}, false
}

// weightSpec is one TRESBillingWeights item as written in slurm.conf.
type weightSpec struct {
	tres   string // as written: CPU, Mem, GRES/gpu:a100
	number float64
	unit   string // "" or "G"
}

// buildPartitions declares the hardware and the partitions, with billing
// weights after FASRC's "Fairshare and Job Accounting" page: CPU weights by
// processor type (Broadwell 1.0, Sapphire Rapids 1.2), memory weighted so a
// node's whole memory costs as much as its cores (NumCore×CoreTRES/TotalMem
// per GB), requeue partitions at half rate (0.5 per CPU, 0.125 per GB).
func (c *Cluster) buildPartitions() {
	c.nodeTypes = []nodeType{
		// 112 cores × 1.2 / 448 GB = 0.3 per GB.
		{prefix: "sap", count: 40, cpus: 112, memMiB: 448 * 1024, feature: "sapphire"},
		// 48 cores × 1.0 / 192 GB = 0.25 per GB.
		{prefix: "shr", count: 100, cpus: 48, memMiB: 192 * 1024, feature: "broadwell"},
		// 64 cores × 1.0 / 256 GB = 0.25 per GB.
		{prefix: "gpa", count: 16, cpus: 64, memMiB: 256 * 1024, gpuType: "a100", gpus: 4, feature: "a100"},
		// 32 cores × 1.0 / 128 GB = 0.25 per GB.
		{prefix: "gpv", count: 8, cpus: 32, memMiB: 128 * 1024, gpuType: "v100", gpus: 4, feature: "v100"},
	}
	for i := range c.nodeTypes {
		nt := &c.nodeTypes[i]
		nt.hosts = hostRange(nt.prefix, 1, nt.count)
		if nt.gpuType != "" {
			nt.gresTyp = "gres/gpu:" + nt.gpuType
		}
	}
	const sap, shr, gpa, gpv = 0, 1, 2, 3
	day := 24 * time.Hour
	c.parts = []Partition{
		{Name: "sapphire", MaxTime: 3 * day, nodeTypes: []int{sap}, typeProb: []float64{1}, qos: "normal"},
		{Name: "shared", MaxTime: 7 * day, nodeTypes: []int{shr}, typeProb: []float64{1}, qos: "normal"},
		{Name: "gpu", MaxTime: 3 * day, nodeTypes: []int{gpa, gpv}, typeProb: []float64{0.65, 1}, qos: "normal"},
		{Name: "serial_requeue", MaxTime: 3 * day, nodeTypes: []int{sap, shr}, typeProb: []float64{0.4, 1}, requeue: true, qos: "lowprio"},
		{Name: "gpu_requeue", MaxTime: 3 * day, nodeTypes: []int{gpa, gpv}, typeProb: []float64{0.6, 1}, requeue: true, qos: "lowprio"},
		{Name: "test", MaxTime: 8 * time.Hour, nodeTypes: []int{shr}, typeProb: []float64{1}, short: true, qos: "free"},
	}
	specs := [][]weightSpec{
		{{"CPU", 1.2, ""}, {"Mem", 0.3, "G"}},
		{{"CPU", 1.0, ""}, {"Mem", 0.25, "G"}},
		{{"CPU", 1.0, ""}, {"Mem", 0.25, "G"}, {"GRES/gpu:a100", 20.0, ""}, {"GRES/gpu:v100", 10.0, ""}},
		{{"CPU", 0.5, ""}, {"Mem", 0.125, "G"}},
		{{"CPU", 0.5, ""}, {"Mem", 0.125, "G"}, {"GRES/gpu:a100", 10.0, ""}, {"GRES/gpu:v100", 5.0, ""}},
		nil, // test: no weights, billing = CPU count
	}
	popularity := []float64{0.20, 0.33, 0.12, 0.20, 0.09, 0.06}
	sum := 0.0
	for i := range c.parts {
		p := &c.parts[i]
		p.Nodes = partitionHosts(c.nodeTypes, p.nodeTypes)
		if p.Name == "test" {
			p.Nodes = hostRange("shr", 97, 100)
		}
		p.TRESBillingWeights, p.Weights = weightsOf(specs[i])
		sum += popularity[i]
		c.partCum = append(c.partCum, sum)
	}
}

// weightsOf renders specs as a TRESBillingWeights value and parses them per
// base unit (docs/slurm-semantics.md §3.2: a G suffix on mem, whose base unit is
// MiB, divides the weight by 1024).
func weightsOf(specs []weightSpec) (string, []Weight) {
	if len(specs) == 0 {
		return "", nil
	}
	var text []byte
	ws := make([]Weight, 0, len(specs))
	for i, s := range specs {
		if i > 0 {
			text = append(text, ',')
		}
		text = append(text, s.tres...)
		text = append(text, '=')
		text = strconv.AppendFloat(text, s.number, 'f', -1, 64)
		if s.number == math.Trunc(s.number) {
			text = append(text, ".0"...)
		}
		text = append(text, s.unit...)
		per := s.number
		if s.unit == "G" {
			per /= 1024
		}
		ws = append(ws, Weight{TRES: lower(s.tres), PerUnit: per})
	}
	return string(text), ws
}

// lower returns s in ASCII lower case.
func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// hostRange returns the hostlist expression prefix[first-last] with
// three-digit node numbers.
func hostRange(prefix string, first, last int) string {
	b := []byte(prefix)
	b = append(b, '[')
	b = appendPad3(b, first)
	b = append(b, '-')
	b = appendPad3(b, last)
	return string(append(b, ']'))
}

// appendPad3 appends n with at least three digits.
func appendPad3(b []byte, n int) []byte {
	if n < 100 {
		b = append(b, '0')
	}
	if n < 10 {
		b = append(b, '0')
	}
	return strconv.AppendInt(b, int64(n), 10)
}

// partitionHosts joins the hostlists of node types.
func partitionHosts(nts []nodeType, idx []int) string {
	s := ""
	for i, t := range idx {
		if i > 0 {
			s += ","
		}
		s += nts[t].hosts
	}
	return s
}

// Name pools for accounts and users.
var (
	surnames = [...]string{
		"adams", "baker", "chen", "dasgupta", "edwards", "fischer", "garcia", "huang",
		"ivanova", "jensen", "kim", "lopez", "martin", "nakamura", "okafor", "patel",
		"quinn", "rossi", "schmidt", "tanaka", "umar", "vargas", "wang", "xu",
		"yilmaz", "zhang", "almeida", "bernard", "cohen", "dubois", "eriksen", "farouk",
		"gupta", "hoffman", "iqbal", "johansson", "kowalski", "larsen", "mensah", "novak",
		"ortiz", "petrov", "rahman", "silva", "thompson", "ueda", "volkov", "weber",
	}
	initials = "abcdefghijklmnoprstvwy"
	schools  = [...]string{"sch_arts", "sch_eng", "sch_med"}
)

// buildAccounts creates schools, labs (shares sampled from labShares) and
// users with skewed lab sizes and activity.
func (c *Cluster) buildAccounts(r *rand.Rand) {
	o := c.opt
	nSchools := 0
	switch {
	case o.Labs >= 30:
		nSchools = 3
	case o.Labs >= 10:
		nSchools = 2
	}
	for i := 0; i < nSchools; i++ {
		c.accounts = append(c.accounts, account{name: schools[i], parent: "root", lineage: "/" + schools[i] + "/"})
	}
	// unique returns base, or base+n with the least n ≥ 2 not taken yet.
	// next remembers where each base's search stopped (the names before
	// are all taken, and stay taken), so that 900,000 users on 1,056 bases
	// cost a few million lookups rather than hundreds of millions.
	taken := map[string]bool{"root": true}
	next := map[string]int{}
	unique := func(base string) string {
		name := base
		if taken[name] {
			n := max(2, next[base])
			for name = base + strconv.Itoa(n); taken[name]; {
				n++
				name = base + strconv.Itoa(n)
			}
			next[base] = n + 1
		}
		taken[name] = true
		return name
	}
	labActivity := make([]float64, o.Labs)
	for i := 0; i < o.Labs; i++ {
		a := account{
			name:  unique(surnames[r.IntN(len(surnames))]) + "_lab",
			share: labShares[r.IntN(len(labShares))],
		}
		a.parent = "root"
		a.lineage = "/" + a.name + "/"
		if nSchools > 0 && r.Float64() < 0.35 {
			s := &c.accounts[r.IntN(nSchools)]
			s.share += a.share
			a.parent = s.name
			a.lineage = s.lineage + a.name + "/"
		}
		a.parentUsers = r.Float64() < 0.08
		c.accounts = append(c.accounts, a)
		labActivity[i] = 1
		if a.share == 0 {
			labActivity[i] = 0.2 // disabled labs still submit a little
		}
	}
	for i := range c.accounts[:nSchools] {
		if c.accounts[i].share == 0 {
			c.accounts[i].share = 1
		}
	}
	// Lab sizes: lognormal with mean UsersPerLab, at least 1, at most 5×mean.
	const sigma = 0.9
	mu := math.Log(float64(o.UsersPerLab)) - sigma*sigma/2
	maxUsers := 5 * o.UsersPerLab
	uid := 60000
	for i := 0; i < o.Labs; i++ {
		acct := nSchools + i
		n := int(math.Round(math.Exp(mu + sigma*r.NormFloat64())))
		n = min(max(n, 1), maxUsers)
		for range n {
			name := unique(string(initials[r.IntN(len(initials))]) + surnames[r.IntN(len(surnames))])
			u := user{name: name, uid: uid, accounts: []int{acct}}
			uid += 1 + r.IntN(40)
			// Heavy users: lognormal activity with a wide spread.
			u.activity = labActivity[i] * math.Exp(1.6*r.NormFloat64())
			u.part = pick(c.partCum, r.Float64())
			c.users = append(c.users, u)
		}
	}
	// A few users also work for a second lab.
	for i := range c.users {
		if o.Labs > 1 && r.Float64() < 0.04 {
			other := nSchools + r.IntN(o.Labs)
			if other != c.users[i].accounts[0] {
				c.users[i].accounts = append(c.users[i].accounts, other)
			}
		}
	}
	sum := 0.0
	for _, u := range c.users {
		sum += u.activity
		c.userCum = append(c.userCum, sum)
	}
}

// pick returns the index of the first cumulative weight above u×total.
func pick(cum []float64, u float64) int {
	x := u * cum[len(cum)-1]
	i, _ := slices.BinarySearch(cum, x)
	if i < len(cum) && cum[i] == x {
		i++
	}
	return min(i, len(cum)-1)
}
