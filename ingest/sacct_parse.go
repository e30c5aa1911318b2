package ingest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// sacctParser turns blocks of sacct lines into record batches. Each worker
// goroutine owns one; its scratch buffers, the per-column slices included,
// are reused from row to row and from block to block, except the
// fixed-width columns' buffers, which each block's batch takes over.
type sacctParser struct {
	name   string
	lay    *sacctLayout
	clock  *localClock
	defCl  []byte // never nil, so that an empty default is "" and not null
	mem    memory.Allocator
	schema *arrow.Schema
	denseI map[string]int
	gpuIdx int
	// idField is the file column of the JobID (or, failing that, the
	// JobIDRaw), -1 if the file has neither.
	idField int

	// cpuIdx and nodeIdx are the dense indexes of cpu and node (0 if
	// not dense, as looking them up in denseI gives).
	cpuIdx, nodeIdx int

	// The record being parsed: field i is rec[pos[i]+1:pos[i+1]] (pos
	// holds -1, the offsets of the record's '|' and len(rec)), or
	// split[i] when split is not nil (a record whose extra '|' were
	// assigned to free-text columns by recoverPipes).
	rec    []byte
	pos    []int
	split  [][]byte
	pieces [][]byte // recoverPipes' input
	joined []byte   // a record spanning several lines

	// checkText is set for a block that is not all valid UTF-8: each
	// record's fields are then checked one by one (a block that is valid
	// as a whole has only valid fields, '|' and '\n' being ASCII).
	checkText bool
	bounds    TimeBounds

	tresMemo tresMemo
	dense    []float64 // the dense TRES of the row being parsed
	cols     jobColumns

	// keepPending is SacctOptions.KeepPending.
	keepPending bool
	// reqCols is SacctOptions.RequestColumns; req holds the row's request
	// values while it is parsed (see parseRequest).
	reqCols bool
	req     reqRow
	// remarks are the current record's remarks (see Stats.Remarks),
	// counted only when it is ingested.
	remarks []string
	// dupTRES is set when the current record's AllocTRES or ReqTRES
	// names a TRES twice (see addTRESTo).
	dupTRES bool
	// subAmbig is set when the current record's '|' recovery left its
	// SubmitLine in doubt (see recoverPipes).
	subAmbig bool

	// rowsPerLine is the previous block's ingested rows per line, -1
	// before the first block (see rowsFor).
	rowsPerLine float64
	// maxRec is SacctOptions.MaxRecordBytes.
	maxRec int
}

// sacctRow holds one record's parsed values until the record is known to be
// good; only then is it appended, so a rejected row leaves no trace.
type sacctRow struct {
	line                                       int
	cluster, jobID, user, account, partition   []byte
	qos, state, cancelledBy, exitCode, jobName []byte
	id                                         jobID
	raw                                        int64 // every ingested row has one
	submit, eligible, start, end               int64
	submitOK, eligibleOK, startOK, endOK       bool
	elapsed, suspended, timelimit              int64
	elapsedOK, suspendedOK, timelimitOK        bool
	nnodes, cpus                               int64
	tres                                       int32 // AllocTRES: item of sacctParser.tresMemo
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
		bounds: opt.Bounds,

		keepPending: opt.KeepPending,
		reqCols:     opt.RequestColumns,

		rowsPerLine: -1,
		maxRec:      opt.MaxRecordBytes,
	}
	for i, t := range lay.dense {
		p.denseI[t] = i
		if t == "gres/gpu" {
			p.gpuIdx = i
		}
	}
	p.idField = lay.idx[colJobID]
	if p.idField < 0 {
		p.idField = lay.idx[colJobIDRaw]
	}
	if p.maxRec <= 0 {
		p.maxRec = MaxLineBytes
	}
	p.cpuIdx, p.nodeIdx = p.denseI["cpu"], p.denseI["node"]
	p.tresMemo.reset()
	p.dense = make([]float64, len(lay.dense))
	p.cols.init(len(lay.dense), p.reqCols)
	return p
}

