package ingest

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/bitutil"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/fairledger/fairledger/schemas"
)

// sacctParser turns blocks of sacct lines into record batches. Each worker
// goroutine owns one; its scratch buffers, the per-column slices included,
// are reused from row to row and from block to block.
type sacctParser struct {
	name   string
	lay    *sacctLayout
	clock  *localClock
	defCl  []byte // never nil, so that an empty default is "" and not null
	mem    memory.Allocator
	schema *arrow.Schema
	denseI map[string]int
	gpuIdx int

	fields  [][]byte
	pieces  [][]byte
	joined  []byte
	lower   []byte
	row     sacctRow
	cols    jobColumns
	missErr *ParseError
}

type tresEntry struct {
	name []byte
	v    float64
}

// sacctRow holds one record's parsed values until the record is known to be
// good; only then is it appended, so a rejected row leaves no trace.
type sacctRow struct {
	line                                       int
	cluster, jobID, user, account, partition   []byte
	qos, state, cancelledBy, exitCode, jobName []byte
	id                                         jobID
	raw                                        int64
	rawOK                                      bool
	submit, eligible, start, end               int64
	submitOK, eligibleOK, endOK                bool
	elapsed, suspended, timelimit              int64
	elapsedOK, suspendedOK, timelimitOK        bool
	nnodes, cpus                               int64
	tres                                       []tresEntry
	dense                                      []float64
	billing                                    float64
	billingOK                                  bool
}

func newSacctParser(name string, lay *sacctLayout, opt SacctOptions, schema *arrow.Schema) *sacctParser {
	p := &sacctParser{
		name:   name,
		lay:    lay,
		clock:  newLocalClock(opt.Location),
		defCl:  []byte(opt.Cluster),
		mem:    opt.Allocator,
		schema: schema,
		denseI: make(map[string]int, len(lay.dense)),
		fields: make([][]byte, 0, lay.nf+8),
	}
	for i, t := range lay.dense {
		p.denseI[t] = i
		if t == "gres/gpu" {
			p.gpuIdx = i
		}
	}
	p.row.dense = make([]float64, len(lay.dense))
	if len(lay.missing) > 0 {
		p.missErr = &ParseError{File: name, Err: fmt.Errorf("required column(s) %s not in file", strings.Join(lay.missing, ", "))}
	}
	p.cols.init(len(lay.dense))
	return p
}

// parseChunk parses every record of a block. Blocks start on a record
// boundary (see findCut), so records never straddle two blocks unless the
// input is malformed, in which case the pieces are rejected, not lost.
func (p *sacctParser) parseChunk(c chunk) chunkResult {
	res := chunkResult{seq: c.seq, stats: Stats{File: p.name}}
	p.cols.reset()
	data := c.data
	line := c.line
	nf := p.lay.nf
	for len(data) > 0 {
		// One physical line.
		ln, rest := cutLine(data)
		first := line
		data = rest
		line++
		if len(bytes.TrimSpace(ln)) == 0 {
			continue // blank lines are not records
		}
		rec := ln
		inJoined := false
		// Split once; the pieces are reused below unless the record turns
		// out to span several lines.
		p.pieces = splitPipes(p.pieces[:0], ln)
		n := len(p.pieces)
		if p.lay.trailing {
			n--
		}
		// A record with too few fields may continue on the next lines (a
		// SubmitLine with embedded newlines): join following fragments.
		if n < nf {
			joined := append(p.joined[:0], ln...)
			acc := n
			for acc < nf && len(data) > 0 {
				nx, nrest := cutLine(data)
				k := bytes.Count(nx, []byte{'|'}) + 1
				if k >= nf {
					break // the next line is a record of its own
				}
				joined = append(joined, '\n')
				joined = append(joined, nx...)
				acc += k - 1
				data = nrest
				line++
			}
			p.joined = joined
			rec = joined
			inJoined = true
			n = acc
		}
		// A free-text last column (SubmitLine, JobName) may itself run on
		// over lines that hold no delimiter at all.
		if n == nf && p.lay.classes[nf-1] == classFreeText && !p.lay.trailing {
			for len(data) > 0 {
				nx, nrest := cutLine(data)
				if bytes.IndexByte(nx, '|') >= 0 || len(bytes.TrimSpace(nx)) == 0 {
					break
				}
				if !inJoined {
					p.joined = append(p.joined[:0], rec...)
					inJoined = true
				}
				p.joined = append(p.joined, '\n')
				p.joined = append(p.joined, nx...)
				rec = p.joined
				data = nrest
				line++
			}
		}
		res.stats.Read++
		if inJoined {
			p.pieces = splitPipes(p.pieces[:0], rec)
		}
		fields, perr := p.split()
		if perr == nil {
			perr = p.parseRow(fields, first, &res.stats)
		}
		if perr != nil {
			if perr.Line == 0 {
				perr.Line = first
			}
			res.stats.Rejected++
			res.rejects = append(res.rejects, rejectRec{err: perr, raw: string(rec)})
		}
	}
	if res.stats.Ingested > 0 {
		res.rec = p.newRecord()
	}
	return res
}

