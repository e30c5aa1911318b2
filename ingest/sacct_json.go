package ingest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/fairledger/fairledger/schemas"
)

// SacctJSONVersions are the data_parser versions whose jobs documents
// (sacct --json, slurmrestd's /slurmdb/vX/jobs) the sacct reader reads,
// each with the Slurm release whose sacct prints it. Their job and step
// fields the reader uses have the same names and shapes (Slurm's
// src/plugins/data_parser/vX/parsers.c, PARSER_ARRAY(JOB) and (STEP)).
var SacctJSONVersions = map[string]string{
	"v0.0.42": "24.11",
	"v0.0.43": "25.05",
	"v0.0.44": "25.11",
	"v0.0.45": "26.05",
}

// jsonFields are the -P columns a JSON job is written as before the -P
// parser reads it: the columns of PriorityFields, all of which a JSON job
// holds.
var jsonFields = PriorityFields

// jsonFieldPath names, for an error, the JSON field a -P column is made
// of (docs/inputs.md lists the mapping).
var jsonFieldPath = map[string]string{
	"JobID": "job_id", "JobIDRaw": "job_id", "Cluster": "cluster", "Partition": "partition",
	"QOS": "qos", "Account": "account", "User": "user", "Submit": "time.submission",
	"Eligible": "time.eligible", "Start": "time.start", "End": "time.end", "Elapsed": "time.elapsed",
	"ElapsedRaw": "time.elapsed", "Suspended": "time.suspended", "State": "state.current",
	"ExitCode": "exit_code", "NNodes": "allocation_nodes", "AllocCPUS": "tres.allocated",
	"ReqCPUS": "required.CPUs", "ReqNodes": "tres.requested", "ReqTRES": "tres.requested",
	"AllocTRES": "tres.allocated", "Timelimit": "time.limit", "Priority": "priority",
	"JobName": "name", "SubmitLine": "submit_line",
}

// isJSONText reports whether the input starts, after white space, with
// '{': a sacct --json (or slurmrestd) document rather than sacct -P text,
// whose first line is a header or a job id.
func isJSONText(br *bufio.Reader) bool {
	head, _ := br.Peek(sniffSpan)
	t := bytes.TrimLeft(head, " \t\r\n")
	return len(t) > 0 && t[0] == '{'
}

// jsonOrigin is where a -P line made of a JSON job comes from: the line of
// the job in the JSON document and its job id.
type jsonOrigin struct {
	line int
	job  string
}

// newSacctJSONReader is NewSacctReader for a JSON document: the jobs are
// written as -P lines of jsonFields (one per job and per step, as sacct
// -P prints them) by decode workers fed and drained in document order
// (see produceJSON), and the -P workers read those lines, so that a JSON file and the -P
// dump of the same jobs give the same rows, skips and rejections.
func newSacctJSONReader(name string, br *bufio.Reader, opt SacctOptions) (*SacctReader, error) {
	lay := &sacctLayout{dense: schemas.DenseTRESList(opt.DenseTRES), request: opt.RequestColumns}
	if err := lay.init(jsonFields); err != nil {
		return nil, &ParseError{File: name, Err: err}
	}
	s := &SacctReader{
		name:    name,
		opt:     opt,
		schema:  schemas.JobsWith(schemas.JobsOptions{DenseTRES: opt.DenseTRES, Request: opt.RequestColumns, Pending: opt.KeepPending}),
		layout:  lay,
		stats:   Stats{File: name},
		results: make(chan chunkResult, opt.Workers),
		done:    make(chan struct{}),
		pending: make(map[int]chunkResult),
		json:    true,
	}
	s.start(br, 1)
	return s, nil
}

// jsonBatchBytes bounds the JSON text of the jobs a batch holds before it
// is handed to a decode worker (the block size when that is smaller).
const jsonBatchBytes = 256 << 10

// jsonBatch is a run of consecutive jobs of the "jobs" array: their text,
// cut out of the document by the walk, and what a decode worker made of
// each of them.
type jsonBatch struct {
	raw     []byte     // the jobs' text, one after the other
	jobs    []jsonDone // one per job, in order
	out     []byte     // the -P lines of the jobs that decoded
	scratch []byte
	// done receives once a decode worker is through with the batch.
	done chan struct{}
}

// jsonDone is one job of a batch.
type jsonDone struct {
	end    int // end of its text in raw
	line   int // the JSON line it starts on
	outEnd int // end of its -P lines in out
	lines  int // number of its -P lines
	id     string
	rej    *chunkResult // its rejection, when a field refused its value
	err    error        // a decoding failure that ends the read
}

// jsonUnit is what the walk hands the sequencer, in document order: a
// batch of jobs, a result to pass on (a warning, the error that ends the
// read), or, with flush, the end of the jobs.
type jsonUnit struct {
	batch *jsonBatch
	res   chunkResult
	flush bool
}

