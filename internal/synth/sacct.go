package synth

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"time"
)

// SacctHeader is the header line WriteSacct writes (without the newline): the
// column set of `sacct -a -D -P -o JobID,JobIDRaw,...`.
const SacctHeader = "JobID|JobIDRaw|Cluster|Partition|QOS|Account|User|Submit|Eligible|Start|End|Elapsed|ElapsedRaw|Suspended|State|ExitCode|NNodes|AllocCPUS|ReqTRES|AllocTRES|Timelimit|JobName"

// Summary counts the rows WriteSacct wrote. Rows = Jobs + Steps; the other
// fields break Jobs down (a row can be in several: a pending array range row
// is in ArrayPending and Pending).
type Summary struct {
	Rows  int64 // data rows, header excluded
	Jobs  int64 // allocation rows: JobID without '.'
	Steps int64 // step rows: .batch, .extern, .N

	Arrays        int64 // array task rows, JobID 123_4
	ArrayPending  int64 // pending array range rows, JobID 123_[7-9%2]
	HetComponents int64 // het job component rows, JobID 500+1
	Requeues      int64 // earlier runs of requeued jobs, State REQUEUED
	Running       int64 // State RUNNING, End=Unknown
	Pending       int64 // State PENDING, Start=Unknown
	NeverStarted  int64 // cancelled before start: Start=None, State "CANCELLED by <uid>"
	Cancelled     int64 // cancelled while running: State "CANCELLED by <uid>" with Start and End
	Completed     int64 // State COMPLETED
	Failed        int64 // State FAILED
	Timeout       int64 // State TIMEOUT
	OutOfMemory   int64 // State OUT_OF_MEMORY
	NodeFail      int64 // State NODE_FAIL
	Suspended     int64 // allocation rows with Suspended > 0
}

// WriteSacct writes the job log as `SLURM_TIME_FORMAT=... sacct -a -D -P`
// prints it with the columns of SacctHeader: a header line, then every
// allocation row followed by its steps, in JobIDRaw order. It streams through
// a bufio.Writer: memory does not depend on Options.Jobs.
func (c *Cluster) WriteSacct(w io.Writer) (Summary, error) {
	if err := c.opt.validate(); err != nil {
		return Summary{}, fmt.Errorf("write sacct: %w", err)
	}
	g := newGen(c, w)
	g.bw.WriteString(SacctHeader + "\n")
	for g.sum.Jobs < int64(c.opt.Jobs) && g.err == nil {
		g.group()
	}
	if g.err == nil {
		g.err = g.bw.Flush()
	}
	if g.err != nil {
		return g.sum, fmt.Errorf("write sacct: %w", g.err)
	}
	return g.sum, nil
}

// Run states of an allocation row.
const (
	stCompleted uint8 = iota
	stFailed
	stCancelled
	stTimeout
	stOOM
	stNodeFail
	stRequeued
	stRunning
	stPending
	stNeverStarted
)

// stateName returns the State column text of st (without "by <uid>").
func stateName(st uint8) string {
	switch st {
	case stCompleted:
		return "COMPLETED"
	case stFailed:
		return "FAILED"
	case stCancelled, stNeverStarted:
		return "CANCELLED"
	case stTimeout:
		return "TIMEOUT"
	case stOOM:
		return "OUT_OF_MEMORY"
	case stNodeFail:
		return "NODE_FAIL"
	case stRequeued:
		return "REQUEUED"
	case stRunning:
		return "RUNNING"
	}
	return "PENDING"
}

// JobID forms.
const (
	refPlain      uint8 = iota // 123
	refArrayTask               // 123_4
	refArrayRange              // 123_[7-9%2]
	refHet                     // 123+1
)

// jobRef identifies an allocation: its printed JobID and its JobIDRaw.
type jobRef struct {
	kind     uint8
	id       int64 // numeric part of JobID: job, array or het leader id
	raw      int64
	idx      int64 // array task index or het offset
	lo, hi   int64 // pending array range
	throttle int64 // pending array %max, 0 for none
}

// Step ids beyond the numbered steps.
const (
	noStep     = -1
	stepBatch  = -2
	stepExtern = -3
)

// tresSet is a ReqTRES or AllocTRES value.
type tresSet struct {
	ok      bool   // false: the field is empty
	billing int64  // -1: no billing entry
	cpu     int64  //
	memMiB  int64  //
	node    int64  //
	gpus    int64  // gres/gpu count
	gresTyp string // "gres/gpu:a100" when the typed entry is present
}