// cutLine splits off the first line of data (without its "\n" or "\r\n").
func cutLine(data []byte) (line, rest []byte) {
	i := bytes.IndexByte(data, '\n')
	if i < 0 {
		line, rest = data, nil
	} else {
		line, rest = data[:i], data[i+1:]
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, rest
}

// splitPipes appends the '|'-separated pieces of rec to dst.
func splitPipes(dst [][]byte, rec []byte) [][]byte {
	for {
		i := bytes.IndexByte(rec, '|')
		if i < 0 {
			return append(dst, rec)
		}
		dst = append(dst, rec[:i])
		rec = rec[i+1:]
	}
}

// split turns the pieces of a record (p.pieces) into exactly nf fields. When the record has more
// delimiters than columns, the extra ones must belong to free-text columns
// (JobName, SubmitLine, Constraints, ...): recoverPipes finds the alignment
// in which every other column fits its syntax.
func (p *sacctParser) split() ([][]byte, *ParseError) {
	nf := p.lay.nf
	pieces := p.pieces
	if p.lay.trailing && len(pieces) > 0 && len(pieces[len(pieces)-1]) == 0 {
		pieces = pieces[:len(pieces)-1]
	}
	p.pieces = pieces
	switch {
	case len(pieces) == nf:
		return pieces, nil
	case len(pieces) < nf:
		return nil, &ParseError{File: p.name, Err: fmt.Errorf("too few fields: %d of %d", len(pieces), nf)}
	}
	fields, err := p.recoverPipes(pieces)
	if err != nil {
		return nil, &ParseError{File: p.name, Err: err}
	}
	return fields, nil
}

// recoverPipes assigns the pieces of a record split on every '|' to the
// columns so that free-text columns absorb the extra delimiters and every
// other column fits its syntax. It accepts the result only when all fitting
// alignments agree on the columns fairledger uses.
func (p *sacctParser) recoverPipes(pieces [][]byte) ([][]byte, error) {
	nf := p.lay.nf
	extra := len(pieces) - nf
	cls := p.lay.classes
	free := 0
	for _, c := range cls {
		if c == classFreeText {
			free++
		}
	}
	if free == 0 {
		return nil, fmt.Errorf("too many fields: %d of %d and no free-text column to hold a '|'", len(pieces), nf)
	}
	// dead[col*(extra+1)+used] marks states proven to have no solution.
	dead := make([]bool, (nf+1)*(extra+1))
	var sols [][]int // per solution: pieces taken by each column
	take := make([]int, nf)
	const maxSolutions = 64
	var walk func(col, pos int) bool
	walk = func(col, pos int) bool {
		used := pos - col
		if col == nf {
			if pos == len(pieces) {
				sols = append(sols, append([]int(nil), take...))
				return true
			}
			return false
		}
		if dead[col*(extra+1)+used] {
			return false
		}
		found := false
		maxTake := 1
		if cls[col] == classFreeText {
			maxTake = 1 + extra - used
		}
		for k := 1; k <= maxTake && len(sols) < maxSolutions; k++ {
			if k == 1 && !cls[col].fits(pieces[pos]) {
				continue
			}
			take[col] = k
			if walk(col+1, pos+k) {
				found = true
			}
		}
		if !found {
			dead[col*(extra+1)+used] = true
		}
		return found
	}
	walk(0, 0)
	if len(sols) == 0 {
		return nil, fmt.Errorf("too many fields (%d of %d) and no alignment of the extra '|' fits the columns", len(pieces), nf)
	}
	if len(sols) >= maxSolutions {
		return nil, fmt.Errorf("too many fields (%d of %d): the extra '|' can be placed in too many ways", len(pieces), nf)
	}
	build := func(sol []int) [][]byte {
		out := make([][]byte, nf)
		pos := 0
		for c, k := range sol {
			out[c] = bytes.Join(pieces[pos:pos+k], []byte{'|'})
			pos += k
		}
		return out
	}
	// Prefer alignments whose free-text values neither start nor end with
	// the stray delimiter: a '|' typed inside a job name sits between
	// characters far more often than at its edge.
	score := func(fields [][]byte) int {
		n := 0
		for c, f := range fields {
			if cls[c] == classFreeText && len(f) > 0 && (f[0] == '|' || f[len(f)-1] == '|') {
				n++
			}
		}
		return n
	}
	var best [][]byte
	bestScore := -1
	ambiguous := ""
	for _, sol := range sols {
		alt := build(sol)
		sc := score(alt)
		switch {
		case best == nil || sc < bestScore:
			best, bestScore, ambiguous = alt, sc, ""
		case sc == bestScore:
			for c, col := range p.lay.col {
				if col != colOther && !bytes.Equal(alt[c], best[c]) {
					ambiguous = p.lay.titles[c]
				}
			}
		}
	}
	if ambiguous != "" {
		return nil, fmt.Errorf("too many fields (%d of %d): the extra '|' could belong to %s or elsewhere", len(pieces), nf, ambiguous)
	}
	return best, nil
}

func (p *sacctParser) get(fields [][]byte, c sacctCol) []byte {
	if i := p.lay.idx[c]; i >= 0 {
		return fields[i]
	}
	return nil
}

func (p *sacctParser) has(c sacctCol) bool { return p.lay.idx[c] >= 0 }

func (p *sacctParser) fieldErr(c sacctCol, v []byte, err error) *ParseError {
	title := ""
	if i := p.lay.idx[c]; i >= 0 {
		title = p.lay.titles[i]
	}
	return &ParseError{File: p.name, Field: title, Value: string(v), Err: err}
}

// parseRow classifies and parses one record; it appends it to the columns
// or counts it as skipped, or returns why it is rejected.
func (p *sacctParser) parseRow(f [][]byte, line int, st *Stats) *ParseError {
	r := &p.row
	r.line = line
	// Identity first: steps and pending arrays are skipped whatever else
	// the row holds.
	idCol := colJobID
	if !p.has(colJobID) {
		idCol = colJobIDRaw
	}
	if !p.has(idCol) {
		e := *p.missErr
		return &e
	}
	r.jobID = p.get(f, idCol)
	id, err := parseJobID(r.jobID)
	if err != nil {
		return p.fieldErr(idCol, r.jobID, err)
	}
	r.id = id
	switch id.kind {
	case jobStep:
		st.Skip(SkipJobStep)
		return nil
	case jobArrayPending:
		st.Skip(SkipPendingArray)
		return nil
	}
	if p.missErr != nil {
		e := *p.missErr
		return &e
	}
	state := p.get(f, colState)
	if len(state) == 0 {
		return p.fieldErr(colState, state, errEmpty)
	}
	r.state, r.cancelledBy = state, nil
	if i := bytes.Index(state, []byte(" by ")); i > 0 {
		r.state, r.cancelledBy = state[:i], state[i+4:]
	}
	if string(r.state) == "PENDING" {
		st.Skip(SkipPending)
		return nil
	}
	start := p.get(f, colStart)
	var kind timeKind
	r.start, kind, err = p.clock.parseTime(start)
	if err != nil {
		return p.fieldErr(colStart, start, err)
	}
	if kind != timeSet {
		st.Skip(SkipNeverStarted)
		return nil
	}
	if r.user = p.get(f, colUser); len(r.user) == 0 {
		return p.fieldErr(colUser, r.user, errEmpty)
	}
	if r.account = p.get(f, colAccount); len(r.account) == 0 {
		return p.fieldErr(colAccount, r.account, errEmpty)
	}
	r.partition = p.get(f, colPartition)
	r.qos = p.get(f, colQOS)
	r.cluster = p.get(f, colCluster)
	r.exitCode = p.get(f, colExitCode)
	r.jobName = p.get(f, colJobName)

	if r.rawOK = false; p.has(colJobIDRaw) {
		v := p.get(f, colJobIDRaw)
		if r.raw, err = parseInt(v); err != nil {
			return p.fieldErr(colJobIDRaw, v, err)
		}
		r.rawOK = true
	} else if id.kind == jobPlain {
		r.raw, r.rawOK = id.id, true
	}
	if perr := p.parseTimes(f, r); perr != nil {
		return perr
	}
	if perr := p.parseCounts(f, r); perr != nil {
		return perr
	}
	if perr := p.parseTRES(f, r); perr != nil {
		return perr
	}
	p.appendRow(r)
	st.Ingested++
	return nil
}

func (p *sacctParser) optTime(f [][]byte, c sacctCol) (int64, bool, *ParseError) {
	v := p.get(f, c)
	t, k, err := p.clock.parseTime(v)
	if err != nil {
		return 0, false, p.fieldErr(c, v, err)
	}
	return t, k == timeSet, nil
}

func (p *sacctParser) optDuration(f [][]byte, c sacctCol) (int64, bool, *ParseError) {
	v := p.get(f, c)
	if len(v) == 0 {
		return 0, false, nil
	}
	d, err := parseElapsed(v)
	if err != nil {
		return 0, false, p.fieldErr(c, v, err)
	}
	return d, true, nil
}

func (p *sacctParser) parseTimes(f [][]byte, r *sacctRow) *ParseError {
	var perr *ParseError
	if r.submit, r.submitOK, perr = p.optTime(f, colSubmit); perr != nil {
		return perr
	}
	if r.eligible, r.eligibleOK, perr = p.optTime(f, colEligible); perr != nil {
		return perr
	}
	if r.end, r.endOK, perr = p.optTime(f, colEnd); perr != nil {
		return perr
	}
	if r.elapsed, r.elapsedOK, perr = p.optDuration(f, colElapsed); perr != nil {
		return perr
	}
	if p.has(colElapsedRaw) {
		v := p.get(f, colElapsedRaw)
		if len(v) > 0 {
			n, err := parseInt(v)
			if err != nil {
				return p.fieldErr(colElapsedRaw, v, err)
			}
			r.elapsed, r.elapsedOK = n, true
		}
	}
	if r.suspended, r.suspendedOK, perr = p.optDuration(f, colSuspended); perr != nil {
		return perr
	}
	r.timelimitOK = false
	if v := p.get(f, colTimelimit); len(v) > 0 {
		switch string(v) {
		case "UNLIMITED", "Partition_Limit", "INVALID":
		default:
			d, err := parseElapsed(v)
			if err != nil {
				return p.fieldErr(colTimelimit, v, err)
			}
			r.timelimit, r.timelimitOK = d/60, true
		}
	}
	switch string(r.state) {
	case "RUNNING", "SUSPENDED", "COMPLETING", "CONFIGURING", "RESIZING", "REQUEUE_HOLD", "SIGNALING", "STAGE_OUT":
		// Still running when sacct looked: charged up to the window's end.
		// (XDMoD's dumps print End = Start for running jobs.)
		r.endOK = false
		return nil
	}
	if !r.endOK {
		// A finished job whose End was never recorded: Elapsed (which
		// excludes suspended time) still says how long it ran.
		if !r.elapsedOK {
			return p.fieldErr(colEnd, p.get(f, colEnd), errors.New("unknown end of a finished job and no Elapsed to derive it from"))
		}
		r.end, r.endOK = r.start+r.elapsed, true
		if r.suspendedOK {
			r.end += r.suspended
		}
	}
	if r.end < r.start {
		return p.fieldErr(colEnd, p.get(f, colEnd), errors.New("before Start"))
	}
	return nil
}

func (p *sacctParser) parseCounts(f [][]byte, r *sacctRow) *ParseError {
	r.nnodes, r.cpus = -1, -1
	if v := p.get(f, colNNodes); len(v) > 0 {
		n, err := parseInt(v)
		if err != nil {
			return p.fieldErr(colNNodes, v, err)
		}
		r.nnodes = n
	}
	if v := p.get(f, colAllocCPUS); len(v) > 0 {
		n, err := parseInt(v)
		if err != nil {
			return p.fieldErr(colAllocCPUS, v, err)
		}
		r.cpus = n
	}
	return nil
}

// parseTRES parses AllocTRES completely ("billing=4,cpu=4,gres/gpu:a100=1,
// mem=16G,node=1"): every entry goes to the alloc_tres map, the dense TRES
// to their columns, billing= to billing_sacct. Entries are split on ',' and
// '=' by name, never by position.
func (p *sacctParser) parseTRES(f [][]byte, r *sacctRow) *ParseError {
	v := p.get(f, colAllocTRES)
	r.tres = r.tres[:0]
	clear(r.dense)
	r.billingOK = false
	hasGPU := false
	gpuTyped := 0.0
	hasCPU, hasNode := false, false
	lower := p.lower[:0]
	for len(v) > 0 {
		item := v
		if i := bytes.IndexByte(v, ','); i >= 0 {
			item, v = v[:i], v[i+1:]
		} else {
			v = nil
		}
		if len(item) == 0 {
			continue
		}
		eq := bytes.IndexByte(item, '=')
		if eq <= 0 {
			return p.fieldErr(colAllocTRES, item, errors.New("TRES entry is not name=count"))
		}
		name := item[:eq]
		for _, c := range name {
			if c >= 'A' && c <= 'Z' {
				start := len(lower)
				lower = append(lower, name...)
				name = bytes.ToLower(lower[start:])
				break
			}
		}
		val, err := parseTRESValue(name, item[eq+1:])
		if err != nil {
			return p.fieldErr(colAllocTRES, item, err)
		}
		switch string(name) {
		case "energy":
			continue // energy is never weighted (§2.3) and sacct never prints it for allocations
		case "billing":
			r.billing, r.billingOK = val, true
		case "gres/gpu":
			hasGPU = true
		case "cpu":
			hasCPU = true
		case "node":
			hasNode = true
		}
		if len(name) > 9 && string(name[:9]) == "gres/gpu:" {
			gpuTyped += val
		}
		if i, ok := p.denseI[string(name)]; ok {
			r.dense[i] = val
		}
		r.tres = append(r.tres, tresEntry{name: name, v: val})
	}
	p.lower = lower
	if !hasGPU && gpuTyped > 0 {
		r.dense[p.gpuIdx] = gpuTyped
	}
	// Files without AllocTRES values (older XDMoD dumps) still say how many
	// CPUs and nodes were allocated.
	if !hasCPU && r.cpus >= 0 {
		r.dense[p.denseI["cpu"]] = float64(r.cpus)
	}
	if !hasNode && r.nnodes >= 0 {
		r.dense[p.denseI["node"]] = float64(r.nnodes)
	}
	if r.cpus < 0 {
		r.cpus = int64(r.dense[p.denseI["cpu"]])
	}
	if r.nnodes < 0 {
		r.nnodes = int64(r.dense[p.denseI["node"]])
	}
	return nil
}

// appendRow appends a parsed, accepted row to the columns of the block.
func (p *sacctParser) appendRow(r *sacctRow) {
	c := &p.cols
	cl := r.cluster
	if len(cl) == 0 {
		cl = p.defCl
	}
	c.cluster.append(cl)
	c.jobID.append(r.jobID)
	c.raw.appendOpt(r.raw, r.rawOK)
	switch r.id.kind {
	case jobArrayTask:
		c.arrJob.append(r.id.id)
		c.arrTask.append(r.id.task)
		c.hetJob.appendNull()
		c.hetOff.appendNull()
	case jobHetComponent:
		c.arrJob.appendNull()
		c.arrTask.appendNull()
		c.hetJob.append(r.id.id)
		c.hetOff.append(r.id.task)
	default:
		c.arrJob.appendNull()
		c.arrTask.appendNull()
		c.hetJob.appendNull()
		c.hetOff.appendNull()
	}
	c.user.append(r.user)
	c.account.append(r.account)
	c.partition.append(r.partition)
	c.qos.append(r.qos) // nil (no QOS column) is null
	c.state.append(r.state)
	if r.cancelledBy != nil {
		c.cancelledBy.append(r.cancelledBy)
	} else {
		c.cancelledBy.appendNull()
	}
	c.submit.appendOpt(r.submit, r.submitOK)
	c.eligible.appendOpt(r.eligible, r.eligibleOK)
	c.start.append(r.start)
	c.end.appendOpt(r.end, r.endOK)
	c.elapsed.appendOpt(r.elapsed, r.elapsedOK)
	c.suspended.appendOpt(r.suspended, r.suspendedOK)
	c.timelimit.appendOpt(r.timelimit, r.timelimitOK)
	c.nnodes.append(r.nnodes)
	c.cpus.append(r.cpus)
	c.exitCode.append(r.exitCode) // nil (no column) is ""
	c.jobName.append(r.jobName)
	c.tres.append(r.tres)
	c.billing.appendOpt(r.billing, r.billingOK)
	for i := range c.dense {
		c.dense[i].append(r.dense[i])
	}
	c.srcLine.append(int64(r.line))
	c.rows++
}

// newRecord copies the block's columns into Arrow buffers from the
// parser's allocator and returns them as a batch of p.schema. The batch
// shares no memory with the parser, which reuses its columns for the next
// block.
func (p *sacctParser) newRecord() arrow.Record {
	c := &p.cols
	cols := make([]arrow.Array, p.schema.NumFields())
	put := func(name string, col arrowColumn) {
		i, err := schemas.Index(p.schema, name)
		if err != nil {
			panic(err) // the schema comes from schemas.Jobs: a missing column is a programming error
		}
		d := col.arrowData(p.mem, p.schema.Field(i).Type)
		cols[i] = array.MakeFromData(d)
		d.Release()
	}
	put(schemas.ColCluster, &c.cluster)
	put(schemas.ColJobID, &c.jobID)
	put(schemas.ColJobIDRaw, &c.raw)
	put(schemas.ColArrayJobID, &c.arrJob)
	put(schemas.ColArrayTaskID, &c.arrTask)
	put(schemas.ColHetJobID, &c.hetJob)
	put(schemas.ColHetJobOffset, &c.hetOff)
	put(schemas.ColUser, &c.user)
	put(schemas.ColAccount, &c.account)
	put(schemas.ColPartition, &c.partition)
	put(schemas.ColQOS, &c.qos)
	put(schemas.ColState, &c.state)
	put(schemas.ColCancelledBy, &c.cancelledBy)
	put(schemas.ColSubmit, &c.submit)
	put(schemas.ColEligible, &c.eligible)
	put(schemas.ColStart, &c.start)
	put(schemas.ColEnd, &c.end)
	put(schemas.ColElapsedSec, &c.elapsed)
	put(schemas.ColSuspendedSec, &c.suspended)
	put(schemas.ColTimelimitMin, &c.timelimit)
	put(schemas.ColNNodes, &c.nnodes)
	put(schemas.ColAllocCPUs, &c.cpus)
	put(schemas.ColExitCode, &c.exitCode)
	put(schemas.ColJobName, &c.jobName)
	put(schemas.ColAllocTRES, &c.tres)
	put(schemas.ColBillingSacct, &c.billing)
	for i, t := range p.lay.dense {
		put(schemas.DenseTRESColumn(t), &c.dense[i])
	}
	put(schemas.ColSourceFile, constDict{value: p.name, rows: c.rows})
	put(schemas.ColSourceLine, &c.srcLine)
	for i, a := range cols {
		if a == nil {
			panic(fmt.Sprintf("ingest: jobs schema column %q is not filled", p.schema.Field(i).Name))
		}
	}
	rec := array.NewRecord(p.schema, cols, int64(c.rows))
	for _, a := range cols {
		a.Release()
	}
	return rec
}

// jobColumns holds the rows of the block being parsed, one plain Go slice
// (or a few) per column of the jobs schema: appending a row costs a slice
// append per column and a map lookup per dictionary column whose value
// changed since the previous row. newRecord turns them into Arrow arrays
// once per block.
type jobColumns struct {
	rows                                  int
	cluster, user, account, partition     dictColumn
	qos, state                            dictColumn
	jobID, cancelledBy, exitCode, jobName stringColumn
	raw, arrJob, arrTask, hetJob, hetOff  fixedColumn[int64]
	elapsed, suspended, timelimit         fixedColumn[int64]
	nnodes, cpus, srcLine                 fixedColumn[int64]
	submit, eligible, start, end          fixedColumn[int64] // Unix seconds
	tres                                  tresColumn
	billing                               fixedColumn[float64]
	dense                                 []fixedColumn[float64] // in sacctLayout.dense order
}

func (c *jobColumns) init(dense int) {
	for _, d := range c.dicts() {
		d.index = make(map[string]int32)
	}
	c.dense = make([]fixedColumn[float64], dense)
	c.reset()
}

func (c *jobColumns) dicts() []*dictColumn {
	return []*dictColumn{&c.cluster, &c.user, &c.account, &c.partition, &c.qos, &c.state}
}

// reset empties every column for a new block, keeping the memory.
func (c *jobColumns) reset() {
	c.rows = 0
	for _, d := range c.dicts() {
		d.reset()
	}
	for _, s := range []*stringColumn{&c.jobID, &c.cancelledBy, &c.exitCode, &c.jobName} {
		s.reset()
	}
	for _, f := range []*fixedColumn[int64]{&c.raw, &c.arrJob, &c.arrTask, &c.hetJob, &c.hetOff,
		&c.elapsed, &c.suspended, &c.timelimit, &c.nnodes, &c.cpus, &c.srcLine,
		&c.submit, &c.eligible, &c.start, &c.end} {
		f.reset()
	}
	c.tres.reset()
	c.billing.reset()
	for i := range c.dense {
		c.dense[i].reset()
	}
}

// arrowColumn is a column that can be copied into an Arrow array of type dt.
type arrowColumn interface {
	arrowData(mem memory.Allocator, dt arrow.DataType) *array.Data
}

// validity is a column's Arrow validity bitmap (bit i set: row i holds a
// value). It is only filled once the block's first null arrives: until
// then every row is valid and the column needs no bitmap at all.
type validity struct {
	bits  []byte
	nulls int
}

// markValid records row i, the column's next row, as valid.
func (v *validity) markValid(i int) {
	if v.nulls == 0 {
		return
	}
	if i>>3 == len(v.bits) {
		v.bits = append(v.bits, 0)
	}
	v.bits[i>>3] |= 1 << (i & 7)
}

// markNull records row i, the column's next row, as null.
func (v *validity) markNull(i int) {
	if v.nulls == 0 {
		// The first null: rows 0 to i-1 were all valid.
		v.bits = v.bits[:0]
		for j := 0; j < i>>3; j++ {
			v.bits = append(v.bits, 0xff)
		}
		if i&7 != 0 {
			v.bits = append(v.bits, 1<<(i&7)-1)
		}
	}
	if i>>3 == len(v.bits) {
		v.bits = append(v.bits, 0)
	}
	v.bits[i>>3] &^= 1 << (i & 7)
	v.nulls++
}

func (v *validity) reset() { v.nulls = 0 }

// buffer returns the bitmap of a column of n rows, or nil if it has no nulls.
func (v *validity) buffer(mem memory.Allocator, n int) *memory.Buffer {
	if v.nulls == 0 {
		return nil
	}
	return newBuffer(mem, v.bits[:bitutil.BytesForBits(int64(n))])
}

// fixedColumn is a column of fixed-width values (int64 for integers and
// timestamps, float64, int32 for dictionary codes).
type fixedColumn[T int32 | int64 | float64] struct {
	vals []T
	validity
}

func (c *fixedColumn[T]) append(v T) {
	c.markValid(len(c.vals))
	c.vals = append(c.vals, v)
}

func (c *fixedColumn[T]) appendNull() {
	c.markNull(len(c.vals))
	c.vals = append(c.vals, 0)
}

func (c *fixedColumn[T]) appendOpt(v T, ok bool) {
	if ok {
		c.append(v)
	} else {
		c.appendNull()
	}
}

func (c *fixedColumn[T]) reset() {
	c.vals = c.vals[:0]
	c.validity.reset()
}

func (c *fixedColumn[T]) arrowData(mem memory.Allocator, dt arrow.DataType) *array.Data {
	n := len(c.vals)
	return newData(dt, n, []*memory.Buffer{c.buffer(mem, n), newBuffer(mem, arrow.GetBytes(c.vals))}, nil, c.nulls)
}

// stringColumn is a utf8 column: the values back to back in data, row i
// in data[offsets[i]:offsets[i+1]]. A column never holds more bytes than
// its block (the values are pieces of the block's lines, or their
// lower-case copies), so the int32 offsets of Arrow's utf8 type only
// overflow for blocks of 2 GiB.
type stringColumn struct {
	offsets []int32 // one more than the rows
	data    []byte
	validity
}

// append appends v; nil, like an empty v, is the empty string.
func (c *stringColumn) append(v []byte) {
	c.markValid(len(c.offsets) - 1)
	c.data = append(c.data, v...)
	c.offsets = append(c.offsets, int32(len(c.data)))
}

func (c *stringColumn) appendNull() {
	c.markNull(len(c.offsets) - 1)
	c.offsets = append(c.offsets, int32(len(c.data)))
}

// value returns row i.
func (c *stringColumn) value(i int32) []byte { return c.data[c.offsets[i]:c.offsets[i+1]] }

func (c *stringColumn) reset() {
	c.offsets = append(c.offsets[:0], 0)
	c.data = c.data[:0]
	c.validity.reset()
}

func (c *stringColumn) arrowData(mem memory.Allocator, dt arrow.DataType) *array.Data {
	n := len(c.offsets) - 1
	return newData(dt, n, []*memory.Buffer{c.buffer(mem, n), newBuffer(mem, arrow.GetBytes(c.offsets)), newBuffer(mem, c.data)}, nil, c.nulls)
}

// dictColumn is a dictionary<int32, utf8> column: per row a code into the
// block's dictionary, which lists the block's distinct values in order of
// first appearance. Each block starts a new dictionary, so a batch does not
// depend on which worker parsed the blocks before it.
type dictColumn struct {
	codes  fixedColumn[int32]
	index  map[string]int32 // value → code
	values stringColumn     // the dictionary
	last   int32            // code of the last non-null row, -1 if none
}

// append appends v; nil is null (an empty v is the empty string).
func (c *dictColumn) append(v []byte) {
	if v == nil {
		c.codes.appendNull()
		return
	}
	// Neighbouring rows often share a value (cluster, state, QOS):
	// comparing with the last one is cheaper than hashing.
	k := c.last
	if k < 0 || !bytes.Equal(v, c.values.value(k)) {
		var ok bool
		if k, ok = c.index[string(v)]; !ok {
			k = int32(len(c.index))
			c.index[string(v)] = k
			c.values.append(v)
		}
		c.last = k
	}
	c.codes.append(k)
}

func (c *dictColumn) reset() {
	c.codes.reset()
	clear(c.index)
	c.values.reset()
	c.last = -1
}

func (c *dictColumn) arrowData(mem memory.Allocator, dt arrow.DataType) *array.Data {
	return dictData(mem, dt, &c.codes, &c.values)
}

// dictData builds a dictionary array's data from its codes and dictionary.
func dictData(mem memory.Allocator, dt arrow.DataType, codes *fixedColumn[int32], values *stringColumn) *array.Data {
	dict := values.arrowData(mem, dt.(*arrow.DictionaryType).ValueType)
	defer dict.Release()
	n := len(codes.vals)
	bufs := []*memory.Buffer{codes.buffer(mem, n), newBuffer(mem, arrow.GetBytes(codes.vals))}
	d := array.NewDataWithDictionary(dt, n, bufs, codes.nulls, 0, dict)
	releaseBuffers(bufs)
	return d
}

// constDict is a dictionary column holding the same value in every row
// (source_file).
type constDict struct {
	value string
	rows  int
}

func (c constDict) arrowData(mem memory.Allocator, dt arrow.DataType) *array.Data {
	values := stringColumn{offsets: []int32{0, int32(len(c.value))}, data: []byte(c.value)}
	codes := fixedColumn[int32]{vals: make([]int32, c.rows)} // code 0 in every row
	return dictData(mem, dt, &codes, &values)
}

// tresColumn is the alloc_tres map<utf8, float64> column: row i holds the
// entries offsets[i] to offsets[i+1] of keys and vals, in input order.
type tresColumn struct {
	offsets []int32 // one more than the rows
	keys    stringColumn
	vals    fixedColumn[float64]
}

func (c *tresColumn) append(entries []tresEntry) {
	for _, e := range entries {
		c.keys.append(e.name)
		c.vals.append(e.v)
	}
	c.offsets = append(c.offsets, int32(len(c.vals.vals)))
}

func (c *tresColumn) reset() {
	c.offsets = append(c.offsets[:0], 0)
	c.keys.reset()
	c.vals.reset()
}

func (c *tresColumn) arrowData(mem memory.Allocator, dt arrow.DataType) *array.Data {
	mt := dt.(*arrow.MapType)
	keys := c.keys.arrowData(mem, mt.KeyType())
	vals := c.vals.arrowData(mem, mt.ItemType())
	entries := newData(mt.Elem(), len(c.vals.vals), []*memory.Buffer{nil}, []arrow.ArrayData{keys, vals}, 0)
	return newData(mt, len(c.offsets)-1, []*memory.Buffer{nil, newBuffer(mem, arrow.GetBytes(c.offsets))}, []arrow.ArrayData{entries}, 0)
}

// newBuffer copies b into a buffer from mem.
func newBuffer(mem memory.Allocator, b []byte) *memory.Buffer {
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(len(b))
	copy(buf.Bytes(), b)
	return buf
}

// newData is array.NewData that takes over the caller's references to
// buffers and children.
func newData(dt arrow.DataType, n int, buffers []*memory.Buffer, children []arrow.ArrayData, nulls int) *array.Data {
	d := array.NewData(dt, n, buffers, children, nulls, 0)
	releaseBuffers(buffers)
	for _, c := range children {
		c.Release()
	}
	return d
}

func releaseBuffers(bufs []*memory.Buffer) {
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
}

// FormatReject renders a rejected record for a rejects file: position,
// field, value, reason and the raw record, tab-separated, with newlines in
// the raw text escaped.
func FormatReject(err *ParseError, record string) string {
	reason := ""
	if err.Err != nil {
		reason = err.Err.Error()
	}
	return fmt.Sprintf("%s\t%d\t%s\t%s\t%s\t%s", err.File, err.Line, err.Field, strconv.Quote(err.Value), reason, strconv.Quote(record))
}