// produceJSON is produce for a JSON document. One goroutine walks the
// document with encoding/json's decoder (memory does not grow with the
// file) and cuts the "jobs" array into batches of whole jobs; decode
// workers (SacctOptions.Workers of them) decode each batch and write its
// jobs and steps as -P lines; the sequencer, this goroutine, takes the
// batches back in document order, writes their lines into blocks and
// hands them to the -P workers. The document's data_parser version
// (meta.plugin.data_parser, before or after the jobs) is checked when it
// is read; an unknown or missing one fails the read, so a run commits
// nothing. Blocks, results and errors are the ones a job-at-a-time walk
// would give, in the same order.
func (s *SacctReader) produceJSON(br *bufio.Reader, work chan<- chunk, pool chan *[]byte) {
	nw := s.opt.Workers
	ring := make(chan *jsonBatch, 2*nw+2) // bounds the batches in flight
	for range cap(ring) {
		ring <- &jsonBatch{done: make(chan struct{}, 1)}
	}
	decode := make(chan *jsonBatch, nw)
	order := make(chan jsonUnit, cap(ring)+2)
	var wg sync.WaitGroup
	for range nw {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range decode {
				b.decode(s.name)
				b.done <- struct{}{}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(decode)
		defer close(order)
		lt := &lineTracker{r: br, line: 1}
		w := &jsonWalk{s: s, lt: lt, dec: json.NewDecoder(lt), ring: ring, decode: decode, order: order,
			batchBytes: min(s.opt.ChunkBytes, jsonBatchBytes)}
		w.dec.UseNumber()
		w.run()
	}()
	q := &jsonSeq{s: s, work: work, pool: pool, line: 1}
	q.run(order, ring)
	wg.Wait()
}

// jsonWalk walks one JSON document for produceJSON.
type jsonWalk struct {
	s          *SacctReader
	lt         *lineTracker
	dec        *json.Decoder
	ring       chan *jsonBatch
	decode     chan<- *jsonBatch
	order      chan<- jsonUnit
	batchBytes int
	cur        *jsonBatch // the batch being filled
	// version is meta.plugin.data_parser once read.
	version  string
	metaLine int
}

// run walks the document and hands on the error that ends it, if any.
func (w *jsonWalk) run() {
	err := w.walk()
	if err == nil || err == errStop {
		return
	}
	var pe *ParseError
	var fe *FileError
	if !errors.As(err, &pe) && !errors.As(err, &fe) {
		err = &ParseError{File: w.s.name, Line: w.lt.lineAt(w.dec.InputOffset()), Err: err}
	}
	w.send(jsonUnit{res: chunkResult{err: err}})
}

// send hands a unit to the sequencer after the batch being filled; false
// when the reader was closed.
func (w *jsonWalk) send(u jsonUnit) bool {
	if !w.sendBatch() {
		return false
	}
	select {
	case w.order <- u:
		return true
	case <-w.s.done:
		return false
	}
}

// sendBatch hands the batch being filled, if any, to a decode worker and
// to the sequencer.
func (w *jsonWalk) sendBatch() bool {
	b := w.cur
	if b == nil {
		return true
	}
	w.cur = nil
	select {
	case w.decode <- b:
	case <-w.s.done:
		return false
	}
	select {
	case w.order <- jsonUnit{batch: b}:
		return true
	case <-w.s.done:
		return false
	}
}

// errStop ends the walk when the reader is closed.
var errStop = errors.New("reader closed")

func (w *jsonWalk) walk() error {
	name := w.s.name
	tok, err := w.dec.Token()
	if err != nil {
		return w.syntax(err)
	}
	if tok != json.Delim('{') {
		return &FileError{File: name, Line: 1, Msg: "a JSON document that is not an object: not sacct --json output"}
	}
	seenJobs := false
	for w.dec.More() {
		tok, err := w.dec.Token()
		if err != nil {
			return w.syntax(err)
		}
		key, _ := tok.(string)
		switch key {
		case "jobs":
			seenJobs = true
			if err := w.jobs(); err != nil {
				return err
			}
		case "meta":
			w.metaLine = w.lt.lineAt(w.dec.InputOffset())
			var m jsonMeta
			if err := w.dec.Decode(&m); err != nil {
				return w.valueErr("meta", err)
			}
			w.version = m.version()
			if err := w.checkVersion(); err != nil {
				return err
			}
		case "errors":
			line := w.lt.lineAt(w.dec.InputOffset())
			var es []jsonProblem
			if err := w.dec.Decode(&es); err != nil {
				return w.valueErr("errors", err)
			}
			if len(es) > 0 {
				return &FileError{File: name, Line: line, Msg: fmt.Sprintf("the document reports %d error(s) (the first: %s): Slurm did not give the jobs; fetch them again", len(es), es[0])}
			}
		case "warnings":
			var ws []jsonProblem
			if err := w.dec.Decode(&ws); err != nil {
				return w.valueErr("warnings", err)
			}
			var st Stats
			for _, x := range ws {
				st.Warnings = append(st.Warnings, "sacct --json warning: "+x.String())
			}
			if len(st.Warnings) > 0 && !w.send(jsonUnit{res: chunkResult{stats: st}}) {
				return errStop
			}
		default:
			var skip json.RawMessage
			if err := w.dec.Decode(&skip); err != nil {
				return w.syntax(err)
			}
		}
	}
	if _, err := w.dec.Token(); err != nil { // the closing '}'
		return w.syntax(err)
	}
	if _, err := w.dec.Token(); err != io.EOF {
		if err == nil {
			err = errors.New("more after the document's end")
		}
		return w.syntax(err)
	}
	if !w.send(jsonUnit{flush: true}) {
		return errStop
	}
	if !seenJobs {
		return &FileError{File: name, Msg: `no "jobs" array: not sacct --json (or slurmrestd /slurmdb/.../jobs) output`}
	}
	if w.version == "" {
		return &FileError{File: name, Msg: `no meta.plugin.data_parser: the data_parser version of the document is unknown, and so is how to read its jobs (want one of ` + versionList() + `)`}
	}
	return nil
}

// syntax turns a decoder error into a ParseError naming the line.
func (w *jsonWalk) syntax(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return &ParseError{File: w.s.name, Line: w.lt.line + w.lt.pendingLines(), Err: errors.New("the JSON document ends early (was sacct cut off?)")}
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return &ParseError{File: w.s.name, Line: w.lt.lineAt(se.Offset), Err: fmt.Errorf("not valid JSON: %w", err)}
	}
	return err
}