// row is one output line before formatting.
type row struct {
	ref                          jobRef
	step                         int // noStep, stepBatch, stepExtern or the step number
	part, qos, acct, user        string
	submit, eligible, start, end int64
	elapsed, susp                int64
	state                        uint8
	stateText                    string // overrides stateName(state) for steps
	cancelBy                     int    // uid for "CANCELLED by", -1 for none
	exit                         string
	nnodes, cpus                 int64
	req, alloc                   tresSet
	timelimit                    int64 // seconds; -1 for empty (steps)
	name                         string
}

// spec is one job's request and resources, shared by its runs.
type spec struct {
	u         *user
	acct      string
	part      *Partition
	nt        *nodeType
	qos       string
	name      string
	submit    int64
	eligible  int64
	timelimit int64 // seconds
	dur       int64 // natural run time, ≤ timelimit
	timeout   bool  // dur hit the time limit: the job times out
	batch     bool  // has a .batch step (false for salloc)
	req       tresSet
	alloc     tresSet
}

// run is one run of an allocation.
type run struct {
	state      uint8
	start, end int64 // end: the actual end, or the planned end of a running job
	susp       int64
	cancelBy   int
	exit       string
}

// gen holds the state of one WriteSacct call.
type gen struct {
	c      *Cluster
	o      Options
	r      *rand.Rand
	bw     *bufio.Writer
	line   []byte
	sum    Summary
	err    error
	now    int64
	nextID int64
	sched  schedule
	row    row
	other  [2]TRES
	tasks  []run
	spec   spec   // reused by newSpec
	comps  []spec // reused by het
}

func newGen(c *Cluster, w io.Writer) *gen {
	o := c.opt
	g := &gen{
		c:      c,
		o:      o,
		r:      rand.New(rand.NewPCG(uint64(o.Seed), streamSacct)),
		bw:     bufio.NewWriterSize(w, 256<<10),
		line:   make([]byte, 0, 1024),
		now:    o.Now.Unix(),
		nextID: 1000 + int64(rand.New(rand.NewPCG(uint64(o.Seed), streamSacct+1)).IntN(9000000)),
	}
	end := o.To
	if o.Now.Before(end) {
		end = o.Now
	}
	g.sched = newSchedule(o.From.Unix(), end.Unix(), o.Location)
	return g
}

// group writes one submission: a plain job (possibly requeued), a job array
// or a het job.
func (g *gen) group() {
	remaining := int64(g.o.Jobs) - g.sum.Jobs
	u := (float64(g.sum.Jobs) + g.r.Float64()) / float64(g.o.Jobs)
	s := g.newSpec(g.sched.at(u))
	k := g.r.Float64()
	switch {
	case k < 0.03 && remaining >= 2:
		g.array(s, remaining)
	case k < 0.045 && remaining >= 2:
		g.het(s, remaining)
	default:
		g.single(s, remaining)
	}
}

// newSpec draws the user, account, partition, resources and run time of a
// job submitted at submit.
func (g *gen) newSpec(submit int64) *spec {
	r := g.r
	c := g.c
	s := &g.spec
	*s = spec{submit: submit, eligible: submit, batch: r.Float64() < 0.92}
	if len(c.users) > 0 {
		s.u = &c.users[pick(c.userCum, r.Float64())]
		ai := s.u.accounts[0]
		if len(s.u.accounts) > 1 && r.Float64() < 0.3 {
			ai = s.u.accounts[1]
		}
		s.acct = c.accounts[ai].name
	}
	pi := pick(c.partCum, r.Float64())
	if s.u != nil && r.Float64() < 0.7 {
		pi = s.u.part
	}
	g.setPartition(s, &c.parts[pi])
	s.name = jobNames[r.IntN(len(jobNames))]
	s.dur = g.duration(s.part)
	g.setTimelimit(s)
	return s
}

