package ingest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/bitutil"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/fairledger/fairledger/schemas"
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
	missErr  *ParseError

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
	submitOK, eligibleOK, endOK                bool
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
		p.rec, p.split = rec, nil
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
	r.dense = p.dense
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
	r.jobID = p.get(idCol)
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
	if string(r.state) == "PENDING" {
		st.Skip(SkipPending)
		return nil
	}
	start := p.get(colStart)
	var kind timeKind
	r.start, kind, err = p.clock.parseTime(start)
	if err != nil {
		return p.fieldErr(colStart, start, err)
	}
	if kind != timeSet {
		st.Skip(SkipNeverStarted)
		return nil
	}
	if err := p.bounds.check(r.start); err != nil {
		return p.fieldErr(colStart, start, err)
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
		}
	} else {
		switch {
		case id.kind == jobPlain:
			r.raw = id.id
		case id.kind == jobHetComponent && id.task <= math.MaxInt64-id.id:
			// Slurm numbers a het job's components consecutively from
			// its leader: 123+0 is job 123, 123+1 is 124.
			r.raw = id.id + id.task
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
	if perr := p.parseTRES(r); perr != nil {
		return perr
	}
	p.appendRow(r)
	st.Ingested++
	return nil
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
		if err := p.bounds.check(t); err != nil {
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
	if r.end < r.start {
		return p.fieldErr(colEnd, p.get(colEnd), errors.New("before Start"))
	}
	if r.elapsedOK && !elapsedAgrees(r) {
		st.Remark(RemarkElapsed)
	}
	return nil
}

func (p *sacctParser) parseCounts(r *sacctRow) *ParseError {
	r.nnodes, r.cpus = -1, -1
	if v := p.get(colNNodes); len(v) > 0 {
		n, err := parseInt(v)
		if err != nil {
			return p.fieldErr(colNNodes, v, err)
		}
		r.nnodes = n
	}
	if v := p.get(colAllocCPUS); len(v) > 0 {
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

// addTRES parses AllocTRES text v into a new item of p.tresMemo and
// returns its number, or why v is rejected (leaving the memo as it was).
func (p *sacctParser) addTRES(v []byte) (int32, *ParseError) {
	m := &p.tresMemo
	if len(m.items) >= maxTRESMemo || len(m.texts.data) >= maxTRESMemoBytes {
		m.reset()
	}
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
			return -1, p.fieldErr(colAllocTRES, item, errors.New("TRES entry is not name=count"))
		}
		start := len(m.names)
		m.names = appendTRESName(m.names, item[:eq])
		name := m.names[start:]
		val, err := parseTRESValue(name, item[eq+1:])
		if err != nil {
			m.drop(it)
			return -1, p.fieldErr(colAllocTRES, item, err)
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

// appendRow appends a parsed, accepted row to the columns of the block.
func (p *sacctParser) appendRow(r *sacctRow) {
	c := &p.cols
	cl := r.cluster
	if len(cl) == 0 {
		cl = p.defCl
	}
	c.cluster.append(cl)
	c.jobID.append(r.jobID)
	c.raw.append(r.raw)
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
	c.tres.appendItem(&p.tresMemo, r.tres)
	c.billing.appendOpt(r.billing, r.billingOK)
	for i := range c.dense {
		c.dense[i].append(r.dense[i])
	}
	c.srcLine.append(int64(r.line))
	c.rows++
}

// newRecord turns the block's columns into a batch of p.schema with
// Arrow buffers from the parser's allocator: the fixed-width columns hand
// over the buffers they were appended into (see fixedColumn.prepare), the
// others are copied. The batch shares no memory with the parser, which
// reuses its other columns for the next block.
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
	put(schemas.ColAllocTRESSet, &c.tres.sets)
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

// jobColumns holds the rows of the block being parsed, one slice (or a
// few) per column of the jobs schema: appending a row costs a slice append
// per column and a hash lookup (dictIndex) per dictionary column whose
// value changed since the previous row. newRecord turns them into Arrow
// arrays once per block.
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
	c.dense = make([]fixedColumn[float64], dense)
	c.reset()
}

func (c *jobColumns) dicts() []*dictColumn {
	return []*dictColumn{&c.cluster, &c.user, &c.account, &c.partition, &c.qos, &c.state}
}

// fixed returns the columns that hold one fixed-width value per row.
func (c *jobColumns) fixed() (ints []*fixedColumn[int64], floats []*fixedColumn[float64], codes []*fixedColumn[int32]) {
	ints = []*fixedColumn[int64]{&c.raw, &c.arrJob, &c.arrTask, &c.hetJob, &c.hetOff,
		&c.elapsed, &c.suspended, &c.timelimit, &c.nnodes, &c.cpus, &c.srcLine,
		&c.submit, &c.eligible, &c.start, &c.end}
	floats = []*fixedColumn[float64]{&c.billing}
	for i := range c.dense {
		floats = append(floats, &c.dense[i])
	}
	for _, d := range c.dicts() {
		codes = append(codes, &d.codes)
	}
	codes = append(codes, &c.tres.sets)
	return ints, floats, codes
}

// prepare gives every one-value-per-row column room for rows values in a
// buffer from mem (see fixedColumn.prepare).
func (c *jobColumns) prepare(mem memory.Allocator, rows int) {
	ints, floats, codes := c.fixed()
	for _, f := range ints {
		f.prepare(mem, rows)
	}
	for _, f := range floats {
		f.prepare(mem, rows)
	}
	for _, f := range codes {
		f.prepare(mem, rows)
	}
}

// release returns the buffers of prepare that no batch took over.
func (c *jobColumns) release() {
	ints, floats, codes := c.fixed()
	for _, f := range ints {
		f.release()
	}
	for _, f := range floats {
		f.release()
	}
	for _, f := range codes {
		f.release()
	}
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
//
// Between prepare and the batch, vals lives in a buffer from the batch's
// allocator (own), so that the batch takes the values over instead of a
// copy of them.
type fixedColumn[T int32 | int64 | float64] struct {
	vals []T
	own  *memory.Buffer // the buffer vals was carved from, nil if none
	validity
}

// prepare makes vals an empty slice over a new buffer from mem with room
// for rows values. Appending more than rows values moves vals back to Go
// memory, and valueBuffer then copies them as it does without prepare.
func (c *fixedColumn[T]) prepare(mem memory.Allocator, rows int) {
	c.release()
	var zero T
	c.own = memory.NewResizableBuffer(mem)
	c.own.Reserve(max(rows, 1) * int(unsafe.Sizeof(zero)))
	c.vals = arrow.GetData[T](c.own.Buf())[:0]
}

// release returns the buffer of prepare if no batch took it over.
func (c *fixedColumn[T]) release() {
	if c.own != nil {
		c.own.Release()
		c.own = nil
		c.vals = nil
	}
}

// valueBuffer returns the values as an Arrow buffer: the buffer of prepare
// itself while vals still lives in it (the column then lets go of both),
// otherwise a copy from mem.
func (c *fixedColumn[T]) valueBuffer(mem memory.Allocator) *memory.Buffer {
	if b := c.own; b != nil && unsafe.SliceData(c.vals) == unsafe.SliceData(arrow.GetData[T](b.Buf())) {
		b.ResizeNoShrink(len(arrow.GetBytes(c.vals)))
		c.own, c.vals = nil, nil
		return b
	}
	return newBuffer(mem, arrow.GetBytes(c.vals))
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
	return newData(dt, n, []*memory.Buffer{c.buffer(mem, n), c.valueBuffer(mem)}, nil, c.nulls)
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
	values stringColumn // the dictionary
	index  dictIndex    // value → code
	last   int32        // code of the last non-null row, -1 if none
	lastK  dictKey      // its key
}

// append appends v; nil is null (an empty v is the empty string).
func (c *dictColumn) append(v []byte) {
	if v == nil {
		c.codes.appendNull()
		return
	}
	// Neighbouring rows often share a value (cluster, state, QOS):
	// comparing with the last one is cheaper than looking it up.
	key := keyOf(v)
	k := c.last
	if k < 0 || key != c.lastK || key.n > shortKey && !bytes.Equal(v, c.values.value(k)) {
		k = c.index.codeKey(v, key, &c.values)
		c.last, c.lastK = k, key
	}
	c.codes.append(k)
}

func (c *dictColumn) reset() {
	c.codes.reset()
	c.index.reset()
	c.values.reset()
	c.last = -1
}

// dictIndex finds a dictionary value's code: an open-addressing hash table
// whose slots hold codes into the dictionary itself, so that looking up a
// []byte value needs no string conversion and adding one allocates
// nothing. The hash seed only decides where codes sit in the table, never
// which code a value gets.
//
// Each slot also holds the value's dictKey, which for the short values
// of the name columns (users, accounts, partitions: at most shortKey
// bytes) is the whole value: finding one then takes a few word compares
// and no call to hash or compare bytes.
type dictIndex struct {
	seed  maphash.Seed // hashes values longer than shortKey
	mix   uint64       // seeds the hash of the others
	slots []dictSlot   // a power of two of them, at most half full
	n     int          // codes in the table
}

// dictSlot is a slot of a dictIndex: code+1 (0: empty), the value's hash,
// which saves rehashing when the table grows, and its key.
type dictSlot struct {
	key  dictKey
	hash uint32
	code int32
}

// shortKey is the length up to which a dictKey holds a whole value.
const shortKey = 16

// dictKey is a value's length and two words of its bytes: for a value of
// up to shortKey bytes, every byte is in one of the words, so equal keys
// mean equal values. Longer values must still be compared.
type dictKey struct {
	w0, w1 uint64
	n      int
}

// keyOf returns the dictKey of v: for 8 bytes or more its first and last
// eight (overlapping when fewer than 16), for 4 to 7 its first and last
// four, below that its first, middle and last byte.
func keyOf(v []byte) dictKey {
	n := len(v)
	switch {
	case n >= 8:
		return dictKey{binary.LittleEndian.Uint64(v), binary.LittleEndian.Uint64(v[n-8:]), n}
	case n >= 4:
		return dictKey{uint64(binary.LittleEndian.Uint32(v)), uint64(binary.LittleEndian.Uint32(v[n-4:])), n}
	case n > 0:
		return dictKey{uint64(v[0]) | uint64(v[n/2])<<8 | uint64(v[n-1])<<16, 0, n}
	}
	return dictKey{n: 0}
}

// hash returns the hash of the value whose key is k.
func (x *dictIndex) hash(v []byte, k dictKey) uint64 {
	if k.n > shortKey {
		return maphash.Bytes(x.seed, v)
	}
	// A multiply-mix of the key's words, as wyhash does it.
	hi, lo := bits.Mul64(k.w0^x.mix, k.w1^uint64(k.n)*0x9e3779b97f4a7c15^0xa0761d6478bd642f)
	return hi ^ lo
}

// code returns the code of v in values, appending v to values (the
// dictionary) first if it is not there yet.
func (x *dictIndex) code(v []byte, values *stringColumn) int32 {
	return x.codeKey(v, keyOf(v), values)
}

// codeKey is code for a v whose key is k.
func (x *dictIndex) codeKey(v []byte, k dictKey, values *stringColumn) int32 {
	if len(x.slots) == 0 {
		x.grow()
	}
	h := x.hash(v, k)
	if c := x.find(v, k, h, values); c >= 0 {
		return c
	}
	return x.insert(v, k, h, values)
}

// lookup returns the code of v in values, -1 if v is not there.
func (x *dictIndex) lookup(v []byte, values *stringColumn) int32 {
	if x.n == 0 {
		return -1
	}
	k := keyOf(v)
	return x.find(v, k, x.hash(v, k), values)
}

// find returns the code of v (key k, hash h), -1 if v is not there.
func (x *dictIndex) find(v []byte, k dictKey, h uint64, values *stringColumn) int32 {
	mask := len(x.slots) - 1
	for i := int(h) & mask; ; i = (i + 1) & mask {
		s := &x.slots[i]
		if s.code == 0 {
			return -1
		}
		if s.key == k && (k.n <= shortKey || bytes.Equal(values.value(s.code-1), v)) {
			return s.code - 1
		}
	}
}

// add appends v, which must not be in values yet, to values and returns
// its code.
func (x *dictIndex) add(v []byte, values *stringColumn) int32 {
	if len(x.slots) == 0 {
		x.grow()
	}
	k := keyOf(v)
	return x.insert(v, k, x.hash(v, k), values)
}

// insert is add for a v whose key and hash are k and h.
func (x *dictIndex) insert(v []byte, k dictKey, h uint64, values *stringColumn) int32 {
	if 2*(x.n+1) > len(x.slots) {
		x.grow()
	}
	mask := len(x.slots) - 1
	i := int(h) & mask
	for x.slots[i].code != 0 {
		i = (i + 1) & mask
	}
	c := int32(x.n)
	x.slots[i] = dictSlot{key: k, hash: uint32(h), code: c + 1}
	x.n++
	values.append(v)
	return c
}

// grow doubles the table (or makes the first one) and re-inserts the
// codes by their stored hashes.
func (x *dictIndex) grow() {
	old := x.slots
	if len(old) == 0 {
		x.seed = maphash.MakeSeed()
		x.mix = maphash.Bytes(x.seed, nil) // a random word
		x.slots = make([]dictSlot, 64)
		return
	}
	x.slots = make([]dictSlot, 2*len(old))
	mask := len(x.slots) - 1
	for _, s := range old {
		if s.code == 0 {
			continue
		}
		i := int(s.hash) & mask
		for x.slots[i].code != 0 {
			i = (i + 1) & mask
		}
		x.slots[i] = s
	}
}

// reset empties the table for a new block, keeping its size.
func (x *dictIndex) reset() {
	clear(x.slots)
	x.n = 0
}

func (c *dictColumn) arrowData(mem memory.Allocator, dt arrow.DataType) *array.Data {
	return dictData(mem, dt, &c.codes, &c.values)
}

// dictData builds a dictionary array's data from its codes and dictionary.
func dictData(mem memory.Allocator, dt arrow.DataType, codes *fixedColumn[int32], values *stringColumn) *array.Data {
	dict := values.arrowData(mem, dt.(*arrow.DictionaryType).ValueType)
	defer dict.Release()
	n := len(codes.vals)
	bufs := []*memory.Buffer{codes.buffer(mem, n), codes.valueBuffer(mem)}
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
// Alongside it, sets is the alloc_tres_set column: the block's memo items
// numbered in order of first appearance, so that rows with the same
// AllocTRES string share a number. The memo may be emptied in the middle
// of a block; a string then gets a second number, which the column allows.
type tresColumn struct {
	offsets []int32 // one more than the rows
	keys    stringColumn
	vals    fixedColumn[float64]
	sets    fixedColumn[int32]
	block   uint64 // counts resets, so that no item's setBlock is current before it is numbered
	nsets   int32  // the numbers handed out in this block
}

// appendItem appends a row holding the entries of item k of m. Keys and
// values are never null, so their validity bitmaps need no update.
func (c *tresColumn) appendItem(m *tresMemo, k int32) {
	it := &m.items[k]
	if it.setBlock != c.block {
		it.set, it.setBlock = c.nsets, c.block
		c.nsets++
	}
	c.sets.append(it.set)
	base := int32(len(c.keys.data))
	c.keys.data = append(c.keys.data, m.names[it.names:it.namesEnd]...)
	for _, e := range m.ends[it.entries:it.entriesEnd] {
		c.keys.offsets = append(c.keys.offsets, base+e)
	}
	c.vals.vals = append(c.vals.vals, m.vals[it.entries:it.entriesEnd]...)
	c.offsets = append(c.offsets, int32(len(c.vals.vals)))
}

func (c *tresColumn) reset() {
	c.offsets = append(c.offsets[:0], 0)
	c.keys.reset()
	c.vals.reset()
	c.sets.reset()
	c.block++ // never 0, the setBlock of a new item
	c.nsets = 0
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