// valueErr reports a document-level value that does not decode.
func (w *jsonWalk) valueErr(key string, err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return &ParseError{File: w.s.name, Line: w.lt.lineAt(te.Offset), Field: key + "." + te.Field, Value: te.Value, Err: fmt.Errorf("want %s", jsonWant(te.Type))}
	}
	return w.syntax(err)
}

func versionList() string {
	vs := make([]string, 0, len(SacctJSONVersions))
	for v, r := range SacctJSONVersions {
		vs = append(vs, v+" ("+r+")")
	}
	slices.Sort(vs)
	return strings.Join(vs, ", ")
}

// checkVersion refuses a data_parser version the reader does not know.
func (w *jsonWalk) checkVersion() error {
	if _, ok := SacctJSONVersions[w.version]; ok {
		return nil
	}
	why := "its jobs may be shaped otherwise"
	if strings.HasPrefix(w.version, "dbv") || strings.HasPrefix(w.version, "v0.0.3") {
		why = "Slurm 22.05 and 23.02's openapi plugins print jobs in another shape (fetch them with sacct -P)"
	}
	return &FileError{File: w.s.name, Line: w.metaLine, Msg: fmt.Sprintf("data_parser %q is not one fairledger reads (%s; it reads %s)", w.version, why, versionList())}
}

// jobs walks the "jobs" array: the decoder checks each job's syntax and
// finds its end (decoding it into nothing), and the job's text, which the
// line tracker still holds, goes into the batch being filled.
func (w *jsonWalk) jobs() error {
	tok, err := w.dec.Token()
	if err != nil {
		return w.syntax(err)
	}
	if tok == nil {
		return nil // "jobs": null
	}
	if tok != json.Delim('[') {
		return &ParseError{File: w.s.name, Line: w.lt.lineAt(w.dec.InputOffset()), Field: "jobs", Value: fmt.Sprint(tok), Err: errors.New("want an array of jobs")}
	}
	for w.dec.More() {
		line := w.lt.lineAt(w.dec.InputOffset())
		// A nil pointer: the value is read whole and checked, then
		// refused before anything is decoded.
		err := w.dec.Decode((*jsonJob)(nil))
		var iu *json.InvalidUnmarshalError
		if !errors.As(err, &iu) {
			if !w.sendBatch() { // the jobs before it are read first
				return errStop
			}
			return w.syntax(err)
		}
		if !w.add(w.lt.since(w.dec.InputOffset()), line) {
			return errStop
		}
	}
	if _, err := w.dec.Token(); err != nil { // ']'
		return w.syntax(err)
	}
	return nil
}

// add puts a job's text into the batch being filled, handing the batch
// on once it is full; false when the reader was closed.
func (w *jsonWalk) add(text []byte, line int) bool {
	if w.cur == nil {
		select {
		case w.cur = <-w.ring:
		case <-w.s.done:
			return false
		}
		w.cur.raw, w.cur.jobs = w.cur.raw[:0], w.cur.jobs[:0]
	}
	b := w.cur
	b.raw = append(b.raw, text...)
	b.jobs = append(b.jobs, jsonDone{end: len(b.raw), line: line})
	if len(b.raw) >= w.batchBytes {
		return w.sendBatch()
	}
	return true
}

// decode decodes the batch's jobs and writes each one and its steps as -P
// lines; a job a field of which refuses its value gets its rejection
// instead, as it would in a job-at-a-time walk.
func (b *jsonBatch) decode(name string) {
	b.out = b.out[:0]
	start := 0
	for i := range b.jobs {
		jd := &b.jobs[i]
		text := b.raw[start:jd.end]
		start = jd.end
		var j jsonJob
		var err error
		if !decodeJobFast(text, &j) {
			j = jsonJob{}
			err = json.Unmarshal(text, &j)
		}
		var te *json.UnmarshalTypeError
		switch {
		case err == nil:
			id := j.jobIDText()
			from := len(b.out)
			b.out = j.appendPsv(b.out, id, &b.scratch)
			for k := range j.Steps {
				b.out = append(b.out, id...)
				b.out = append(b.out, '.')
				b.out = append(b.out, j.Steps[k].suffix()...)
				for range len(jsonFields) - 1 {
					b.out = append(b.out, '|')
				}
				b.out = append(b.out, '\n')
			}
			// A JobName or SubmitLine holding a newline spans lines, as
			// in a -P file: every line of the job points back at it.
			jd.id, jd.lines = id, bytes.Count(b.out[from:], []byte{'\n'})
		case errors.As(err, &te):
			// The job was read whole: it is rejected, its steps skipped
			// as the -P reader skips step lines.
			// A field of ours that refused its value stops the decoding
			// of the rest of the job: its id and steps are read again
			// from the job's text.
			var again struct {
				JobID jnum              `json:"job_id"`
				Steps []json.RawMessage `json:"steps"`
			}
			if json.Unmarshal(text, &again) == nil {
				j.JobID, j.Steps = again.JobID, make([]jsonStep, len(again.Steps))
			}
			id := j.JobID.text()
			pe := &ParseError{File: name, Line: jd.line, Job: id, Field: te.Field, Value: te.Value, Err: fmt.Errorf("want %s", jsonWant(te.Type))}
			st := Stats{File: name, Read: 1, Rejected: 1, Lines: 1}
			if n := int64(len(j.Steps)); n > 0 {
				st.Read += n
				st.Lines += n
				st.Skip(SkipJobStep)
				st.Skipped[SkipJobStep] += n - 1
			}
			jd.rej = &chunkResult{stats: st, rejects: []rejectRec{{err: pe, raw: "job " + id}}}
		default:
			jd.err = &ParseError{File: name, Line: jd.line, Err: err}
		}
		jd.outEnd = len(b.out)
	}
}