// setPartition places s in p and draws its resources.
func (g *gen) setPartition(s *spec, p *Partition) {
	r := g.r
	s.part = p
	s.nt = &g.c.nodeTypes[p.nodeTypes[pick(p.typeProb, r.Float64())]]
	s.qos = p.qos
	if r.Float64() < 0.03 {
		s.qos = "nodecay"
	}
	nt := s.nt
	nodes, gpusPerNode := int64(1), int64(0)
	var cpusPerNode, memPerNode int64
	exclusive := false
	switch {
	case nt.gpus > 0:
		switch x := r.Float64(); {
		case x < 0.55:
			gpusPerNode = 1
		case x < 0.8:
			gpusPerNode = 2
		default:
			gpusPerNode = nt.gpus
		}
		if !p.requeue && r.Float64() < 0.04 {
			nodes, gpusPerNode = 2, nt.gpus
		}
		cpusPerNode = min(gpusPerNode*[]int64{1, 2, 4, 8, 16}[r.IntN(5)], nt.cpus)
	case !p.requeue && !p.short && nt.cpus >= 100 && r.Float64() < 0.2:
		// MPI job on whole nodes.
		nodes = 2 + int64(math.Min(14, math.Floor(-math.Log(1-r.Float64())*3)))
		cpusPerNode = nt.cpus
	default:
		cpusPerNode = min(cpuChoices[pick(cpuWeights[:], r.Float64())], nt.cpus)
		exclusive = !p.requeue && r.Float64() < 0.05
	}
	if r.Float64() < 0.4 {
		memPerNode = 4000 * cpusPerNode // DefMemPerCPU=4000
	} else {
		memPerNode = memChoices[r.IntN(len(memChoices))]
	}
	memPerNode = min(memPerNode, nt.memMiB)
	typed := gpusPerNode > 0 && r.Float64() < 0.6
	s.req = tresSet{ok: true, cpu: nodes * cpusPerNode, memMiB: nodes * memPerNode, node: nodes, gpus: nodes * gpusPerNode}
	if typed {
		s.req.gresTyp = nt.gresTyp
	}
	s.alloc = s.req
	s.alloc.gresTyp = nt.gresTyp // Slurm allocates typed GPUs and writes both entries
	if exclusive {
		s.alloc.cpu, s.alloc.memMiB = nt.cpus, nt.memMiB
	}
	s.req.billing = g.billing(p, s.req)
	s.alloc.billing = g.billing(p, s.alloc)
}

// billing computes the billing= entry of t under p's weights with Billing.
func (g *gen) billing(p *Partition, t tresSet) int64 {
	a := Alloc{CPU: t.cpu, MemMiB: t.memMiB, Node: t.node}
	if t.gpus > 0 {
		g.other[0] = TRES{Name: "gres/gpu", Count: t.gpus}
		a.Other = g.other[:1]
		if t.gresTyp != "" {
			g.other[1] = TRES{Name: t.gresTyp, Count: t.gpus}
			a.Other = g.other[:2]
		}
	}
	return Billing(p.Weights, a)
}

// Resource and name pools.
var (
	cpuChoices = [...]int64{1, 2, 4, 8, 16, 32, 48, 64, 112}
	cpuWeights = [...]float64{30, 42, 60, 75, 85, 92, 96, 98, 100} // cumulative
	memChoices = [...]int64{1000, 1024, 1536, 2048, 4096, 8192, 12000, 16384, 32768, 65536, 131072, 184320}
	timelimits = [...]int64{600, 1800, 3600, 7200, 14400, 28800, 43200, 86400, 172800, 259200, 604800}
	jobNames   = [...]string{
		"bash", "python", "train_resnet50", "md_run", "gromacs_npt", "Rscript", "matlab",
		"sys/dashboard/sys/jupyter", "spawner-jupyterhub", "snakejob.align", "nf-ALIGN_(sample_12)",
		"run 3", "my job", "análisis_2", "wrap", "interactive", "vasp", "lammps-eq", "blast_chunk",
		"cryosparc_P12_J40", "hyperparam sweep", "fmriprep", "stata-mp", "alphafold",
	}
	stepNames = [...]string{"python", "bash", "gmx_mpi", "lmp", "Rscript", "julia", "hydra_pmi_proxy", "vasp_std"}
)

// lognormal returns median×e^(σN).
func (g *gen) lognormal(median, sigma float64) float64 {
	return median * math.Exp(sigma*g.r.NormFloat64())
}

// duration draws a heavy-tailed natural run time in seconds: many jobs of
// seconds to minutes, some of hours, a few of days.
func (g *gen) duration(p *Partition) int64 {
	x := g.r.Float64()
	if p.short {
		x *= 0.65
	}
	var d float64
	switch {
	case x < 0.30:
		d = g.lognormal(45, 1.0)
	case x < 0.65:
		d = g.lognormal(1200, 1.0)
	case x < 0.92:
		d = g.lognormal(4*3600, 0.8)
	default:
		d = g.lognormal(30*3600, 0.7)
	}
	return max(1, int64(d))
}

