package ingest

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"

	"github.com/fairledger/fairledger/schemas"
)

// sacctParser turns blocks of sacct lines into record batches. Each worker
// goroutine owns one; its scratch buffers are reused from row to row.
type sacctParser struct {
	name   string
	lay    *sacctLayout
	clock  *localClock
	defCl  string
	rb     *array.RecordBuilder
	denseI map[string]int
	gpuIdx int

	fields  [][]byte
	pieces  [][]byte
	joined  []byte
	lower   []byte
	row     sacctRow
	bld     jobBuilders
	missErr *ParseError
}

type jobBuilders struct {
	cluster, user, account, partition, qos, state, srcFile *array.BinaryDictionaryBuilder
	jobID, cancelledBy, exitCode, jobName                  *array.StringBuilder
	raw, arrJob, arrTask, hetJob, hetOff                   *array.Int64Builder
	elapsed, suspended, timelimit, nnodes, cpus, srcLine   *array.Int64Builder
	submit, eligible, start, end                           *array.TimestampBuilder
	tres                                                   *array.MapBuilder
	tresKey                                                *array.StringBuilder
	tresVal                                                *array.Float64Builder
	billing                                                *array.Float64Builder
	dense                                                  []*array.Float64Builder
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
		defCl:  opt.Cluster,
		rb:     array.NewRecordBuilder(opt.Allocator, schema),
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
	f := func(col string) array.Builder {
		i, err := schemas.Index(schema, col)
		if err != nil {
			panic(err) // the schema comes from schemas.Jobs: a missing column is a programming error
		}
		return p.rb.Field(i)
	}
	b := &p.bld
	b.cluster = f(schemas.ColCluster).(*array.BinaryDictionaryBuilder)
	b.user = f(schemas.ColUser).(*array.BinaryDictionaryBuilder)
	b.account = f(schemas.ColAccount).(*array.BinaryDictionaryBuilder)
	b.partition = f(schemas.ColPartition).(*array.BinaryDictionaryBuilder)
	b.qos = f(schemas.ColQOS).(*array.BinaryDictionaryBuilder)
	b.state = f(schemas.ColState).(*array.BinaryDictionaryBuilder)
	b.srcFile = f(schemas.ColSourceFile).(*array.BinaryDictionaryBuilder)
	b.jobID = f(schemas.ColJobID).(*array.StringBuilder)
	b.cancelledBy = f(schemas.ColCancelledBy).(*array.StringBuilder)
	b.exitCode = f(schemas.ColExitCode).(*array.StringBuilder)
	b.jobName = f(schemas.ColJobName).(*array.StringBuilder)
	b.raw = f(schemas.ColJobIDRaw).(*array.Int64Builder)
	b.arrJob = f(schemas.ColArrayJobID).(*array.Int64Builder)
	b.arrTask = f(schemas.ColArrayTaskID).(*array.Int64Builder)
	b.hetJob = f(schemas.ColHetJobID).(*array.Int64Builder)
	b.hetOff = f(schemas.ColHetJobOffset).(*array.Int64Builder)
	b.elapsed = f(schemas.ColElapsedSec).(*array.Int64Builder)
	b.suspended = f(schemas.ColSuspendedSec).(*array.Int64Builder)
	b.timelimit = f(schemas.ColTimelimitMin).(*array.Int64Builder)
	b.nnodes = f(schemas.ColNNodes).(*array.Int64Builder)
	b.cpus = f(schemas.ColAllocCPUs).(*array.Int64Builder)
	b.srcLine = f(schemas.ColSourceLine).(*array.Int64Builder)
	b.submit = f(schemas.ColSubmit).(*array.TimestampBuilder)
	b.eligible = f(schemas.ColEligible).(*array.TimestampBuilder)
	b.start = f(schemas.ColStart).(*array.TimestampBuilder)
	b.end = f(schemas.ColEnd).(*array.TimestampBuilder)
	b.tres = f(schemas.ColAllocTRES).(*array.MapBuilder)
	b.tresKey = b.tres.KeyBuilder().(*array.StringBuilder)
	b.tresVal = b.tres.ItemBuilder().(*array.Float64Builder)
	b.billing = f(schemas.ColBillingSacct).(*array.Float64Builder)
	for _, t := range lay.dense {
		b.dense = append(b.dense, f(schemas.DenseTRESColumn(t)).(*array.Float64Builder))
	}
	return p
}

func (p *sacctParser) release() { p.rb.Release() }