// jsonSeq takes the decoded batches back in document order and writes
// their -P lines into blocks for the -P workers, numbering blocks and
// results.
type jsonSeq struct {
	s    *SacctReader
	work chan<- chunk
	pool chan *[]byte
	seq  int
	line int // the next -P line's number
	// The block being filled.
	bp      *[]byte
	buf     []byte
	origins []jsonOrigin
	lines   int
}

// run handles the walk's units until the walk ends, an error is handed on
// or the reader is closed.
func (q *jsonSeq) run(order <-chan jsonUnit, ring chan<- *jsonBatch) {
	for u := range order {
		ok := true
		switch {
		case u.batch != nil:
			b := u.batch
			select {
			case <-b.done:
			case <-q.s.done:
				return
			}
			ok = q.batch(b)
			ring <- b
		case u.flush:
			ok = q.flush()
		default:
			ok = q.emit(u.res) && u.res.err == nil
		}
		if !ok {
			// Closed, or ended by an error: the walk stops at its next
			// send, and nothing after the error is read.
			for u := range order {
				if u.batch != nil {
					select {
					case <-u.batch.done:
					case <-q.s.done:
						return
					}
				}
			}
			return
		}
	}
}

// batch writes a decoded batch's jobs into blocks, and hands on their
// rejections in their places; false when the read ends.
func (q *jsonSeq) batch(b *jsonBatch) bool {
	from := 0
	for i := range b.jobs {
		jd := &b.jobs[i]
		switch {
		case jd.err != nil:
			q.emit(chunkResult{err: jd.err})
			return false
		case jd.rej != nil:
			if !q.flush() || !q.emit(*jd.rej) {
				return false
			}
		default:
			if !q.add(b.out[from:jd.outEnd], jd.lines, jd.line, jd.id) {
				return false
			}
		}
		from = jd.outEnd
		if len(q.buf) >= q.s.opt.ChunkBytes && !q.flush() {
			return false
		}
	}
	return true
}

// emit hands a result to Next in its place in the input order.
func (q *jsonSeq) emit(res chunkResult) bool {
	res.seq = q.seq
	q.seq++
	select {
	case q.s.results <- res:
		return true
	case <-q.s.done:
		return false
	}
}

// flush sends the block being filled, if any, to the workers.
func (q *jsonSeq) flush() bool {
	if q.lines == 0 {
		return true
	}
	*q.bp = q.buf
	c := chunk{seq: q.seq, line: q.line, lines: q.lines, data: q.buf, buf: q.bp, origins: q.origins}
	q.seq++
	q.line += q.lines
	q.bp, q.buf, q.origins, q.lines = nil, nil, nil, 0
	select {
	case q.work <- c:
		return true
	case <-q.s.done:
		return false
	}
}

// add writes one job's -P lines (n of them) into the block; false when
// the reader was closed.
func (q *jsonSeq) add(text []byte, n, line int, id string) bool {
	if q.bp == nil {
		select {
		case q.bp = <-q.pool:
		case <-q.s.done:
			return false
		}
		q.buf = (*q.bp)[:0]
	}
	q.buf = append(q.buf, text...)
	for range n {
		q.origins = append(q.origins, jsonOrigin{line: line, job: id})
	}
	q.lines += n
	return true
}

// jsonProblem is an entry of the document's "errors" or "warnings".
type jsonProblem struct {
	Description string `json:"description"`
	Source      string `json:"source"`
	Error       string `json:"error"`
}

func (p jsonProblem) String() string {
	parts := []string{}
	for _, s := range []string{p.Error, p.Description, p.Source} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, ": ")
}

// jsonMeta is the document's "meta": the data_parser plugin of
// data_parser (24.11 on), or the openapi plugin of 22.05 and 23.02.
type jsonMeta struct {
	Plugin struct {
		DataParser string `json:"data_parser"`
		Name       string `json:"name"`
	} `json:"plugin"`
	Slurm struct {
		Release string `json:"release"`
	} `json:"slurm"`
}

func (m jsonMeta) version() string {
	if v, ok := strings.CutPrefix(m.Plugin.DataParser, "data_parser/"); ok {
		return v
	}
	if m.Plugin.DataParser != "" {
		return m.Plugin.DataParser
	}
	if m.Plugin.Name != "" {
		return "openapi " + m.Plugin.Name
	}
	return ""
}

// jnum is a number of data_parser's: a plain number, or an object
// {"set", "infinite", "number"} (UINT32_NO_VAL and the like).
type jnum struct {
	n        int64
	set, inf bool
}

// UnmarshalJSON reads both forms; null is unset.
func (x *jnum) UnmarshalJSON(b []byte) error {
	*x = jnum{}
	if x.fast(b) {
		return nil
	}
	return x.slow(b)
}