// setTimelimit picks a typical requested limit above the natural run time,
// capped by the partition's MaxTime.
func (g *gen) setTimelimit(s *spec) {
	maxT := int64(s.part.MaxTime / time.Second)
	want := float64(s.dur) * (1.2 + 2*g.r.Float64())
	tl := maxT
	if g.r.Float64() > 0.15 {
		for _, t := range timelimits {
			if float64(t) >= want {
				tl = min(t, maxT)
				break
			}
		}
	}
	s.timelimit = tl
	if s.dur >= tl {
		s.dur, s.timeout = tl, true
	}
}

// wait draws the queue wait in seconds.
func (g *gen) wait(p *Partition) int64 {
	x := g.r.Float64()
	if p.short {
		x *= 0.8
	}
	var w float64
	switch {
	case x < 0.5:
		w = float64(g.r.IntN(30))
	case x < 0.8:
		w = g.lognormal(600, 1)
	case x < 0.95:
		w = g.lognormal(7200, 0.8)
	default:
		w = g.lognormal(86400, 0.6)
	}
	if p.requeue {
		w /= 2
	}
	return int64(w)
}

// pickState draws the final state of a run that is not requeued.
func (g *gen) pickState(s *spec) uint8 {
	if s.timeout {
		return stTimeout
	}
	switch x := g.r.Float64(); {
	case x < 0.10:
		return stFailed
	case x < 0.18:
		return stCancelled
	case x < 0.23:
		return stTimeout
	case x < 0.26:
		return stOOM
	case x < 0.265:
		return stNodeFail
	}
	return stCompleted
}

// runOf plans a run of s starting at start that ends in state st, and turns
// it into RUNNING when it has not ended by Now.
func (g *gen) runOf(s *spec, start int64, st uint8) run {
	r := g.r
	d := float64(s.dur)
	var rt float64
	rn := run{state: st, start: start, cancelBy: -1, exit: "0:0"}
	switch st {
	case stCompleted:
		rt = d
	case stFailed:
		rt = d * r.Float64() * r.Float64()
		rn.exit = exitCodes[r.IntN(len(exitCodes))]
	case stCancelled:
		rt = d * r.Float64()
		rn.exit = "0:15"
		rn.cancelBy = g.canceller(s)
	case stTimeout:
		rt = float64(s.timelimit + int64(r.IntN(60)))
	case stOOM:
		rt = d * (0.05 + 0.95*r.Float64())
		rn.exit = "0:125"
	case stNodeFail, stRequeued:
		rt = d * (0.05 + 0.9*r.Float64())
	}
	rn.end = start + max(1, int64(rt))
	if st != stRequeued && rt >= 600 && r.Float64() < 0.01 {
		// Suspended (scontrol suspend) for up to 4 hours, at most as long as it ran.
		rn.susp = 60 + int64(r.IntN(int(min(rt, 4*3600))))
		rn.end += rn.susp
	}
	if rn.end > g.now {
		rn.state, rn.susp, rn.exit, rn.cancelBy = stRunning, 0, "0:0", -1
	}
	return rn
}

var exitCodes = [...]string{"1:0", "1:0", "2:0", "127:0", "0:9"}

// canceller returns the uid that cancelled a job: usually its owner,
// sometimes root.
func (g *gen) canceller(s *spec) int {
	if s.u == nil || g.r.Float64() < 0.12 {
		return 0
	}
	return s.u.uid
}