// parseChunk parses every record of a block. Blocks start on a record
// boundary (see findCut), so records never straddle two blocks unless the
// input is malformed, in which case the pieces are rejected, not lost.
func (p *sacctParser) parseChunk(c chunk) chunkResult {
	res := chunkResult{seq: c.seq, bytes: int64(len(c.data)), stats: Stats{File: p.name}}
	p.cols.reset()
	lines := bytes.Count(c.data, []byte{'\n'}) + 1
	p.cols.prepare(p.mem, p.rowsFor(lines))
	p.checkText = !utf8.Valid(c.data)
	data := c.data
	line := c.line
	nf := p.lay.nf
	// The usual record is one line with exactly nf fields: want is its
	// number of '|'.
	want := nf - 1
	if p.lay.trailing {
		want = nf
	}
	var steps int64 // job steps skipped on the fast path below
	for len(data) > 0 {
		// One physical line.
		ln, rest := cutLine(data)
		first := line
		data = rest
		line++
		// Most lines are records of their own whose field offsets are
		// needed anyway, and they give the count of '|'. Job steps, which
		// are skipped on their JobID alone (below), are only counted.
		var pipes int
		lnOffsets := p.idField < 0 || !isStepID(ln, p.idField)
		if lnOffsets {
			p.pos = fieldOffsets(p.pos[:0], ln)
			pipes = len(p.pos) - 2
		} else {
			pipes = bytes.Count(ln, []byte{'|'})
		}
		if pipes == 0 && len(bytes.TrimSpace(ln)) == 0 {
			continue // blank lines are not records
		}
		rec := ln
		inJoined := false
		n := pipes + 1
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
				res.stats.Continued++
			}
			p.joined = joined
			rec = joined
			inJoined = true
			n = acc
		}
		// A free-text last column (SubmitLine, JobName) may itself run on
		// over lines that hold no delimiter at all.
		if n == nf && p.lay.classes[nf-1] == classFreeText && !p.lay.trailing {
			for len(data) > 0 && !startsWithPipeLine(data) {
				nx, nrest := cutLine(data)
				if len(bytes.TrimSpace(nx)) == 0 {
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
				res.stats.Continued++
			}
		}
		res.stats.Read++
		if len(rec) > p.maxRec {
			res.stats.Rejected++
			res.rejects = append(res.rejects, p.overLong(first, rec, line-first))
			continue
		}
		fast := !inJoined && pipes == want && (!p.lay.trailing || rec[len(rec)-1] == '|')
		if fast && !lnOffsets {
			// Job steps, most rows of a sacct file, are told apart by
			// their JobID alone (see parseJobID): skip them before
			// locating the other fields. (A fast record is its line, and
			// lnOffsets is false for exactly the lines isStepID finds.)
			steps++
			continue
		}
		if inJoined || !lnOffsets {
			p.pos = fieldOffsets(p.pos[:0], rec)
		}
		p.rec, p.split, p.subAmbig = rec, nil, false
		var perr *ParseError
		if !fast {
			p.split, perr = p.splitRecord()
		}
		if perr == nil {
			perr = p.parseRow(first, &res.stats)
		}
		if perr != nil {
			if perr.Line == 0 {
				perr.Line = first
			}
			res.stats.Rejected++
			res.rejects = append(res.rejects, rejectRec{err: perr, raw: string(rec)})
		}
	}
	res.stats.Lines = int64(line - c.line)
	if c.origins != nil {
		for _, r := range res.rejects {
			r.err.fromJSON(c.origins, c.line)
		}
	}
	if steps > 0 {
		res.stats.Skip(SkipJobStep)
		res.stats.Skipped[SkipJobStep] += steps - 1
	}
	if res.stats.Ingested > 0 {
		res.rec = p.newRecord()
	}
	p.cols.release()
	p.rowsPerLine = float64(res.stats.Ingested) / float64(lines)
	return res
}