// slow reads every form by encoding/json.
func (x *jnum) slow(b []byte) error {
	*x = jnum{}
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0 || string(b) == "null":
		return nil
	case b[0] == '{':
		var o struct {
			Set      *bool       `json:"set"`
			Infinite bool        `json:"infinite"`
			Number   json.Number `json:"number"`
		}
		if err := json.Unmarshal(b, &o); err != nil {
			return &json.UnmarshalTypeError{Value: string(b), Type: jnumType}
		}
		x.inf = o.Infinite
		x.set = (o.Set == nil || *o.Set) && !o.Infinite
		if o.Number != "" {
			n, err := numberInt(o.Number)
			if err != nil {
				return &json.UnmarshalTypeError{Value: string(o.Number), Type: jnumType}
			}
			x.n = n
		}
		return nil
	}
	n, err := numberInt(json.Number(b))
	if err != nil {
		return &json.UnmarshalTypeError{Value: string(b), Type: jnumType}
	}
	x.n, x.set = n, true
	return nil
}

// fast reads the forms sacct prints, a whole number or {"set": bool,
// "infinite": bool, "number": whole number} with these keys spelt so,
// without reflection; false for anything else (null, another key, a
// fraction, an exponent, a string), which UnmarshalJSON reads the slow way.
// b is one valid JSON value, as the decoder hands it over.
func (x *jnum) fast(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	if b[0] != '{' {
		n, ok := wholeNumber(b)
		x.n, x.set = n, ok
		return ok
	}
	set, inf := true, false
	for i := 1; ; {
		i = skipJSONSpace(b, i)
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case '}':
			x.inf = inf
			x.set = set && !inf
			return true
		case ',':
			i++
			continue
		case '"':
		default:
			return false
		}
		e := bytes.IndexByte(b[i+1:], '"')
		if e < 0 {
			return false
		}
		key := b[i+1 : i+1+e]
		i = skipJSONSpace(b, i+2+e)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = skipJSONSpace(b, i+1)
		v := i
		for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ' ' && b[i] != '\t' && b[i] != '\n' && b[i] != '\r' {
			i++
		}
		val := string(b[v:i]) // compared, not kept: no allocation
		switch string(key) {
		case "set", "infinite":
			if val != "true" && val != "false" {
				return false
			}
			if key[0] == 's' {
				set = val == "true"
			} else {
				inf = val == "true"
			}
		case "number":
			n, ok := wholeNumber(b[v:i])
			if !ok {
				return false
			}
			x.n = n
		default:
			return false
		}
	}
}

// wholeNumber reads a JSON integer of at most 18 digits (which fits in
// 64 bits); false for anything else.
func wholeNumber(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 || len(b) > 1 && b[0] == '0' {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// skipJSONSpace is the index of the first byte at or after i that is not
// JSON white space.
func skipJSONSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// jnumType and jstrsType name what a jnum and a jstrs want, in errors.
var (
	jnumType  = reflect.TypeFor[jnum]()
	jstrsType = reflect.TypeFor[jstrs]()
)

// jsonWant says what a field of type t holds, for an error.
func jsonWant(t reflect.Type) string {
	switch t {
	case jnumType:
		return `a number, or {"set", "infinite", "number"}`
	case jstrsType:
		return "a list of strings"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Slice:
		return "a list"
	case reflect.Struct:
		return "an object"
	}
	return t.String()
}

// numberInt reads a whole JSON number (an integral float such as 1e3 as
// well; strconv, not math/big, whose exact parsing of an exponent such as
// 1e999999999 takes minutes).
func numberInt(n json.Number) (int64, error) {
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return i, nil
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		return 0, err
	}
	if f != math.Trunc(f) || f < math.MinInt64 || f >= math.MaxInt64 {
		return 0, errors.New("not a whole number within 64 bits")
	}
	return int64(f), nil
}

// uint32 is the number as one of Slurm's uint32 fields: NO_VAL
// (4294967294) unset, INFINITE (4294967295) infinite.
func (x jnum) uint32() jnum {
	switch {
	case x.set && x.n == math.MaxUint32-1:
		return jnum{}
	case x.set && x.n == math.MaxUint32:
		return jnum{inf: true}
	}
	return x
}

// text is the number in decimal, "" when unset.
func (x jnum) text() string {
	if !x.set {
		return ""
	}
	return strconv.FormatInt(x.n, 10)
}

// jstrs is a list of strings, or one string (state/current before
// data_parser turned it into a list of flags).
type jstrs []string

// UnmarshalJSON reads a list or a single string.
func (s *jstrs) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var one string
		if err := json.Unmarshal(b, &one); err != nil {
			return err
		}
		*s = jstrs{one}
		return nil
	}
	var l []string
	if err := json.Unmarshal(b, &l); err != nil {
		return &json.UnmarshalTypeError{Value: string(b), Type: jstrsType}
	}
	*s = l
	return nil
}

// jtres is one TRES of a list: {type, name, id, count}.
type jtres struct {
	Type  string `json:"type"`
	Name  string `json:"name"`
	ID    jnum   `json:"id"`
	Count jnum   `json:"count"`
}

// jexit is PROCESS_EXIT_CODE: {status, return_code, signal{id, name}}.
type jexit struct {
	Status     jstrs `json:"status"`
	ReturnCode jnum  `json:"return_code"`
	Signal     struct {
		ID jnum `json:"id"`
	} `json:"signal"`
}