// single writes a plain job: never started, pending, or one or more runs
// (earlier ones REQUEUED), each with its steps.
func (g *gen) single(s *spec, remaining int64) {
	raw := g.nextID
	g.nextID++
	ref := jobRef{kind: refPlain, id: raw, raw: raw}
	wait := g.wait(s.part)
	if g.r.Float64() < 0.04 {
		s.eligible = s.submit + int64(g.r.Float64()*float64(wait)) // --begin
	}
	start := s.submit + wait
	if g.r.Float64() < 0.025 {
		cancel := s.submit + int64(g.r.Float64()*float64(wait))
		if cancel < g.now {
			g.neverStarted(ref, s, cancel)
			return
		}
		start = g.now // still pending at Now
	}
	if start >= g.now {
		g.pending(ref, s, s.submit, s.eligible)
		return
	}
	requeues := int64(0)
	switch x := g.r.Float64(); {
	case s.part.requeue && x < 0.12:
		requeues = 1 + int64(g.r.IntN(3))
	case x < 0.007:
		requeues = 1
	}
	requeues = min(requeues, remaining-1)
	submit, eligible, stepNo := s.submit, s.eligible, 0
	for i := int64(0); ; i++ {
		st := stRequeued
		if i == requeues {
			st = g.pickState(s)
		}
		rn := g.runOf(s, start, st)
		g.allocRow(ref, s, submit, eligible, rn)
		g.steps(ref, s, rn, &stepNo, s.batch, true)
		if i == requeues || rn.state == stRunning {
			return
		}
		// Slurm resets the submit time of a requeued job to the requeue time.
		submit, eligible = rn.end, rn.end
		start = rn.end + g.wait(s.part)
		if start >= g.now {
			g.pending(ref, s, submit, eligible)
			return
		}
	}
}

// array writes a job array: its started tasks, each with its own JobIDRaw,
// and, when tasks remain pending at Now, the pending range row that keeps
// the array's own id. When every task has started the last task keeps it.
func (g *gen) array(s *spec, remaining int64) {
	r := g.r
	n := min(int64(2+math.Floor(g.lognormal(6, 1.1))), 1000, remaining)
	n = max(n, 2)
	a := g.nextID
	g.nextID += n
	base := int64(r.IntN(2))
	throttle, conc := int64(0), n
	if r.Float64() < 0.5 {
		throttle = []int64{1, 2, 4, 5, 10, 20}[r.IntN(6)]
		conc = throttle
	}
	if s.name == "interactive" || s.name == "bash" {
		s.name = "array_task"
	}
	arrStart := s.submit + g.wait(s.part)
	if r.Float64() < 0.15 {
		// Held behind a dependency (--dependency=afterok:...).
		arrStart += int64(g.lognormal(12*3600, 1))
	}
	wave := s.dur + 30
	g.tasks = g.tasks[:0]
	prev := arrStart
	m := int64(0)
	for k := int64(0); k < n; k++ {
		start := max(prev, arrStart+(k/conc)*wave+int64(r.IntN(30)))
		prev = start
		if start >= g.now {
			break
		}
		ts := *s
		ts.dur = max(1, min(int64(float64(s.dur)*math.Exp(0.25*r.NormFloat64())), s.timelimit))
		ts.timeout = ts.dur >= s.timelimit
		g.tasks = append(g.tasks, g.runOf(&ts, start, g.pickState(&ts)))
		m++
	}
	task := func(k, raw int64) {
		ref := jobRef{kind: refArrayTask, id: a, raw: raw, idx: base + k}
		stepNo := 0
		g.allocRow(ref, s, s.submit, s.eligible, g.tasks[k])
		g.steps(ref, s, g.tasks[k], &stepNo, s.batch, true)
	}
	if m == n {
		task(n-1, a)
		for k := int64(0); k < n-1; k++ {
			task(k, a+1+k)
		}
		return
	}
	g.pending(jobRef{kind: refArrayRange, id: a, raw: a, lo: base + m, hi: base + n - 1, throttle: throttle}, s, s.submit, s.eligible)
	for k := int64(0); k < m; k++ {
		task(k, a+1+k)
	}
}

// het writes a heterogeneous job: two or three components that start and
// end together, each its own allocation row with its own JobIDRaw.
func (g *gen) het(s *spec, remaining int64) {
	r := g.r
	n := min(int64(2+r.IntN(2)), remaining)
	leader := g.nextID
	g.nextID += n
	comps := g.comps[:0]
	for range n {
		comps = append(comps, spec{})
	}
	g.comps = comps
	comps[0] = *s
	for j := int64(1); j < n; j++ {
		comps[j] = *s
		p := s.part
		if r.Float64() < 0.3 {
			p = &g.c.parts[pick(g.c.partCum, r.Float64())]
		}
		qos := s.qos
		g.setPartition(&comps[j], p)
		comps[j].qos = qos
	}
	ref := func(j int64) jobRef { return jobRef{kind: refHet, id: leader, raw: leader + j, idx: j} }
	start := s.submit + g.wait(s.part)
	if start >= g.now {
		for j := range n {
			g.pending(ref(j), &comps[j], s.submit, s.eligible)
		}
		return
	}
	rn := g.runOf(s, start, g.pickState(s))
	for j := range n {
		stepNo := 0
		g.allocRow(ref(j), &comps[j], s.submit, s.eligible, rn)
		g.steps(ref(j), &comps[j], rn, &stepNo, s.batch && j == 0, j == 0 || r.Float64() < 0.8)
	}
}