// reserve sizes the builders for a block of about n records, so that they
// are allocated once per block instead of doubling their way up (which
// made the garbage collector the largest cost of ingest).
func (p *sacctParser) reserve(n int) {
	b := &p.bld
	for _, d := range []*array.BinaryDictionaryBuilder{b.cluster, b.user, b.account, b.partition, b.qos, b.state, b.srcFile} {
		d.Reserve(n)
	}
	for _, sb := range []*array.StringBuilder{b.jobID, b.cancelledBy, b.exitCode, b.jobName} {
		sb.Reserve(n)
	}
	b.jobID.ReserveData(n * 10)
	b.exitCode.ReserveData(n * 4)
	b.jobName.ReserveData(n * 16)
	for _, ib := range []*array.Int64Builder{b.raw, b.arrJob, b.arrTask, b.hetJob, b.hetOff, b.elapsed, b.suspended, b.timelimit, b.nnodes, b.cpus, b.srcLine} {
		ib.Reserve(n)
	}
	for _, tb := range []*array.TimestampBuilder{b.submit, b.eligible, b.start, b.end} {
		tb.Reserve(n)
	}
	b.tres.Reserve(n)
	b.tresKey.Reserve(5 * n)
	b.tresKey.ReserveData(5 * 6 * n)
	b.tresVal.Reserve(5 * n)
	b.billing.Reserve(n)
	for _, d := range b.dense {
		d.Reserve(n)
	}
}

// parseChunk parses every record of a block. Blocks start on a record
// boundary (see findCut), so records never straddle two blocks unless the
// input is malformed, in which case the pieces are rejected, not lost.
func (p *sacctParser) parseChunk(c chunk) chunkResult {
	res := chunkResult{seq: c.seq, stats: Stats{File: p.name}}
	p.reserve(c.lines + 1)
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
		res.rec = p.rb.NewRecord()
	} else {
		// Nothing appended: keep the builders empty for the next block.
		r := p.rb.NewRecord()
		r.Release()
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

// parseRow classifies and parses one record; it appends it to the builders
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

func appendOpt(b *array.Int64Builder, v int64, ok bool) {
	if ok {
		b.Append(v)
	} else {
		b.AppendNull()
	}
}

func appendOptTime(b *array.TimestampBuilder, v int64, ok bool) {
	if ok {
		b.Append(arrow.Timestamp(v))
	} else {
		b.AppendNull()
	}
}

func (p *sacctParser) appendRow(r *sacctRow) {
	b := &p.bld
	cl := r.cluster
	if len(cl) == 0 {
		cl = []byte(p.defCl)
	}
	_ = b.cluster.Append(cl)
	b.jobID.BinaryBuilder.Append(r.jobID)
	appendOpt(b.raw, r.raw, r.rawOK)
	switch r.id.kind {
	case jobArrayTask:
		b.arrJob.Append(r.id.id)
		b.arrTask.Append(r.id.task)
		b.hetJob.AppendNull()
		b.hetOff.AppendNull()
	case jobHetComponent:
		b.arrJob.AppendNull()
		b.arrTask.AppendNull()
		b.hetJob.Append(r.id.id)
		b.hetOff.Append(r.id.task)
	default:
		b.arrJob.AppendNull()
		b.arrTask.AppendNull()
		b.hetJob.AppendNull()
		b.hetOff.AppendNull()
	}
	_ = b.user.Append(r.user)
	_ = b.account.Append(r.account)
	_ = b.partition.Append(r.partition)
	_ = b.qos.Append(r.qos)
	_ = b.state.Append(r.state)
	if r.cancelledBy != nil {
		b.cancelledBy.BinaryBuilder.Append(r.cancelledBy)
	} else {
		b.cancelledBy.AppendNull()
	}
	appendOptTime(b.submit, r.submit, r.submitOK)
	appendOptTime(b.eligible, r.eligible, r.eligibleOK)
	b.start.Append(arrow.Timestamp(r.start))
	appendOptTime(b.end, r.end, r.endOK)
	appendOpt(b.elapsed, r.elapsed, r.elapsedOK)
	appendOpt(b.suspended, r.suspended, r.suspendedOK)
	appendOpt(b.timelimit, r.timelimit, r.timelimitOK)
	b.nnodes.Append(r.nnodes)
	b.cpus.Append(r.cpus)
	b.exitCode.BinaryBuilder.Append(r.exitCode)
	b.jobName.BinaryBuilder.Append(r.jobName)
	b.tres.Append(true)
	for _, e := range r.tres {
		b.tresKey.BinaryBuilder.Append(e.name)
		b.tresVal.Append(e.v)
	}
	if r.billingOK {
		b.billing.Append(r.billing)
	} else {
		b.billing.AppendNull()
	}
	for i, d := range b.dense {
		d.Append(r.dense[i])
	}
	_ = b.srcFile.AppendString(p.name)
	b.srcLine.Append(int64(r.line))
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