// jsonStep is what the reader reads of a step: its id.
type jsonStep struct {
	Step struct {
		ID string `json:"id"`
	} `json:"step"`
}

// suffix is the step's part of its -P JobID: "batch" of "12.batch".
func (s *jsonStep) suffix() string {
	id := s.Step.ID
	if i := strings.IndexByte(id, '.'); i >= 0 {
		return id[i+1:]
	}
	return id
}

// jsonJob is what the reader reads of a job (data_parser v0.0.42 to
// v0.0.45: the paths of PARSER_ARRAY(JOB)).
type jsonJob struct {
	Account         string `json:"account"`
	AllocationNodes jnum   `json:"allocation_nodes"`
	Array           struct {
		JobID  jnum `json:"job_id"`
		TaskID jnum `json:"task_id"`
		Task   string
		Limits struct {
			Max struct {
				Running struct {
					Tasks jnum `json:"tasks"`
				} `json:"running"`
			} `json:"max"`
		} `json:"limits"`
	} `json:"array"`
	Cluster  string `json:"cluster"`
	ExitCode jexit  `json:"exit_code"`
	Het      struct {
		JobID     jnum `json:"job_id"`
		JobOffset jnum `json:"job_offset"`
	} `json:"het"`
	JobID           jnum   `json:"job_id"`
	KillRequestUser string `json:"kill_request_user"`
	Name            string `json:"name"`
	Partition       string `json:"partition"`
	Priority        jnum   `json:"priority"`
	QOS             string `json:"qos"`
	Required        struct {
		CPUs jnum `json:"CPUs"`
	} `json:"required"`
	State struct {
		Current jstrs `json:"current"`
	} `json:"state"`
	Steps      []jsonStep `json:"steps"`
	SubmitLine string     `json:"submit_line"`
	Time       struct {
		Elapsed    jnum `json:"elapsed"`
		Eligible   jnum `json:"eligible"`
		End        jnum `json:"end"`
		Limit      jnum `json:"limit"`
		Start      jnum `json:"start"`
		Submission jnum `json:"submission"`
		Suspended  jnum `json:"suspended"`
	} `json:"time"`
	TRES struct {
		Allocated []jtres `json:"allocated"`
		Requested []jtres `json:"requested"`
	} `json:"tres"`
	User string `json:"user"`
}

// jobIDText is the job's JobID as sacct -P prints it
// (slurmdb_get_job_id_str): 12_[3-5%2] for the pending tasks of an array,
// 12_3 for a task, 12+1 for a het job component, else 12.
func (j *jsonJob) jobIDText() string {
	switch {
	case j.Array.Task != "":
		t := arrayTaskText(j.Array.Task)
		if m := j.Array.Limits.Max.Running.Tasks; m.set && m.n > 0 {
			t += "%" + strconv.FormatInt(m.n, 10)
		}
		return j.Array.JobID.text() + "_[" + t + "]"
	case j.Array.TaskID.uint32().set:
		return j.Array.JobID.text() + "_" + j.Array.TaskID.text()
	case j.Het.JobID.set && j.Het.JobID.n != 0:
		off := j.Het.JobOffset.uint32()
		if !off.set {
			off = jnum{n: math.MaxUint32 - 1, set: true} // NO_VAL, as sacct prints it
		}
		return j.Het.JobID.text() + "+" + off.text()
	}
	return j.JobID.text()
}

// arrayTaskText is an array's task string as sacct prints it
// (xlate_array_task_str): slurmdbd stores it as a hex bitmap, 0x3F0 being
// tasks 4 to 9; anything else is printed as it is.
func arrayTaskText(s string) string {
	hex, ok := strings.CutPrefix(s, "0x")
	if !ok || len(hex) == 0 {
		return s
	}
	var bitsSet []int
	for i := len(hex) - 1; i >= 0; i-- {
		v, err := strconv.ParseUint(hex[i:i+1], 16, 8)
		if err != nil {
			return s
		}
		base := (len(hex) - 1 - i) * 4
		for b := 0; b < 4; b++ {
			if v&(1<<b) != 0 {
				bitsSet = append(bitsSet, base+b)
			}
		}
	}
	if len(bitsSet) == 0 {
		return s
	}
	first, last := bitsSet[0], bitsSet[len(bitsSet)-1]
	// A step function: more than 5 tasks at one stride over more than 10.
	if last-first > 10 && len(bitsSet) > 5 && bitsSet[1] != first+1 {
		step := bitsSet[1] - bitsSet[0]
		even := true
		for i := 2; i < len(bitsSet); i++ {
			if bitsSet[i]-bitsSet[i-1] != step {
				even = false
				break
			}
		}
		if even {
			return fmt.Sprintf("%d-%d:%d", first, last, step)
		}
	}
	var b strings.Builder
	for i := 0; i < len(bitsSet); {
		k := i
		for k+1 < len(bitsSet) && bitsSet[k+1] == bitsSet[k]+1 {
			k++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(bitsSet[i]))
		if k > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(bitsSet[k]))
		}
		i = k + 1
	}
	return b.String()
}