// neverStarted writes a job cancelled while pending: Start=None, End = the
// cancel time, no AllocTRES.
func (g *gen) neverStarted(ref jobRef, s *spec, cancel int64) {
	w := g.jobRow(ref, s, s.submit, s.eligible)
	w.start, w.end = timeNone, cancel
	w.state, w.cancelBy = stNeverStarted, g.canceller(s)
	g.writeRow()
}

// pending writes a job (or array range) not started by Now. A quarter of
// pending jobs are held: Eligible=Unknown.
func (g *gen) pending(ref jobRef, s *spec, submit, eligible int64) {
	if g.r.Float64() < 0.25 {
		eligible = timeUnknown
	}
	w := g.jobRow(ref, s, submit, eligible)
	w.state = stPending
	g.writeRow()
}

// jobRow fills g.row with the fields every allocation row has and returns it.
func (g *gen) jobRow(ref jobRef, s *spec, submit, eligible int64) *row {
	w := &g.row
	*w = row{
		ref: ref, step: noStep, part: s.part.Name, qos: s.qos, acct: s.acct,
		submit: submit, eligible: eligible, start: timeUnknown, end: timeUnknown,
		cancelBy: -1, exit: "0:0", nnodes: s.req.node, req: s.req,
		timelimit: s.timelimit, name: s.name,
	}
	if s.u != nil {
		w.user = s.u.name
	}
	return w
}

// allocRow writes the allocation row of a run that started.
func (g *gen) allocRow(ref jobRef, s *spec, submit, eligible int64, rn run) {
	w := g.jobRow(ref, s, submit, eligible)
	w.start, w.state, w.susp, w.exit, w.cancelBy = rn.start, rn.state, rn.susp, rn.exit, rn.cancelBy
	w.nnodes, w.cpus, w.alloc = s.alloc.node, s.alloc.cpu, s.alloc
	if rn.state == stRunning {
		w.elapsed = g.now - rn.start
	} else {
		w.end = rn.end
		w.elapsed = rn.end - rn.start - rn.susp
	}
	g.writeRow()
}

// steps writes, with probability StepFraction, the step rows of a run:
// .batch (when batch), .extern (when extern), then up to three numbered
// steps that split the run; *stepNo numbers them across requeued runs.
func (g *gen) steps(ref jobRef, s *spec, rn run, stepNo *int, batch, extern bool) {
	if g.o.StepFraction <= 0 || g.r.Float64() >= g.o.StepFraction {
		return
	}
	running := rn.state == stRunning
	perNode := s.alloc
	perNode.billing = -1
	perNode.cpu /= perNode.node
	perNode.memMiB /= perNode.node
	perNode.gpus /= perNode.node
	perNode.node = 1
	lastText, lastExit := stepEnd(rn)
	if batch {
		g.stepRow(ref, s, stepBatch, rn.start, rn.end, rn.susp, running, lastText, lastExit, perNode, "batch")
	}
	if extern {
		g.stepRow(ref, s, stepExtern, rn.start, rn.end, rn.susp, running, "COMPLETED", "0:0", s.alloc, "extern")
	}
	n := int64([]int{0, 1, 1, 1, 2, 3}[g.r.IntN(6)])
	span := rn.end - rn.start - rn.susp - 2
	if n == 0 || span < n {
		return
	}
	noBilling := s.alloc
	noBilling.billing = -1
	name := stepNames[g.r.IntN(len(stepNames))]
	for j := int64(0); j < n; j++ {
		a := rn.start + 1 + span*j/n
		b := rn.start + 1 + span*(j+1)/n
		if running && a >= g.now {
			break
		}
		text, exit := "COMPLETED", "0:0"
		if j == n-1 {
			text, exit = lastText, lastExit
		}
		g.stepRow(ref, s, *stepNo, a, b, 0, running && b > g.now, text, exit, noBilling, name)
		*stepNo++
	}
}