// rowsFor estimates how many rows a block of lines lines will ingest, for
// the room the columns are given up front: a record takes at least one
// line, but in a sacct file with job steps most lines are skipped. The
// estimate follows the previous block's share of ingested lines, with a
// margin; a block that ingests more only costs a copy (see
// fixedColumn.prepare).
func (p *sacctParser) rowsFor(lines int) int {
	if p.rowsPerLine < 0 {
		return lines // the first block
	}
	return min(lines, int(float64(lines)*p.rowsPerLine*1.25)+64)
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

// isStepID reports whether field i of rec holds a '.', the mark of a job
// step's JobID (see parseJobID). When rec has i fields or fewer the answer
// means nothing, but it does not panic.
func isStepID(rec []byte, i int) bool {
	if i > 0 {
		rec = nthField(rec, i)
	}
	for _, c := range rec {
		switch c {
		case '.':
			return true
		case '|':
			return false
		}
	}
	return false
}

// nthField returns the '|'-separated field i (0-based) of rec, which must
// have more than i fields.
func nthField(rec []byte, i int) []byte {
	for ; i > 0; i-- {
		rec = rec[bytes.IndexByte(rec, '|')+1:]
	}
	if j := bytes.IndexByte(rec, '|'); j >= 0 {
		return rec[:j]
	}
	return rec
}

// Masks for finding a byte eight at a time (SWAR).
const (
	swarLow7  = 0x7f7f7f7f7f7f7f7f
	swarPipes = 0x7c7c7c7c7c7c7c7c // '|' in every byte
)

// zeroBytes returns x with the high bit set in exactly the bytes of x that
// are zero and every other bit clear. Unlike the shorter (x-0x01..)&^x
// trick it has no false positives, because no carry crosses a byte.
func zeroBytes(x uint64) uint64 {
	return ^((x&swarLow7 + swarLow7) | x | swarLow7)
}

// fieldOffsets appends to pos -1, the offsets of every '|' in rec and
// len(rec): field i is then rec[pos[i]+1:pos[i+1]]. Offsets rather than
// slices keep the hot loop free of pointer stores.
//
// It reads eight bytes at a time (SWAR) and gathers the '|' of 64 bytes
// into one bit mask (pipeMask) before appending their offsets, so that the
// appending loop ends once per 64 bytes rather than once per word: which
// words hold a '|' is as unpredictable as the record's text, and a
// mispredicted loop exit per word used to cost more than the scan.
func fieldOffsets(pos []int, rec []byte) []int {
	// Room for the most offsets rec can have, so that the loops below
	// store without growing.
	n := len(pos)
	pos = slices.Grow(pos, len(rec)+2)[:n+len(rec)+2]
	pos[n] = -1
	n++
	// The last block of fewer than 64 bytes is read whole, bytes past
	// the end of rec masked off, when rec's capacity holds it (a line
	// within its block of the file usually has the next lines there).
	whole := rec[:cap(rec)]
	i := 0
	for ; i < len(rec) && i+64 <= len(whole); i += 64 {
		m := pipeMask(whole[i : i+64])
		if rest := len(rec) - i; rest < 64 {
			m &= 1<<rest - 1
		}
		for ; m != 0; m &= m - 1 {
			pos[n] = i + bits.TrailingZeros64(m)
			n++
		}
	}
	if i < len(rec) {
		var m uint64
		k := 0
		for ; i+k+8 <= len(rec); k += 8 {
			m |= pipeByteMask(binary.LittleEndian.Uint64(rec[i+k:])) << k
		}
		for ; i+k < len(rec); k++ {
			if rec[i+k] == '|' {
				m |= 1 << k
			}
		}
		for ; m != 0; m &= m - 1 {
			pos[n] = i + bits.TrailingZeros64(m)
			n++
		}
	}
	pos[n] = len(rec)
	return pos[:n+1]
}

// pipeMask returns the '|' of b, which holds 64 bytes, as a bit mask: bit
// j is set when b[j] is a '|'.
func pipeMask(b []byte) uint64 {
	_ = b[63]
	return pipeByteMask(binary.LittleEndian.Uint64(b[0:])) |
		pipeByteMask(binary.LittleEndian.Uint64(b[8:]))<<8 |
		pipeByteMask(binary.LittleEndian.Uint64(b[16:]))<<16 |
		pipeByteMask(binary.LittleEndian.Uint64(b[24:]))<<24 |
		pipeByteMask(binary.LittleEndian.Uint64(b[32:]))<<32 |
		pipeByteMask(binary.LittleEndian.Uint64(b[40:]))<<40 |
		pipeByteMask(binary.LittleEndian.Uint64(b[48:]))<<48 |
		pipeByteMask(binary.LittleEndian.Uint64(b[56:]))<<56
}

// swarGather moves bit 8j of a word to bit 56+j when multiplied by it: the
// partial products of different bytes land on different bits, so no carry
// disturbs the top byte.
const swarGather = 0x0102040810204080

// pipeByteMask returns the '|' among the eight bytes of the little-endian
// word w as an 8-bit mask: bit j is set when byte j is a '|'.
func pipeByteMask(w uint64) uint64 {
	return (zeroBytes(w^swarPipes) >> 7) * swarGather >> 56
}

// startsWithPipeLine reports whether the first line of data holds a '|'.
// It stops at the first '|' or '\n', so for the usual next record it reads
// only the record's first field.
func startsWithPipeLine(data []byte) bool {
	for _, c := range data {
		switch c {
		case '|':
			return true
		case '\n':
			return false
		}
	}
	return false
}

// overLong is the reject of a record over the bound that came whole in a
// block (the producer skips longer ones; see sacctSkip): the record, its
// longest field when it is a single line of the header's fields, and the
// start of both.
func (p *sacctParser) overLong(line int, rec []byte, lines int) rejectRec {
	var sc lineScan
	sc.feed(rec)
	sc.end()
	perr := &ParseError{File: p.name, Line: line, Err: overLong(int64(len(rec)), lines, p.maxRec)}
	if lines == 1 && sc.pipes == p.lay.wantPipes() && sc.longest < len(p.lay.titles) {
		perr.Field = p.lay.titles[sc.longest]
		perr.Value = string(trimPartialRune(sc.longestHead)) + "…"
	}
	return rejectRec{err: perr, raw: string(trimPartialRune(sc.head)) + "…"}
}

// splitRecord checks that the current record (p.rec, p.pos) has exactly
// nf fields, in which case it returns nil: p.pos locates them. When the
// record has more delimiters than columns, the extra ones must belong to
// free-text columns (JobName, SubmitLine, Constraints, ...): recoverPipes
// finds the alignment in which every other column fits its syntax, and
// splitRecord returns the fields it chose.
func (p *sacctParser) splitRecord() ([][]byte, *ParseError) {
	nf := p.lay.nf
	b := p.pos
	np := len(b) - 1 // pieces
	if p.lay.trailing && b[np] == b[np-1]+1 {
		np-- // an empty piece after the trailing '|'
	}
	switch {
	case np == nf:
		return nil, nil
	case np < nf:
		return nil, &ParseError{File: p.name, Err: fmt.Errorf("too few fields: %d of %d", np, nf)}
	}
	pieces := p.pieces[:0]
	for i := 0; i < np; i++ {
		pieces = append(pieces, p.rec[b[i]+1:b[i+1]])
	}
	p.pieces = pieces
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
	// An alignment that only leaves SubmitLine in doubt keeps the record:
	// SubmitLine is then not read (see parseSubmit), as the record was
	// kept before fairledger read SubmitLine at all.
	subAmbig := false
	for _, sol := range sols {
		alt := build(sol)
		sc := score(alt)
		switch {
		case best == nil || sc < bestScore:
			best, bestScore, ambiguous, subAmbig = alt, sc, "", false
		case sc == bestScore:
			for c, col := range p.lay.col {
				switch {
				case col == colOther || bytes.Equal(alt[c], best[c]):
				case col == colSubmitLine:
					subAmbig = true
				default:
					ambiguous = p.lay.titles[c]
				}
			}
		}
	}
	if ambiguous != "" {
		return nil, fmt.Errorf("too many fields (%d of %d): the extra '|' could belong to %s or elsewhere", len(pieces), nf, ambiguous)
	}
	p.subAmbig = subAmbig
	return best, nil
}

// get returns the current record's value of column c, nil if the file has
// no such column.
func (p *sacctParser) get(c sacctCol) []byte {
	i := p.lay.idx[c]
	switch {
	case i < 0:
		return nil
	case p.split != nil:
		return p.split[i]
	}
	b := p.pos[i : i+2] // one bounds check for both ends
	return p.rec[b[0]+1 : b[1]]
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
func (p *sacctParser) parseRow(line int, st *Stats) *ParseError {
	// The row lives on the stack: storing its slices there needs no GC
	// write barriers.
	var row sacctRow
	r := &row
	p.remarks = p.remarks[:0]
	r.dense = p.dense
	r.line = line
	// Identity first: steps and pending arrays are skipped whatever else
	// the row holds.
	idCol := colJobID
	if !p.has(colJobID) {
		idCol = colJobIDRaw
	}
	r.jobID = p.get(idCol)
	id, err := parseJobID(r.jobID)
	if err != nil {
		return p.fieldErr(idCol, r.jobID, err)
	}
	r.id = id
	// A never-started record (PENDING, cancelled while pending, a pending
	// array range) is skipped, or with keepPending ingested with no start.
	pending := false
	switch id.kind {
	case jobStep:
		st.Skip(SkipJobStep)
		return nil
	case jobArrayPending:
		// sacct prints a range only for the tasks still pending (or
		// cancelled while pending): one that started is a damaged row,
		// never a range to skip.
		if perr := p.rangeStarted(idCol, r.jobID); perr != nil {
			return perr
		}
		if !p.keepPending {
			st.Skip(SkipPendingArray)
			return nil
		}
		pending = true
	}
	if p.checkText {
		if perr := p.textErr(); perr != nil {
			return perr
		}
	}
	state := p.get(colState)
	if len(state) == 0 {
		return p.fieldErr(colState, state, errEmpty)
	}
	r.state, r.cancelledBy = state, nil
	// Only "CANCELLED by <uid>" holds a space: a cheap test for one saves
	// the search for " by " in every other state.
	if bytes.IndexByte(state, ' ') >= 0 {
		if i := bytes.Index(state, []byte(" by ")); i > 0 {
			r.state, r.cancelledBy = state[:i], state[i+4:]
		}
	}
	if !knownState(r.state) {
		p.remarks = append(p.remarks, RemarkUnknownState)
	}
	if string(r.state) == "PENDING" {
		if !p.keepPending {
			st.Skip(SkipPending)
			return nil
		}
		pending = true
	}
	start := p.get(colStart)
	var kind timeKind
	r.start, kind, err = p.clock.parseTime(start)
	if err != nil {
		return p.fieldErr(colStart, start, err)
	}
	switch {
	case pending:
		// Still pending when sacct looked: a Start would be sacct's or a
		// dump's guess, never a run.
		if kind == timeSet {
			st.Remark(RemarkPendingStart)
		}
		r.start, r.startOK = 0, false
	case kind != timeSet:
		if !p.keepPending {
			st.Skip(SkipNeverStarted)
			return nil
		}
		r.start, r.startOK = 0, false
	default:
		if err := p.bounds.check(r.start); err != nil {
			return p.fieldErr(colStart, start, err)
		}
		r.startOK = true
	}
	if r.user = p.get(colUser); len(r.user) == 0 {
		return p.fieldErr(colUser, r.user, errEmpty)
	}
	if r.account = p.get(colAccount); len(r.account) == 0 {
		return p.fieldErr(colAccount, r.account, errEmpty)
	}
	r.partition = p.get(colPartition)
	r.qos = p.get(colQOS)
	r.cluster = p.get(colCluster)
	r.exitCode = p.get(colExitCode)
	r.jobName = p.get(colJobName)

	if p.has(colJobIDRaw) {
		v := p.get(colJobIDRaw)
		// A plain JobID is its JobIDRaw, already parsed as such.
		if id.kind == jobPlain && idCol == colJobID && bytes.Equal(v, r.jobID) {
			r.raw = id.id
		} else if r.raw, err = parseInt(v); err != nil {
			return p.fieldErr(colJobIDRaw, v, err)
		} else if id.kind == jobPlain && idCol == colJobID {
			// sacct prints an array task's and a het component's JobID
			// apart from their JobIDRaw, never a plain job's.
			p.remarks = append(p.remarks, RemarkJobIDRaw)
		}
	} else {
		switch {
		case id.kind == jobPlain:
			r.raw = id.id
		case id.kind == jobHetComponent && id.task <= math.MaxInt64-id.id:
			// Slurm numbers a het job's components consecutively from
			// its leader: 123+0 is job 123, 123+1 is 124.
			r.raw = id.id + id.task
		case id.kind == jobArrayPending:
			// The pending remainder of an array is the array's own
			// job record: 123_[4-9] is job 123.
			r.raw = id.id
		default: // an array task's own job id is not in its JobID
			return p.fieldErr(colJobID, r.jobID, errNeedJobIDRaw)
		}
	}
	if perr := p.parseTimes(r, st); perr != nil {
		return perr
	}
	if perr := p.parseCounts(r); perr != nil {
		return perr
	}
	if p.reqCols && p.tresMemo.full() {
		// ReqTRES adds to the memo without emptying it (the row's
		// AllocTRES item is in use then): it is emptied here, between rows.
		p.tresMemo.reset()
	}
	if r.submitOK && r.startOK && r.submit > r.start {
		p.remarks = append(p.remarks, RemarkSubmitAfterStart)
	}
	p.dupTRES = false
	if perr := p.parseTRES(r); perr != nil {
		return perr
	}
	if p.reqCols {
		if perr := p.parseRequest(r, st); perr != nil {
			return perr
		}
	}
	if p.dupTRES {
		st.Remark(RemarkDuplicateTRES)
	}
	for _, m := range p.remarks {
		st.Remark(m)
	}
	p.appendRow(r)
	st.Ingested++
	if !r.startOK {
		st.NeverStarted++
	}
	return nil
}

// rangeStarted rejects an array range (JobID v of column c) whose State is
// not PENDING and whose Start holds a time: Slurm keeps the pending tasks
// of an array in one record, printed as a range, until each task starts
// with a record of its own; a started range would go uncharged.
func (p *sacctParser) rangeStarted(c sacctCol, v []byte) *ParseError {
	state := p.get(colState)
	if i := bytes.Index(state, []byte(" by ")); i > 0 {
		state = state[:i]
	}
	if string(state) == "PENDING" {
		return nil
	}
	if _, kind, err := p.clock.parseTime(p.get(colStart)); err != nil || kind != timeSet {
		return nil // never started (or a Start the row's own check rejects)
	}
	return p.fieldErr(c, v, fmt.Errorf("an array range in state %s that started: sacct prints a range only for tasks still pending; the row is damaged (fetch the tasks with sacct --array)", state))
}

// knownState reports whether state (without "by <uid>") is one of the
// job states Slurm prints: job_state_string and its flags in
// src/common/slurm_protocol_defs.c.
func knownState(state []byte) bool {
	switch string(state) {
	case "PENDING", "RUNNING", "SUSPENDED", "COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL",
		"PREEMPTED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY", "COMPLETING", "CONFIGURING", "RESIZING",
		"REQUEUED", "REQUEUE_FED", "REQUEUE_HOLD", "SPECIAL_EXIT", "STOPPED", "REVOKED", "RESV_DEL_HOLD",
		"SIGNALING", "STAGE_OUT", "EXPEDITING":
		return true
	}
	return false
}

// textErr rejects the current record when one of its fields is not valid
// UTF-8: the history would hold a string every Parquet reader refuses.
func (p *sacctParser) textErr() *ParseError {
	for i, title := range p.lay.titles {
		var v []byte
		if p.split != nil {
			v = p.split[i]
		} else {
			v = p.rec[p.pos[i]+1 : p.pos[i+1]]
		}
		if !utf8.Valid(v) {
			return &ParseError{File: p.name, Field: title, Value: string(v), Err: errNotUTF8}
		}
	}
	return nil
}

func (p *sacctParser) optTime(c sacctCol) (int64, bool, *ParseError) {
	v := p.get(c)
	t, k, err := p.clock.parseTime(v)
	if err != nil {
		return 0, false, p.fieldErr(c, v, err)
	}
	if k == timeSet {
		b := p.bounds
		if c == colEligible {
			// A job submitted with --begin in the future is eligible then:
			// sacct prints that time while it waits (slurmdbd's
			// eligible_time is the begin time).
			b.Max = 0
		}
		if err := b.check(t); err != nil {
			return 0, false, p.fieldErr(c, v, err)
		}
	}
	return t, k == timeSet, nil
}

func (p *sacctParser) optDuration(c sacctCol) (int64, bool, *ParseError) {
	v := p.get(c)
	if len(v) == 0 {
		return 0, false, nil
	}
	d, err := parseElapsed(v)
	if err != nil {
		return 0, false, p.fieldErr(c, v, err)
	}
	return d, true, nil
}

// elapsedAgrees reports whether a finished job's Elapsed is what Slurm
// derives from its times: End − Start, less the time it was suspended.
func elapsedAgrees(r *sacctRow) bool {
	d := r.end - r.start
	return r.elapsed == d || r.suspendedOK && r.elapsed == d-r.suspended
}

func (p *sacctParser) parseTimes(r *sacctRow, st *Stats) *ParseError {
	var perr *ParseError
	if r.submit, r.submitOK, perr = p.optTime(colSubmit); perr != nil {
		return perr
	}
	// Eligible is most often Submit again: the same text parses the same.
	if e := p.get(colEligible); p.has(colSubmit) && bytes.Equal(e, p.get(colSubmit)) {
		r.eligible, r.eligibleOK = r.submit, r.submitOK
	} else if r.eligible, r.eligibleOK, perr = p.optTime(colEligible); perr != nil {
		return perr
	}
	if r.end, r.endOK, perr = p.optTime(colEnd); perr != nil {
		return perr
	}
	if r.elapsed, r.elapsedOK, perr = p.optDuration(colElapsed); perr != nil {
		return perr
	}
	if p.has(colElapsedRaw) {
		v := p.get(colElapsedRaw)
		if len(v) > 0 {
			n, err := parseInt(v)
			if err != nil {
				return p.fieldErr(colElapsedRaw, v, err)
			}
			r.elapsed, r.elapsedOK = n, true
		}
	}
	if r.suspended, r.suspendedOK, perr = p.optDuration(colSuspended); perr != nil {
		return perr
	}
	r.timelimitOK = false
	if v := p.get(colTimelimit); len(v) > 0 {
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
	if !r.startOK {
		// A job that never started: its End, if any, is when it left the
		// queue (cancelled while pending); a PENDING one has not left it
		// (XDMoD's dumps print its Submit there).
		if string(r.state) == "PENDING" {
			r.endOK = false
		}
		return nil
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
			return p.fieldErr(colEnd, p.get(colEnd), errors.New("unknown end of a finished job and no Elapsed to derive it from"))
		}
		r.end, r.endOK = r.start+r.elapsed, true
		if r.suspendedOK {
			r.end += r.suspended
		}
		if err := p.bounds.check(r.end); err != nil {
			return p.fieldErr(colElapsed, p.get(colElapsed), fmt.Errorf("the End it gives (Start + Elapsed) is %w", err))
		}
		return nil
	}
	if r.end < r.start || r.elapsedOK && !elapsedAgrees(r) {
		p.resolveFold(r)
		if err := p.bounds.check(r.end); err != nil {
			return p.fieldErr(colEnd, p.get(colEnd), err)
		}
	}
	if r.end < r.start {
		return p.fieldErr(colEnd, p.get(colEnd), errors.New("before Start"))
	}
	if r.elapsedOK && !elapsedAgrees(r) {
		st.Remark(RemarkElapsed)
	}
	if r.suspendedOK && r.suspended > r.end-r.start {
		p.remarks = append(p.remarks, RemarkSuspended)
	}
	return nil
}

// resolveFold reads again a finished job's Start and End when either fell
// in an hour the local clock went through twice (the end of summer time
// with --tz) and, as read, End precedes Start or disagrees with Elapsed.
// Of the two readings of each, it takes the pair whose End − Start (less
// Suspended) is Elapsed (ElapsedRaw when the file has it, which sacct
// prints in seconds); failing that, when End precedes Start, Start's first
// pass and End's second (the only order in which a wall clock can go
// back). Otherwise the times stay as read: the later pass of a repeated
// time, as Go's time.Date reads it.
func (p *sacctParser) resolveFold(r *sacctRow) {
	s0, s1 := p.clock.readings(r.start)
	e0, e1 := p.clock.readings(r.end)
	if s0 == s1 && e0 == e1 {
		return
	}
	if r.elapsedOK {
		orig := *r
		for _, s := range [2]int64{s0, s1} {
			for _, e := range [2]int64{e0, e1} {
				r.start, r.end = s, e
				if e >= s && elapsedAgrees(r) {
					return
				}
			}
		}
		r.start, r.end = orig.start, orig.end
	}
	if r.end < r.start && e1 >= s0 {
		r.start, r.end = s0, e1
	}
}

func (p *sacctParser) parseCounts(r *sacctRow) *ParseError {
	r.nnodes, r.cpus = -1, -1
	if v := p.get(colNNodes); len(v) > 0 {
		n, err := parseInt(v)
		if err != nil {
			return p.fieldErr(colNNodes, v, err)
		}
		if err := checkCount(float64(n)); err != nil {
			return p.fieldErr(colNNodes, v, err)
		}
		r.nnodes = n
	}
	if v := p.get(colAllocCPUS); len(v) > 0 {
		n, err := parseInt(v)
		if err != nil {
			return p.fieldErr(colAllocCPUS, v, err)
		}
		if err := checkCount(float64(n)); err != nil {
			return p.fieldErr(colAllocCPUS, v, err)
		}
		r.cpus = n
	}
	return nil
}

// parseTRES parses AllocTRES completely ("billing=4,cpu=4,gres/gpu:a100=1,
// mem=16G,node=1"): every entry goes to the alloc_tres map, the dense TRES
// to their columns, billing= to billing_sacct. Entries are split on ',' and
// '=' by name, never by position. A file holds few distinct AllocTRES
// strings, so each is parsed once and then looked up (see tresMemo).
func (p *sacctParser) parseTRES(r *sacctRow) *ParseError {
	v := p.get(colAllocTRES)
	m := &p.tresMemo
	k := m.last
	if k < 0 || !bytes.Equal(v, m.texts.value(k)) {
		if k = m.index.lookup(v, &m.texts); k < 0 {
			var perr *ParseError
			if k, perr = p.addTRES(v); perr != nil {
				return perr
			}
		}
		m.last = k
	}
	it := &m.items[k]
	r.tres = k
	p.dupTRES = p.dupTRES || it.dup
	copy(r.dense, m.dense[it.dense:it.dense+len(r.dense)])
	r.billing, r.billingOK = it.billing, it.billingOK
	// Files without AllocTRES values (older XDMoD dumps) still say how many
	// CPUs and nodes were allocated.
	if !it.hasCPU && r.cpus >= 0 {
		r.dense[p.cpuIdx] = float64(r.cpus)
	}
	if !it.hasNode && r.nnodes >= 0 {
		r.dense[p.nodeIdx] = float64(r.nnodes)
	}
	if r.cpus < 0 {
		r.cpus = int64(r.dense[p.cpuIdx])
	}
	if r.nnodes < 0 {
		r.nnodes = int64(r.dense[p.nodeIdx])
	}
	return nil
}

// tresMemo holds the AllocTRES strings parsed so far, each with what
// parseTRES derives from the string alone. Item k is the string
// texts.value(k); its entries, names and dense values live in arenas
// shared by all items. The memo is emptied when it holds maxTRESMemo
// strings or maxTRESMemoBytes of them, so its memory stays bounded
// whatever the file.
type tresMemo struct {
	texts stringColumn // the AllocTRES strings, one per item
	index dictIndex    // AllocTRES string → item
	items []tresItem
	names []byte    // the entries' (lower-case) names, back to back per item
	ends  []int32   // per entry: where its name ends in its item's names
	vals  []float64 // per entry: its count
	dense []float64 // per item, len(sacctLayout.dense) values
	last  int32     // item of the previous row, -1 if none
}

// maxTRESMemo and maxTRESMemoBytes bound the distinct AllocTRES strings a
// parser keeps and their total length.
const (
	maxTRESMemo      = 4096
	maxTRESMemoBytes = 1 << 20
)

// tresItem is one parsed AllocTRES string: its entries are
// tresMemo.ends/vals[entries:entriesEnd], their names
// tresMemo.names[names:namesEnd], its dense values start at
// tresMemo.dense[dense].
type tresItem struct {
	entries, entriesEnd int
	names, namesEnd     int
	dense               int
	billing             float64
	billingOK           bool
	hasCPU, hasNode     bool
	// dup is set when the list names a TRES twice (see addTRESTo).
	dup bool
	// set is the item's alloc_tres_set number in the block numbered
	// setBlock (see tresColumn); an item not yet seen in the block being
	// parsed has an older setBlock and gets the block's next number.
	set      int32
	setBlock uint64
}

func (m *tresMemo) reset() {
	m.texts.reset()
	m.index.reset()
	m.items = m.items[:0]
	m.names = m.names[:0]
	m.ends = m.ends[:0]
	m.vals = m.vals[:0]
	m.dense = m.dense[:0]
	m.last = -1
}

// addTRES parses AllocTRES text v into a new item of p.tresMemo, emptied
// first when full, and returns its number, or why v is rejected (leaving
// the memo as it was).
func (p *sacctParser) addTRES(v []byte) (int32, *ParseError) {
	if p.tresMemo.full() {
		p.tresMemo.reset()
	}
	return p.addTRESTo(colAllocTRES, v)
}

// full reports whether the memo holds its bound of strings or bytes.
func (m *tresMemo) full() bool {
	return len(m.items) >= maxTRESMemo || len(m.texts.data) >= maxTRESMemoBytes
}

// addTRESTo parses the TRES list v of column c (AllocTRES or ReqTRES) into
// a new item of p.tresMemo, which it never empties (the caller does, when
// no item of the row is in use), and returns its number, or why v is
// rejected (leaving the memo as it was).
func (p *sacctParser) addTRESTo(c sacctCol, v []byte) (int32, *ParseError) {
	m := &p.tresMemo
	text := v
	it := tresItem{entries: len(m.vals), names: len(m.names), dense: len(m.dense)}
	m.dense = append(m.dense, make([]float64, len(p.lay.dense))...)
	dense := m.dense[it.dense:]
	hasGPU := false
	gpuTyped := 0.0
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
			m.drop(it)
			return -1, p.fieldErr(c, item, errors.New("TRES entry is not name=count"))
		}
		start := len(m.names)
		m.names = appendTRESName(m.names, item[:eq])
		name := m.names[start:]
		val, err := parseTRESValue(name, item[eq+1:])
		if string(name) == "billing" {
			val, err = billingCount(item[eq+1:], val, err)
		}
		if err == nil {
			err = checkCount(val)
		}
		if err != nil {
			m.drop(it)
			return -1, p.fieldErr(c, item, err)
		}
		if m.named(it, name) {
			// Slurm's slurmdb_tres_list_from_string, with
			// TRES_STR_FLAG_NONE, keeps the first count of a TRES and
			// skips the later ones. (slurmdbd's rollup, _add_tres_2_list,
			// would add both; but Slurm never writes such a list.)
			m.names = m.names[:start]
			it.dup = true
			continue
		}
		switch string(name) {
		case "energy":
			m.names = m.names[:start]
			continue // energy is never weighted (§3.3) and sacct never prints it for allocations
		case "billing":
			it.billing, it.billingOK = val, true
		case "gres/gpu":
			hasGPU = true
		case "cpu":
			it.hasCPU = true
		case "node":
			it.hasNode = true
		}
		if len(name) > 9 && string(name[:9]) == "gres/gpu:" {
			gpuTyped += val
		}
		if i, ok := p.denseI[string(name)]; ok {
			dense[i] = val
		}
		m.ends = append(m.ends, int32(len(m.names)-it.names))
		m.vals = append(m.vals, val)
	}
	if !hasGPU && gpuTyped > 0 {
		dense[p.gpuIdx] = gpuTyped
	}
	it.entriesEnd, it.namesEnd = len(m.vals), len(m.names)
	m.items = append(m.items, it)
	return m.index.add(text, &m.texts), nil
}

// named reports whether item it, being built, already has an entry
// named name (the last name appended to m.names, not yet one of its
// entries).
func (m *tresMemo) named(it tresItem, name []byte) bool {
	from := it.names
	for _, end := range m.ends[it.entries:] {
		to := it.names + int(end)
		if string(m.names[from:to]) == string(name) {
			return true
		}
		from = to
	}
	return false
}

// drop undoes the arena appends of item it, which turned out to be
// invalid.
func (m *tresMemo) drop(it tresItem) {
	m.names = m.names[:it.names]
	m.ends = m.ends[:it.entries]
	m.vals = m.vals[:it.entries]
	m.dense = m.dense[:it.dense]
}

// appendTRESName appends a TRES name to dst in the canonical case: a name
// holding an ASCII capital is lower-cased as bytes.ToLower does it (all of
// Unicode), any other name is kept as it is.
func appendTRESName(dst, name []byte) []byte {
	for _, c := range name {
		if c >= 'A' && c <= 'Z' {
			return append(dst, bytes.ToLower(name)...)
		}
	}
	return append(dst, name...)
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