// appendPsv appends the job's -P line (the columns of jsonFields, times in
// Unix seconds as sacct prints them with SLURM_TIME_FORMAT=%s).
func (j *jsonJob) appendPsv(b []byte, id string, scratch *[]byte) []byte {
	sep := func() { b = append(b, '|') }
	b = append(b, id...)
	sep()
	b = append(b, j.JobID.text()...)
	sep()
	b = append(b, j.Cluster...)
	sep()
	b = append(b, j.Partition...)
	sep()
	b = append(b, j.QOS...)
	sep()
	b = append(b, j.Account...)
	sep()
	b = append(b, j.User...)
	sep()
	b = appendStamp(b, j.Time.Submission)
	sep()
	b = appendStamp(b, j.Time.Eligible)
	sep()
	b = appendStamp(b, j.Time.Start)
	sep()
	b = appendStamp(b, j.Time.End)
	sep()
	if e := j.Time.Elapsed.uint32(); e.set {
		b = appendSecs(b, e.n)
	}
	sep()
	b = append(b, j.Time.Elapsed.uint32().text()...)
	sep()
	if s := j.Time.Suspended.uint32(); s.set {
		b = appendSecs(b, s.n)
	}
	sep()
	b = j.appendState(b)
	sep()
	b = j.ExitCode.appendText(b)
	sep()
	nn := j.AllocationNodes.uint32()
	if !nn.set || nn.n == 0 {
		from := j.TRES.Allocated
		if len(from) == 0 {
			from = j.TRES.Requested
		}
		if c, ok := tresCount(from, "node"); ok {
			nn = jnum{n: c, set: true}
		} else {
			nn = jnum{n: 0, set: true}
		}
	}
	b = append(b, nn.text()...)
	sep()
	if c, ok := tresCount(j.TRES.Allocated, "cpu"); ok {
		b = strconv.AppendInt(b, c, 10)
	}
	sep()
	b = append(b, j.Required.CPUs.uint32().text()...)
	sep()
	if c, ok := tresCount(j.TRES.Requested, "node"); ok {
		b = strconv.AppendInt(b, c, 10)
	} else {
		b = append(b, '0')
	}
	sep()
	b = appendTRES(b, j.TRES.Requested, scratch)
	sep()
	b = appendTRES(b, j.TRES.Allocated, scratch)
	sep()
	b = appendTimelimit(b, j.Time.Limit)
	sep()
	b = append(b, j.Priority.uint32().text()...)
	sep()
	b = append(b, j.Name...)
	sep()
	b = append(b, j.SubmitLine...)
	return append(b, '\n')
}

// appendStamp writes a time as sacct -P prints it with
// SLURM_TIME_FORMAT=%s (slurm_make_time_str): Unix seconds, "Unknown" for
// 0 and INFINITE, "None" for NO_VAL (the Start of a job cancelled before
// it started).
func appendStamp(b []byte, t jnum) []byte {
	switch {
	case !t.set || t.n == 0 || t.n == math.MaxUint32:
		return append(b, "Unknown"...)
	case t.n == math.MaxUint32-1:
		return append(b, "None"...)
	}
	return strconv.AppendInt(b, t.n, 10)
}

// appendSecs writes seconds as [D-]HH:MM:SS (secs2time_str).
func appendSecs(b []byte, secs int64) []byte {
	if secs < 0 {
		return append(b, "INVALID"...)
	}
	d, h, m, s := secs/86400, secs/3600%24, secs/60%60, secs%60
	if d > 0 {
		b = strconv.AppendInt(b, d, 10)
		b = append(b, '-')
	}
	return fmt.Appendf(b, "%02d:%02d:%02d", h, m, s)
}

// appendTimelimit writes time/limit (minutes) as sacct prints Timelimit.
func appendTimelimit(b []byte, l jnum) []byte {
	l = l.uint32()
	switch {
	case l.inf:
		return append(b, "UNLIMITED"...)
	case !l.set:
		return append(b, "Partition_Limit"...)
	case l.n == 0:
		return b
	}
	return appendSecs(b, l.n*60)
}

// jobStateFlags are the state flags sacct prints instead of the base
// state, in job_state_string's order.
var jobStateFlags = []string{"COMPLETING", "STAGE_OUT", "CONFIGURING", "EXPEDITING", "RESIZING", "REQUEUED",
	"REQUEUE_FED", "REQUEUE_HOLD", "SPECIAL_EXIT", "STOPPED", "REVOKED", "RESV_DEL_HOLD", "SIGNALING"}

// appendState writes the State as sacct -P prints it: the first flag of
// jobStateFlags the job has, else its base state; "CANCELLED by U" when
// it was cancelled by someone (kill_request_user: a user name, where -P
// prints a uid; root is written 0, any other name as it is).
func (j *jsonJob) appendState(b []byte) []byte {
	cur := j.State.Current
	for _, f := range jobStateFlags {
		if slices.Contains(cur, f) {
			return append(b, f...)
		}
	}
	base := ""
	for _, s := range cur {
		if !slices.Contains(jobStateFlags, s) {
			base = s
			break
		}
	}
	b = append(b, base...)
	if base == "CANCELLED" && j.KillRequestUser != "" {
		b = append(b, " by "...)
		if j.KillRequestUser == "root" {
			b = append(b, '0') // the one name whose uid every system agrees on
		} else {
			b = append(b, j.KillRequestUser...)
		}
	}
	return b
}

// appendText writes an exit code as sacct prints ExitCode: "rc:signal",
// empty while pending.
func (e jexit) appendText(b []byte) []byte {
	switch {
	case slices.Contains(e.Status, "PENDING"):
		return b
	case slices.Contains(e.Status, "SIGNALED"):
		b = append(b, "0:"...)
		return append(b, e.Signal.ID.uint32().text()...)
	case slices.Contains(e.Status, "SUCCESS"), slices.Contains(e.Status, "ERROR"):
		rc := e.ReturnCode.uint32()
		if !rc.set {
			rc = jnum{set: true}
		}
		b = append(b, rc.text()...)
		return append(b, ":0"...)
	case len(e.Status) == 0 && !e.ReturnCode.set:
		return b
	}
	return append(b, "0:0"...)
}