// stepEnd returns the State and ExitCode of the step that was running when
// the run ended.
func stepEnd(rn run) (string, string) {
	switch rn.state {
	case stFailed:
		return "FAILED", rn.exit
	case stCancelled, stTimeout, stRequeued:
		return "CANCELLED", "0:15"
	case stOOM:
		return "OUT_OF_MEMORY", "0:125"
	case stNodeFail:
		return "CANCELLED", "0:9"
	}
	return "COMPLETED", "0:0"
}

// stepRow writes one step row: no User, Partition, QOS, ReqTRES or
// Timelimit; Submit and Eligible are the step start.
func (g *gen) stepRow(ref jobRef, s *spec, step int, start, end, susp int64, running bool, state, exit string, t tresSet, name string) {
	w := &g.row
	*w = row{
		ref: ref, step: step, acct: s.acct, submit: start, eligible: start, start: start, end: end,
		susp: susp, stateText: state, cancelBy: -1, exit: exit, nnodes: t.node, cpus: t.cpu,
		alloc: t, timelimit: -1, name: name,
	}
	w.elapsed = end - start - susp
	if running {
		w.end, w.stateText, w.exit, w.susp = timeUnknown, "RUNNING", "0:0", 0
		w.elapsed = g.now - start
	}
	g.writeRow()
}

// writeRow formats g.row, writes it and counts it in the Summary.
func (g *gen) writeRow() {
	w := &g.row
	b := g.line[:0]
	b = appendJobID(b, w.ref, w.step, false)
	b = append(b, '|')
	b = appendJobID(b, w.ref, w.step, true)
	b = append(b, '|')
	b = append(b, g.o.Cluster...)
	b = append(b, '|')
	b = append(b, w.part...)
	b = append(b, '|')
	b = append(b, w.qos...)
	b = append(b, '|')
	b = append(b, w.acct...)
	b = append(b, '|')
	b = append(b, w.user...)
	b = append(b, '|')
	for _, t := range [...]int64{w.submit, w.eligible, w.start, w.end} {
		b = appendTime(b, t, g.o.UnixTimes, g.o.Location)
		b = append(b, '|')
	}
	b = appendElapsed(b, w.elapsed)
	b = append(b, '|')
	b = strconv.AppendInt(b, w.elapsed, 10)
	b = append(b, '|')
	b = appendElapsed(b, w.susp)
	b = append(b, '|')
	if w.stateText != "" {
		b = append(b, w.stateText...)
	} else {
		b = append(b, stateName(w.state)...)
	}
	if w.cancelBy >= 0 {
		b = append(b, " by "...)
		b = strconv.AppendInt(b, int64(w.cancelBy), 10)
	}
	b = append(b, '|')
	b = append(b, w.exit...)
	b = append(b, '|')
	b = strconv.AppendInt(b, w.nnodes, 10)
	b = append(b, '|')
	b = strconv.AppendInt(b, w.cpus, 10)
	b = append(b, '|')
	b = appendTRES(b, w.req)
	b = append(b, '|')
	b = appendTRES(b, w.alloc)
	b = append(b, '|')
	if w.timelimit >= 0 {
		b = appendElapsed(b, w.timelimit)
	}
	b = append(b, '|')
	b = append(b, w.name...)
	b = append(b, '\n')
	g.line = b
	if _, err := g.bw.Write(b); err != nil && g.err == nil {
		g.err = err
	}
	g.count(w)
}

// count adds a written row to the Summary.
func (g *gen) count(w *row) {
	s := &g.sum
	s.Rows++
	if w.step != noStep {
		s.Steps++
		return
	}
	s.Jobs++
	switch w.ref.kind {
	case refArrayTask:
		s.Arrays++
	case refArrayRange:
		s.ArrayPending++
	case refHet:
		s.HetComponents++
	}
	if w.susp > 0 {
		s.Suspended++
	}
	switch w.state {
	case stCompleted:
		s.Completed++
	case stFailed:
		s.Failed++
	case stCancelled:
		s.Cancelled++
	case stTimeout:
		s.Timeout++
	case stOOM:
		s.OutOfMemory++
	case stNodeFail:
		s.NodeFail++
	case stRequeued:
		s.Requeues++
	case stRunning:
		s.Running++
	case stPending:
		s.Pending++
	case stNeverStarted:
		s.NeverStarted++
	}
}

