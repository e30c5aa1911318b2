package ingest

import (
	"bytes"
	"errors"
	"math"
	"unsafe"
)

// The request columns of a sacct reader with RequestColumns: what a job
// asked for and how it was submitted (schemas.RequestFields).

// reqRow holds the request values of the record being parsed. The
// parser owns one and reuses it (with its last SubmitLine) from row to row.
type reqRow struct {
	cpus, nodes, prio       int64
	cpusOK, nodesOK, prioOK bool
	tres                    int32 // ReqTRES: item of sacctParser.tresMemo
	tresOK                  bool
	// What SubmitLine gave: nice, begin and hold are valid with submitOK;
	// parts is nil without a -p (or when submitOK is false).
	nice        int64
	throttle    int64 // -a/--array's %N
	begin, hold bool
	submitOK    bool
	parts       []byte
	partBuf     []byte
	// The last SubmitLine read (with lastOK) and its result.
	lastLine []byte
	lastSub  Submission
	lastErr  error
	lastOK   bool
}

var errReqNodes = errors.New("not a node count (want a whole number, as sacct prints it: 16, 1K, 1.50K)")

// parseRequest parses the request columns of the current record into p.req:
// ReqCPUS, ReqNodes, ReqTRES, Priority and SubmitLine, each only when the
// file has it. A blank value is null; a malformed one rejects the record.
func (p *sacctParser) parseRequest(r *sacctRow, st *Stats) *ParseError {
	q := &p.req
	q.cpusOK, q.nodesOK, q.prioOK, q.tresOK, q.submitOK = false, false, false, false, false
	q.parts = nil
	if v := p.get(colReqCPUS); len(v) > 0 {
		n, err := parseInt(v)
		if err != nil {
			return p.fieldErr(colReqCPUS, v, err)
		}
		q.cpus, q.cpusOK = n, true
	}
	if v := p.get(colReqNodes); len(v) > 0 {
		n, err := parseCount(v)
		if err != nil {
			return p.fieldErr(colReqNodes, v, err)
		}
		q.nodes, q.nodesOK = n, true
	}
	if v := p.get(colPriority); len(v) > 0 {
		n, err := parseInt(v)
		if err != nil {
			return p.fieldErr(colPriority, v, err)
		}
		q.prio, q.prioOK = n, true
	}
	if v := p.get(colReqTRES); len(v) > 0 {
		// ReqTRES shares AllocTRES's memo: a job mostly gets what it
		// asked for, and then its ReqTRES is the item parseTRES just
		// found (m.last, which stays AllocTRES's for the next row).
		m := &p.tresMemo
		k := m.last
		if k < 0 || !bytes.Equal(v, m.texts.value(k)) {
			if k = m.index.lookup(v, &m.texts); k < 0 {
				var perr *ParseError
				if k, perr = p.addTRESTo(colReqTRES, v); perr != nil {
					return perr
				}
			}
		}
		p.dupTRES = p.dupTRES || m.items[k].dup
		q.tres, q.tresOK = k, true
	}
	if v := p.get(colSubmitLine); len(v) > 0 {
		if p.subAmbig {
			st.Remark(RemarkSubmitLine)
			return nil
		}
		return p.parseSubmit(r, v, st)
	}
	return nil
}

// parseSubmit reads a SubmitLine into p.req. Array tasks share their
// array's line, so the last line's result is kept and reused.
func (p *sacctParser) parseSubmit(r *sacctRow, v []byte, st *Stats) *ParseError {
	q := &p.req
	if !q.lastOK || !bytes.Equal(v, q.lastLine) {
		q.lastLine = append(q.lastLine[:0], v...)
		// The line is read in place: the result's strings point into
		// lastLine, which stays as it is until the next line replaces
		// both (parts is copied out of it for the row).
		line := unsafe.String(unsafe.SliceData(q.lastLine), len(q.lastLine))
		q.lastSub, q.lastErr = parseSubmitLine(line, q.lastSub.Components)
		q.lastOK = true
	}
	if err := q.lastErr; err != nil {
		if errors.Is(err, ErrUnreadableSubmitLine) {
			st.Remark(RemarkSubmitLine)
			return nil
		}
		return p.fieldErr(colSubmitLine, v, err)
	}
	// Component k of a heterogeneous job is the record <id>+k.
	comp := 0
	if r.id.kind == jobHetComponent {
		if r.id.task >= int64(len(q.lastSub.Components)) {
			st.Remark(RemarkSubmitLine)
			return nil
		}
		comp = int(r.id.task)
	}
	o := &q.lastSub.Components[comp]
	q.nice, q.begin, q.hold, q.submitOK = o.Nice, o.Begin, o.Hold, true
	q.throttle = o.ArrayThrottle
	if o.Partitions != "" {
		q.partBuf = append(q.partBuf[:0], o.Partitions...)
		q.parts = q.partBuf
	}
	return nil
}

// parseCount parses a count as sacct prints it through convert_num_unit
// in its default exact mode (ReqNodes): digits, or a value of at least
// 1024 divided by 1024 while that stays a multiple of 512, with a unit
// letter (1024 → 1K, 1536 → 1.50K).
func parseCount(v []byte) (int64, error) {
	f, err := parseTRESValue(nil, v)
	if err != nil || f != math.Trunc(f) || f > 1<<53 {
		return 0, errReqNodes
	}
	return int64(f), nil
}