// tresName is a TRES's name as sacct prints it: type, or type/name.
func (t *jtres) appendName(b []byte) []byte {
	b = append(b, t.Type...)
	if t.Name != "" {
		b = append(b, '/')
		b = append(b, t.Name...)
	}
	return b
}

// tresCount is the count of the TRES named name (a type without a name:
// cpu, mem, node, billing) in l.
func tresCount(l []jtres, name string) (int64, bool) {
	for i := range l {
		if l[i].Name == "" && l[i].Type == name && l[i].Count.set {
			return l[i].Count.n, true
		}
	}
	return 0, false
}

// appendTRES writes a TRES list as sacct -P prints AllocTRES and ReqTRES
// (slurmdb_make_tres_string_from_simple): type[/name]=count in the order
// of the names, the memory kinds (mem, gres/gpumem, bb/*), which the JSON
// gives in megabytes, in the largest unit that keeps the count whole (M,
// G, T, P), a count Slurm never set (NO_VAL64, printed -2) left out.
func appendTRES(b []byte, l []jtres, scratch *[]byte) []byte {
	idx := make([]int, 0, 8)
	for i := range l {
		if l[i].Count.n == -2 && l[i].Count.set || !l[i].Count.set && !l[i].Count.inf {
			continue
		}
		idx = append(idx, i)
	}
	names := (*scratch)[:0]
	start := make([]int, len(idx)+1)
	for k, i := range idx {
		start[k] = len(names)
		names = l[i].appendName(names)
	}
	start[len(idx)] = len(names)
	*scratch = names
	name := func(k int) []byte { return names[start[k]:start[k+1]] }
	order := make([]int, len(idx))
	for k := range order {
		order[k] = k
	}
	slices.SortStableFunc(order, func(a, c int) int { return bytes.Compare(name(a), name(c)) })
	for n, k := range order {
		t := &l[idx[k]]
		if n > 0 {
			b = append(b, ',')
		}
		b = append(b, name(k)...)
		b = append(b, '=')
		switch {
		case t.Count.inf || t.Count.n == -1:
			b = append(b, "NONE"...)
		case t.Type == "mem" || t.Name == "gpumem" || t.Type == "bb":
			b = appendMegs(b, t.Count.n)
		default:
			b = strconv.AppendInt(b, t.Count.n, 10)
		}
	}
	return b
}

// appendMegs writes a size in megabytes in the largest unit that keeps it
// whole. sacct's convert_num_unit also divides a multiple of 512 (1536M
// is 1.50G); both read back as the same MiB, which is all the reader
// keeps.
func appendMegs(b []byte, mb int64) []byte {
	units := "MGTPE"
	u := 0
	for mb != 0 && mb%1024 == 0 && u < len(units)-1 {
		mb /= 1024
		u++
	}
	b = strconv.AppendInt(b, mb, 10)
	return append(b, units[u])
}

// lineTracker counts the lines of what a reader has given, so that a byte
// offset of the JSON decoder (which reads ahead) turns into a line. It
// keeps the bytes read past the last offset asked about (buf[off:]):
// queries come in input order, and the decoder reads at most its buffer
// ahead. The consumed prefix is dropped only once it is most of buf, so
// that each byte is copied a bounded number of times.
type lineTracker struct {
	r    io.Reader
	base int64  // offset of buf[off]
	line int    // line of offset base
	buf  []byte // bytes read; buf[off:] from base on
	off  int
}

func (t *lineTracker) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if t.off > 0 && t.off >= len(t.buf)/2 {
		t.buf = t.buf[:copy(t.buf, t.buf[t.off:])]
		t.off = 0
	}
	t.buf = append(t.buf, p[:n]...)
	return n, err
}

// lineAt is the line of the first byte at or after off that is not white
// space, ',' or ':' (the start of the next value); off must not go back.
func (t *lineTracker) lineAt(off int64) int {
	rest := t.buf[t.off:]
	k := int(off - t.base)
	if k < 0 {
		return t.line
	}
	k = min(k, len(rest))
	for k < len(rest) && strings.IndexByte(" \t\r\n,:", rest[k]) >= 0 {
		k++
	}
	t.line += bytes.Count(rest[:k], []byte{'\n'})
	t.base += int64(k)
	t.off += k
	return t.line
}

// since is what was read from the last offset asked about (the start of
// the value being decoded) to off.
func (t *lineTracker) since(off int64) []byte {
	rest := t.buf[t.off:]
	k := int(off - t.base)
	if k < 0 || k > len(rest) {
		return nil
	}
	return rest[:k]
}

// pendingLines counts the newlines read past the last offset asked about.
func (t *lineTracker) pendingLines() int { return bytes.Count(t.buf[t.off:], []byte{'\n'}) }

// fromJSON moves a rejection of a -P line made of a JSON job (line, of
// the block starting at -P line first) to the job's JSON line, with its
// job id and the JSON field its column comes from.
func (e *ParseError) fromJSON(origins []jsonOrigin, first int) {
	k := e.Line - first
	if k < 0 || k >= len(origins) {
		return
	}
	e.Line, e.Job = origins[k].line, origins[k].job
	if p, ok := jsonFieldPath[e.Field]; ok {
		e.Field = p
	}
}