// appendJobID appends the JobID (raw false) or JobIDRaw (raw true) of an
// allocation or step.
func appendJobID(b []byte, ref jobRef, step int, raw bool) []byte {
	switch {
	case raw:
		b = strconv.AppendInt(b, ref.raw, 10)
	case ref.kind == refArrayTask:
		b = strconv.AppendInt(b, ref.id, 10)
		b = append(b, '_')
		b = strconv.AppendInt(b, ref.idx, 10)
	case ref.kind == refArrayRange:
		b = strconv.AppendInt(b, ref.id, 10)
		b = append(b, "_["...)
		b = strconv.AppendInt(b, ref.lo, 10)
		if ref.hi > ref.lo {
			b = append(b, '-')
			b = strconv.AppendInt(b, ref.hi, 10)
		}
		if ref.throttle > 0 {
			b = append(b, '%')
			b = strconv.AppendInt(b, ref.throttle, 10)
		}
		b = append(b, ']')
	case ref.kind == refHet:
		b = strconv.AppendInt(b, ref.id, 10)
		b = append(b, '+')
		b = strconv.AppendInt(b, ref.idx, 10)
	default:
		b = strconv.AppendInt(b, ref.id, 10)
	}
	switch {
	case step == stepBatch:
		b = append(b, ".batch"...)
	case step == stepExtern:
		b = append(b, ".extern"...)
	case step >= 0:
		b = append(b, '.')
		b = strconv.AppendInt(b, int64(step), 10)
	}
	return b
}

// appendTRES appends a TRES list in sacct's order, which is the byte order
// of the name=value strings: billing, cpu, gres/gpu:<type>, gres/gpu, mem,
// node (':' sorts before '=').
func appendTRES(b []byte, t tresSet) []byte {
	if !t.ok {
		return b
	}
	if t.billing >= 0 {
		b = append(b, "billing="...)
		b = strconv.AppendInt(b, t.billing, 10)
		b = append(b, ',')
	}
	b = append(b, "cpu="...)
	b = strconv.AppendInt(b, t.cpu, 10)
	if t.gpus > 0 {
		if t.gresTyp != "" {
			b = append(b, ',')
			b = append(b, t.gresTyp...)
			b = append(b, '=')
			b = strconv.AppendInt(b, t.gpus, 10)
		}
		b = append(b, ",gres/gpu="...)
		b = strconv.AppendInt(b, t.gpus, 10)
	}
	b = append(b, ",mem="...)
	b = appendMem(b, t.memMiB)
	b = append(b, ",node="...)
	return strconv.AppendInt(b, t.node, 10)
}

// schedule maps a quantile u in [0, 1) to a submit time in [from, end) with
// a weekly and diurnal intensity in the printing zone: busy working hours,
// quiet nights, lighter weekends. Successive calls must not decrease u.
type schedule struct {
	from, end int64
	cum       []float64 // cum[i]: total weight of hourly buckets before i
	i         int
}

func newSchedule(from, end int64, loc *time.Location) schedule {
	s := schedule{from: from, end: end, cum: []float64{0}}
	hourly := [24]float64{0.3, 0.25, 0.2, 0.2, 0.2, 0.25, 0.35, 0.5, 0.75, 0.95, 1, 1, 0.9, 1, 1, 1, 0.95, 0.85, 0.7, 0.6, 0.55, 0.5, 0.45, 0.35}
	for t := from; t < end; t += 3600 {
		lt := time.Unix(t, 0).In(loc)
		wt := hourly[lt.Hour()]
		if d := lt.Weekday(); d == time.Saturday || d == time.Sunday {
			wt *= 0.5
		}
		wt *= float64(min(end-t, 3600)) / 3600
		s.cum = append(s.cum, s.cum[len(s.cum)-1]+wt)
	}
	return s
}

// at returns the submit time at quantile u.
func (s *schedule) at(u float64) int64 {
	n := len(s.cum) - 1
	if n == 0 {
		return s.from
	}
	x := u * s.cum[n]
	for s.i < n-1 && s.cum[s.i+1] <= x {
		s.i++
	}
	lo, hi := s.cum[s.i], s.cum[s.i+1]
	frac := 0.0
	if hi > lo {
		frac = (x - lo) / (hi - lo)
	}
	bucket := float64(min(s.end-(s.from+int64(s.i)*3600), 3600))
	t := s.from + int64(s.i)*3600 + int64(frac*bucket)
	return min(t, s.end-1)
}
