package ingest

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fairledger/fairledger/schemas"
)

// Skip reasons for sacct records that are read but deliberately not charged.
const (
	SkipJobStep      = "job step"
	SkipPendingArray = "pending array range"
	SkipPending      = "pending"
	SkipNeverStarted = "never started"
)

// SacctOptions configures a SacctReader. The zero value reads a headered
// sacct -P file with times in UTC.
type SacctOptions struct {
	// Fields declares the columns of a headerless file (sacct -n), by title
	// or as a single preset name from SacctPresets ("xdmod"). When the file
	// does start with a header line, the header wins.
	Fields []string
	// PipeTimeout bounds how long a sacct file that is a named pipe may
	// give no data: no writer opening it, or a writer that stops writing
	// without closing it. Past it the read fails naming the file and the
	// time waited (0: wait for ever). A regular file is never timed out.
	PipeTimeout time.Duration
	// Location is the zone of sacct's local timestamps (sacct prints the
	// sacct host's local time). Nil means UTC. Unix-second timestamps
	// (SLURM_TIME_FORMAT=%s) need no zone.
	Location *time.Location
	// DenseTRES names the TRES, beyond schemas.DefaultDenseTRES, that get a
	// dense float64 column (typically billing.Table.DenseTRES()).
	DenseTRES []string
	// Cluster is used when the file has no Cluster column or the value is
	// empty.
	Cluster string
	// Workers is the number of parsing goroutines (default GOMAXPROCS).
	Workers int
	// ChunkBytes is the size of the blocks handed to workers (default 4 MiB);
	// each block becomes one record batch.
	ChunkBytes int
	// Allocator for the batches' Arrow buffers (default memory.DefaultAllocator).
	Allocator memory.Allocator
	// MaxRecordBytes bounds one record, all its lines (default
	// MaxLineBytes): a longer record is rejected and skipped, read without
	// being kept.
	MaxRecordBytes int
	// OnReject, if set, is called in input order for every rejected record
	// with its error and raw text.
	OnReject func(err *ParseError, record string)
	// Bounds are the job times a record may hold (Submit, Eligible, Start,
	// End and an End derived from Elapsed); a record with a time outside
	// them is rejected. The zero value rejects times before EarliestUnix
	// only; a run sets Max to its moment plus ClockSkew (RunBounds).
	Bounds TimeBounds
	// KeepPending ingests the records of jobs that never started instead
	// of skipping them (SkipPending, SkipNeverStarted, SkipPendingArray):
	// State PENDING, a Start of Unknown or None (cancelled while pending),
	// and pending array ranges (JobID 123_[4-9], array_task_id null). Their
	// start is null (the schema's start is nullable, schemas.JobsOptions
	// Pending), and so is end for a PENDING one; a job cancelled while
	// pending keeps the End sacct gives, the moment it left the queue.
	// Stats.NeverStarted counts them among Ingested. They are kept for job
	// priority while pending, and are charged nothing: decay skips rows
	// without a start, and export's jobs table refuses them, so a caller
	// that also charges the batch must leave them out of export.
	KeepPending bool
	// Require names columns the caller needs beyond SacctRequired (such as
	// PriorityRequired), by sacct title: a file without one of them is
	// refused with a *FileError naming them and the sacct -o list to use,
	// before any row is read.
	Require []string
	// RequireFor says what needs the Require columns, for the error and
	// the warning ("run --priority").
	RequireFor string
	// RequireWarn reads a file without Require columns all the same, with
	// a warning naming them (Stats.Warnings), instead of refusing it.
	RequireWarn bool
	// RequestColumns adds the request columns (schemas.RequestFields) to
	// every batch: ReqCPUS, ReqNodes, ReqTRES, Priority and what
	// SubmitLine says (--nice, -p, --begin, --hold; see ParseSubmitLine),
	// each null where the file lacks its column. A SubmitLine that
	// ParseSubmitLine cannot read leaves its four columns null and is
	// counted as RemarkSubmitLine; one with a --nice the commands refuse
	// rejects the record.
	RequestColumns bool
}

// Remarks of the sacct reader's optional parts (see Stats.Remarks).
const (
	// RemarkSubmitLine counts records whose SubmitLine was not read: not
	// from sbatch, srun or salloc, holding an option unknown to
	// ParseSubmitLine, naming fewer het-job components than the record's
	// offset, or holding a '|' that could belong to another free-text
	// column as well. Their nice, req_partitions, begin_requested and
	// hold_requested are null.
	RemarkSubmitLine = "SubmitLine not read (not sbatch, srun or salloc, an unknown option, or a '|' that may belong elsewhere): nice, partitions, --begin and --hold unknown"
	// RemarkPendingStart counts records kept by KeepPending as never
	// started (State PENDING, or a pending array range) whose Start held a
	// time: their start is null all the same.
	RemarkPendingStart = "a pending record with a Start time: kept as never started"
	// RemarkDuplicateTRES counts records whose AllocTRES (or ReqTRES)
	// names a TRES twice: the first count is kept and the later ones
	// skipped, as Slurm's slurmdb_tres_list_from_string does with
	// TRES_STR_FLAG_NONE.
	RemarkDuplicateTRES = "a TRES named twice in AllocTRES or ReqTRES: the first count kept, as Slurm's own parser does"
	// RemarkUnknownState counts records whose State is none of the job
	// states Slurm prints (job_state_string): charged as a finished job.
	RemarkUnknownState = "a State Slurm never prints (not PENDING, RUNNING, COMPLETED, FAILED, ...): charged as a finished job"
	// RemarkSuspended counts finished records suspended for longer than
	// End − Start: charged End − Start.
	RemarkSuspended = "Suspended longer than End - Start: charged End - Start"
	// RemarkSubmitAfterStart counts records submitted after they started:
	// their times are kept as read; charging uses Start and End alone.
	RemarkSubmitAfterStart = "Submit after Start: kept as read, charged from Start to End"
	// RemarkJobIDRaw counts plain jobs (not an array task nor a het
	// component) whose JobIDRaw is not their JobID: the JobIDRaw is kept
	// as the job's id.
	RemarkJobIDRaw = "JobIDRaw differs from the JobID of a plain job: JobIDRaw kept as the job's id"
)

// SacctReader streams a sacct --parsable2 file as arrow.RecordBatch batches with
// schema schemas.Jobs(DenseTRES) (with KeepPending or RequestColumns, the
// schemas.JobsWith schema they select). Parsing runs on several goroutines;
// batches come out in input order and memory stays bounded by the number of
// blocks in flight.
type SacctReader struct {
	name   string
	opt    SacctOptions
	schema *arrow.Schema
	layout *sacctLayout
	stats  Stats

	results chan chunkResult
	done    chan struct{}
	pending map[int]chunkResult
	next    int
	parsed  int64 // input bytes of the blocks returned by Next
	closed  bool
	err     error
	// firstReject is the file's first rejected record (for endCheck).
	firstReject *ParseError
	// json is set for a sacct --json document (see produceJSON).
	json bool
}

// sacctLayout is what the header (or declared field list) says about the
// file's columns. It is shared read-only by all workers.
type sacctLayout struct {
	titles   []string
	classes  []fieldClass
	col      []sacctCol
	idx      [numSacctCols]int // file column per known column, -1 if absent
	nf       int
	trailing bool     // every line ends with '|' (sacct -p)
	missing  []string // required columns the file lacks
	dense    []string // dense TRES names, canonical
	// request is SacctOptions.RequestColumns: without it the request
	// columns (isRequestCol) are not mapped, and are carried like any
	// column fairledger does not use.
	request bool
}

// OpenSacctFile opens a sacct file: a regular file, or a named pipe that
// sacct writes into while it is read. Anything else (a directory, a device
// such as /dev/zero, a socket) is refused with an error naming it.
func OpenSacctFile(path string) (*os.File, error) {
	return openInput(path, "sacct file", "sacct files", 0, true)
}

// OpenSacct opens path (see OpenSacctStream, with opt.PipeTimeout) and
// returns a reader over it.
// The returned Closer closes the file.
func OpenSacct(path string, opt SacctOptions) (*SacctReader, io.Closer, error) {
	f, err := OpenSacctStream(path, opt.PipeTimeout)
	if err != nil {
		return nil, nil, err
	}
	r, err := NewSacctReader(path, f, opt)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return r, f, nil
}

// NewSacctReader reads the header (or applies the declared field list) and
// starts the parsing goroutines. name is used in errors and in the
// source_file column. An empty, blank or compressed input is an error.
func NewSacctReader(name string, r io.Reader, opt SacctOptions) (*SacctReader, error) {
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	if opt.ChunkBytes <= 0 {
		opt.ChunkBytes = 4 << 20
	}
	if opt.Allocator == nil {
		opt.Allocator = memory.DefaultAllocator
	}
	if opt.Location == nil {
		opt.Location = time.UTC
	}
	if err := checkFileName(name); err != nil {
		return nil, err
	}
	if opt.MaxRecordBytes <= 0 {
		opt.MaxRecordBytes = MaxLineBytes
	}
	br := bufio.NewReaderSize(r, 1<<20)
	first, err := br.Peek(1)
	if err != nil && err != io.EOF {
		return nil, readError(name, err)
	}
	if err := sacctSniff(name, br); err != nil {
		return nil, err
	}
	if isJSONText(br) {
		return newSacctJSONReader(name, br, opt)
	}
	lay := &sacctLayout{dense: schemas.DenseTRESList(opt.DenseTRES), request: opt.RequestColumns}
	headerLines := 0
	var header []string
	var warnings []string
	if len(first) > 0 {
		line, err := peekLine(br)
		if err != nil {
			return nil, readError(name, err)
		}
		if looksLikeHeader(line) {
			if !strings.HasSuffix(line, "\n") {
				if len(line) == br.Size() {
					return nil, &ParseError{File: name, Line: 1, Err: fmt.Errorf("header line longer than %s", formatBytes(int64(br.Size())))}
				}
				warnings = append(warnings, noFinalNewline(name, 1, "sacct"))
			}
			header = strings.Split(strings.TrimRight(line, "\r\n"), "|")
			if _, err := br.Discard(len(line)); err != nil {
				return nil, readError(name, err)
			}
			headerLines = 1
		}
	}
	if header == nil {
		fields := opt.Fields
		if len(fields) == 1 {
			if p, ok := SacctPresets[strings.ToLower(fields[0])]; ok {
				fields = p
			}
		}
		if len(fields) == 0 {
			return nil, &ParseError{File: name, Line: 1, Err: errors.New("no header line: pass the field list of this headerless file (e.g. --sacct-fields xdmod)")}
		}
		header = fields
	}
	if err := lay.init(header); err != nil {
		return nil, &ParseError{File: name, Line: headerLines, Err: err}
	}
	// A file-level problem is one error before any row is used (see
	// FileError), not a rejection of every row.
	if len(lay.missing) > 0 {
		return nil, lay.missingError(name, headerLines, opt, lay.missing, "a run needs them for every job")
	}
	miss := lay.requiredMissing(opt.Require)
	if len(miss) > 0 && !opt.RequireWarn {
		why := "needed here"
		if opt.RequireFor != "" {
			why = opt.RequireFor + " needs them"
		}
		return nil, lay.missingError(name, headerLines, opt, miss, why)
	}
	if len(miss) > 0 {
		warnings = append(warnings, fmt.Sprintf("no %s column(s), which %s needs: read without them, their values unknown",
			strings.Join(miss, ", "), cmp.Or(opt.RequireFor, "the caller")))
	}
	if headerLines > 0 {
		if err := lay.checkRows(br); err != nil {
			return nil, &FileError{File: name, Line: 1, Msg: err.Error()}
		}
		if err := lay.checkHeaderFit(name, br); err != nil {
			return nil, err
		}
	} else if err := lay.checkFieldsFit(name, fieldsDesc(opt.Fields), br); err != nil {
		return nil, err
	}
	s := &SacctReader{
		name:    name,
		opt:     opt,
		schema:  schemas.JobsWith(schemas.JobsOptions{DenseTRES: opt.DenseTRES, Request: opt.RequestColumns, Pending: opt.KeepPending}),
		layout:  lay,
		stats:   Stats{File: name, Warnings: warnings},
		results: make(chan chunkResult, opt.Workers),
		done:    make(chan struct{}),
		pending: make(map[int]chunkResult),
	}
	s.start(br, headerLines+1)
	return s, nil
}

// sacctSniff recognises inputs that are no sacct text at all: an empty or
// blank file, the usual result of a sacct that failed in a cron job (an
// error even with a declared field list, since a night without a single
// job is far rarer than a failed sacct), a compressed one, and text in
// another encoding or with other line ends, or binary data (textForm).
func sacctSniff(name string, br *bufio.Reader) error {
	head, err := br.Peek(sniffSpan)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return readError(name, err)
	}
	if format := compression(head); format != "" {
		return compressedError(name, format)
	}
	if form := textForm(head, name); form != "" {
		return &ParseError{File: name, Err: errors.New(form)}
	}
	if len(head) == 0 {
		return &ParseError{File: name, Err: errors.New("empty file (did sacct fail?)")}
	}
	if err == io.EOF && len(bytes.TrimSpace(head)) == 0 {
		return &ParseError{File: name, Err: errors.New("blank file: nothing but white space (did sacct fail?)")}
	}
	return nil
}

// peekLine returns the first line (with its newline) without consuming it.
func peekLine(br *bufio.Reader) (string, error) {
	for n := 4096; ; n *= 2 {
		b, err := br.Peek(n)
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			return string(b[:i+1]), nil
		}
		if err != nil {
			if err == io.EOF || err == bufio.ErrBufferFull {
				return string(b), nil
			}
			return "", err
		}
	}
}

// looksLikeHeader reports whether a first line is sacct's header: it names
// JobID or JobIDRaw among its fields.
func looksLikeHeader(line string) bool {
	for _, f := range strings.Split(strings.TrimRight(line, "\r\n"), "|") {
		switch strings.ToLower(strings.TrimSpace(f)) {
		case "jobid", "jobidraw":
			return true
		}
	}
	return false
}

func (l *sacctLayout) init(titles []string) error {
	if n := len(titles); n > 1 && strings.TrimSpace(titles[n-1]) == "" {
		titles = titles[:n-1]
		l.trailing = true
	}
	for i := range l.idx {
		l.idx[i] = -1
	}
	l.titles = titles
	l.nf = len(titles)
	l.classes = make([]fieldClass, len(titles))
	l.col = make([]sacctCol, len(titles))
	for i, t := range titles {
		t = strings.TrimSpace(t)
		l.classes[i] = classOf(t)
		c, ok := sacctColNames[strings.ToLower(t)]
		if !ok || isRequestCol(c) && !l.request {
			continue
		}
		if l.idx[c] >= 0 {
			return fmt.Errorf("column %q appears twice", t)
		}
		l.idx[c] = i
		l.col[i] = c
	}
	// NCPUS stands in for AllocCPUS (XDMoD's field list): for jobs that ran
	// the two are equal.
	if l.idx[colAllocCPUS] < 0 {
		for i, t := range titles {
			if strings.EqualFold(strings.TrimSpace(t), "NCPUS") {
				l.idx[colAllocCPUS] = i
				l.col[i] = colAllocCPUS
			}
		}
	}
	for _, req := range SacctRequired {
		c := sacctColNames[strings.ToLower(req)]
		if l.idx[c] >= 0 || c == colJobID && l.idx[colJobIDRaw] >= 0 {
			continue
		}
		l.missing = append(l.missing, req)
	}
	return nil
}

// Schema is the schema of every batch.
func (s *SacctReader) Schema() *arrow.Schema { return s.schema }

// Stats returns the counts so far; after Next has returned io.EOF they
// account for the whole file.
func (s *SacctReader) Stats() Stats { return s.stats }

// ParsedBytes counts the input bytes (after the header) of the records
// accounted for in Stats, that is of the blocks Next has returned so far.
// Blocks are read ahead of Next, so the bytes taken from the input run
// ahead of it; rows per byte are Stats().Read / ParsedBytes().
func (s *SacctReader) ParsedBytes() int64 { return s.parsed }

type chunk struct {
	seq   int
	line  int // physical line number of the first byte
	lines int // newlines in data
	data  []byte
	buf   *[]byte // pooled buffer backing data
	// origins, for the -P lines made of a JSON document, are the JSON
	// line and job id of each line of data (see produceJSON).
	origins []jsonOrigin
}

type rejectRec struct {
	err *ParseError
	raw string
}

type chunkResult struct {
	seq     int
	bytes   int64 // the block's input bytes
	rec     arrow.RecordBatch
	stats   Stats
	rejects []rejectRec
	err     error
}

func (s *SacctReader) start(br *bufio.Reader, firstLine int) {
	work := make(chan chunk, s.opt.Workers)
	// A fixed ring of block buffers, reused for the whole file: it bounds
	// memory and, unlike a sync.Pool (emptied at every GC), spares the
	// kernel from faulting in fresh pages for every block read.
	pool := make(chan *[]byte, 2*s.opt.Workers+2)
	for i := 0; i < cap(pool); i++ {
		b := make([]byte, 0, s.opt.ChunkBytes+s.opt.ChunkBytes/4)
		pool <- &b
	}
	var wg sync.WaitGroup
	for w := 0; w < s.opt.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := newSacctParser(s.name, s.layout, s.opt, s.schema)
			for c := range work {
				res := p.parseChunk(c)
				*c.buf = (*c.buf)[:0]
				pool <- c.buf
				select {
				case s.results <- res:
				case <-s.done:
					if res.rec != nil {
						res.rec.Release()
					}
				}
			}
		}()
	}
	produceDone := make(chan struct{})
	go func() {
		defer close(produceDone)
		defer close(work)
		if s.json {
			s.produceJSON(br, work, pool)
			return
		}
		s.produce(br, firstLine, work, pool)
	}()
	go func() {
		<-produceDone
		wg.Wait()
		close(s.results)
	}()
}

// produce cuts the input into blocks that end on record boundaries and
// hands them to the workers. A record is never held whole when it is
// longer than MaxRecordBytes (or holds a line that is): it is rejected and
// read on without being kept (see sacctSkip), so that what is buffered
// stays within about twice the bound plus a block whatever the input.
func (s *SacctReader) produce(br *bufio.Reader, line int, work chan<- chunk, pool chan *[]byte) {
	seq := 0
	var carry []byte
	size := s.opt.ChunkBytes
	maxRec := s.opt.MaxRecordBytes
	var skip *sacctSkip // non-nil while a record over the bound is read
	endsNL := true      // the input read so far ends with a newline
	send := func(c chunk) bool {
		select {
		case work <- c:
			return true
		case <-s.done:
			return false
		}
	}
	// emit hands a result the producer made itself (a skipped record, a
	// warning, a read error) to Next, in its place in the input order.
	emit := func(res chunkResult) bool {
		res.seq = seq
		seq++
		select {
		case s.results <- res:
			return true
		case <-s.done:
			return false
		}
	}
	warnEnd := func(lastLine int) {
		if !endsNL {
			emit(chunkResult{stats: Stats{File: s.name, Warnings: []string{noFinalNewline(s.name, lastLine, "sacct")}}})
		}
	}
	for {
		var bp *[]byte
		select {
		case bp = <-pool:
		case <-s.done:
			return
		}
		buf := append((*bp)[:0], carry...)
		if cap(buf) < len(carry)+size {
			nb := make([]byte, len(carry), len(carry)+size)
			copy(nb, buf)
			buf = nb
		}
		n, err := io.ReadFull(br, buf[len(buf):len(carry)+size])
		buf = buf[:len(carry)+n]
		*bp = buf
		if n > 0 {
			endsNL = buf[len(buf)-1] == '\n'
		}
		eof := err == io.EOF || err == io.ErrUnexpectedEOF
		if err != nil && !eof {
			emit(chunkResult{err: readError(s.name, err)})
			return
		}
		if skip != nil {
			k, done := skip.feed(buf, eof)
			line = skip.line
			for _, res := range skip.take() {
				if !emit(res) {
					return
				}
			}
			if !done {
				carry = append(carry[:0:0], buf[k:]...)
				*bp = (*bp)[:0]
				pool <- bp
				if eof {
					warnEnd(line - 1) // the last line, which feed has ended
					return
				}
				continue
			}
			skip = nil
			buf = buf[:copy(buf, buf[k:])]
		}
		if eof {
			if len(buf) > 0 {
				lines := bytes.Count(buf, []byte{'\n'})
				if !send(chunk{seq: seq, line: line, lines: lines, data: buf, buf: bp}) {
					return
				}
				seq++
				warnEnd(line + lines)
			} else {
				*bp = (*bp)[:0]
				pool <- bp
			}
			return
		}
		cut := s.layout.findCut(buf)
		if cut <= 0 {
			cut = s.layout.lastRecordStart(buf)
		}
		if cut <= 0 {
			// No record starts after the first line of buf: buf holds
			// complete lines of one record (head), then the start of a
			// line (tail).
			nl := bytes.LastIndexByte(buf, '\n') + 1
			head, tail := buf[:nl], buf[nl:]
			switch {
			case len(head) > maxRec:
				// The record is over the bound whatever follows, unless
				// its first line is a record of its own, as parseChunk
				// reads it, that the lines after it do not continue.
				if first := bytes.IndexByte(head, '\n') + 1; s.layout.standsAlone(head[:first-1]) {
					if !send(chunk{seq: seq, line: line, lines: 1, data: head[:first], buf: bp}) {
						return
					}
					seq++
					line++
					head, bp = head[first:], nil
				}
				skip = newSacctSkip(s, line)
				skip.startRecord(head)
				line = skip.line
			case len(tail) > maxRec:
				// A line over the bound: the lines before it go on as
				// usual, the line is skipped with what continues it.
				if nl > 0 {
					lines := bytes.Count(head, []byte{'\n'})
					if !send(chunk{seq: seq, line: line, lines: lines, data: head, buf: bp}) {
						return
					}
					seq++
					line += lines
					bp = nil
				}
				skip = newSacctSkip(s, line)
			}
			if skip != nil {
				carry = append(carry[:0:0], tail...)
			} else {
				// Read on: the record may end in the next block.
				carry = append(carry[:0:0], buf...)
				size = min(2*size, max(s.opt.ChunkBytes, maxRec))
			}
			if bp != nil {
				*bp = (*bp)[:0]
				pool <- bp
			}
			continue
		}
		carry = append(carry[:0], buf[cut:]...)
		c := chunk{seq: seq, line: line, lines: bytes.Count(buf[:cut], []byte{'\n'}), data: buf[:cut], buf: bp}
		line += c.lines
		seq++
		if !send(c) {
			return
		}
		size = s.opt.ChunkBytes
	}
}

// lastRecordStart is findCut without its limit on the lines it looks at:
// the offset of the last complete line after the first one that holds at
// least nf-1 delimiters, or -1.
func (l *sacctLayout) lastRecordStart(buf []byte) int {
	cut := -1
	for start := bytes.IndexByte(buf, '\n') + 1; start > 0 && start < len(buf); {
		i := bytes.IndexByte(buf[start:], '\n')
		if i < 0 {
			break
		}
		if l.startsRecord(buf[start : start+i]) {
			cut = start
		}
		start += i + 1
	}
	return cut
}

// startsRecord reports whether a complete line starts a record: it holds
// at least nf-1 delimiters, which the continuation lines of a multi-line
// field (a SubmitLine with an embedded script) seldom do.
func (l *sacctLayout) startsRecord(line []byte) bool {
	return bytes.Count(line, []byte{'|'}) >= l.nf-1
}

// standsAlone reports whether parseChunk reads a complete line as a
// record that the lines after it do not continue: it has all the fields,
// and more than them or a last column that is not free text (a free-text
// last column runs on over lines without a delimiter).
func (l *sacctLayout) standsAlone(line []byte) bool {
	n := bytes.Count(line, []byte{'|'}) + 1
	if l.trailing {
		n--
	}
	return n > l.nf || n == l.nf && (l.trailing || l.classes[l.nf-1] != classFreeText)
}

// rowCheckLines is how many lines after the header checkRows looks at.
const rowCheckLines = 16

// peekedLine is a complete, non-blank line the reader's buffer holds: its
// text without a CR, and how many physical lines after the first it is.
type peekedLine struct {
	off  int
	text []byte
}

// peekLines returns the first max complete non-blank lines br's buffer
// holds, without consuming them, and whether they are the whole rest of
// the input; ok is false after a read error (the first block reports it).
func peekLines(br *bufio.Reader, max int) (lines []peekedLine, whole, ok bool) {
	data, err := br.Peek(br.Size())
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return nil, false, false
	}
	all := err == io.EOF // data is the whole rest of the input
	for off := 0; len(data) > 0 && len(lines) < max; off++ {
		i := bytes.IndexByte(data, '\n')
		var ln []byte
		switch {
		case i >= 0:
			ln, data = data[:i], data[i+1:]
		case all:
			ln, data = data, nil
		default:
			data = nil // an incomplete line
			continue
		}
		if ln = trimCR(ln); len(bytes.TrimSpace(ln)) > 0 {
			lines = append(lines, peekedLine{off: off, text: ln})
		}
	}
	return lines, all && len(data) == 0, true
}

// checkRows compares the header with the first lines after it (those the
// reader's buffer holds). When they all have the same number of fields
// and it is not the header's, the header does not describe the rows (it
// was edited, or belongs to another file) and reading on would do harm:
// with fewer fields each record would be glued to the lines that follow
// it (a record with too few fields continues on the next line), and with
// more, values would be shifted between columns. Fewer than two lines, or
// lines of different counts (multi-line records), pass. Rows with more
// fields pass when the file has a free-text column: tasks of one job array
// share a JobName, which may hold a '|' (recoverPipes places it).
func (l *sacctLayout) checkRows(br *bufio.Reader) error {
	lines, whole, ok := peekLines(br, rowCheckLines)
	if !ok {
		return nil // the read error is reported by the first block
	}
	n, k, ending := 0, -1, 0
	for _, pl := range lines {
		ln := pl.text
		c := bytes.Count(ln, []byte{'|'}) + 1
		if k >= 0 && c != k {
			return nil
		}
		k = c
		if ln[len(ln)-1] == '|' {
			ending++
		}
		n++
	}
	if n < 2 || n < rowCheckLines && !whole {
		return nil
	}
	allEnd := ending == n // with -P, only when the last column is empty on every row
	switch {
	case l.trailing && k == l.nf+1 && allEnd, !l.trailing && k == l.nf:
		return nil
	case l.trailing && k == l.nf:
		return errors.New("the header ends in '|' (sacct -p) and the rows do not (sacct -P): was the header edited?")
	case !l.trailing && k == l.nf+1 && allEnd:
		return errors.New("the rows end in '|' (sacct -p) and the header does not (sacct -P): was the header edited?")
	}
	rows := k
	if l.trailing && allEnd {
		rows--
	}
	if rows < l.nf || !slices.Contains(l.classes, classFreeText) {
		return fmt.Errorf("the header has %d columns, rows have %d: was the header edited?", l.nf, rows)
	}
	return nil
}

// findCut returns an offset in buf just before a line that starts a record,
// or -1. A line starts a record when it is complete (newline-terminated)
// and holds at least nf-1 delimiters: continuation lines of a multi-line
// field (a SubmitLine with an embedded script) hold few or none.
func (l *sacctLayout) findCut(buf []byte) int {
	end := bytes.LastIndexByte(buf, '\n')
	for tries := 0; end > 0 && tries < 4096; tries++ {
		start := bytes.LastIndexByte(buf[:end], '\n') + 1
		if start > 0 && l.startsRecord(buf[start:end]) {
			return start
		}
		end = start - 1
	}
	return -1
}

// Next returns the next batch in input order, or io.EOF after the last one.
// The caller owns the record and must Release it.
func (s *SacctReader) Next() (arrow.RecordBatch, error) {
	if s.err != nil {
		return nil, s.err
	}
	for {
		if res, ok := s.pending[s.next]; ok {
			delete(s.pending, s.next)
			s.next++
			if res.err != nil {
				s.err = res.err
				return nil, res.err
			}
			s.stats.Add(res.stats)
			s.parsed += res.bytes
			if s.firstReject == nil && len(res.rejects) > 0 {
				s.firstReject = res.rejects[0].err
			}
			if s.opt.OnReject != nil {
				for _, r := range res.rejects {
					s.opt.OnReject(r.err, r.raw)
				}
			}
			if res.rec == nil {
				continue
			}
			return res.rec, nil
		}
		res, ok := <-s.results
		if !ok {
			s.err = io.EOF
			s.stats.Warnings = append(s.stats.Warnings, s.stats.RemarkWarnings()...)
			if err := s.endCheck(); err != nil {
				s.err = err
			}
			return nil, s.err
		}
		s.pending[res.seq] = res
	}
}

// endCheck looks at the whole file's counts once it is read: every job
// record rejected is a FileError (AllRejectedMin), and a file read with
// KeepPending that holds no job that never started gets a warning (it may
// have been fetched without -s).
func (s *SacctReader) endCheck() error {
	st := &s.stats
	if st.Ingested == 0 && st.Rejected >= AllRejectedMin && s.firstReject != nil {
		return &FileError{File: s.name, Msg: fmt.Sprintf("all %d job records rejected, none ingested (the first: %v): "+
			"the file, not its rows, is wrong; nothing is written. Fix the file (see the rejected rows, --rejects) and run again",
			st.Rejected, s.firstReject)}
	}
	if s.opt.KeepPending && st.Ingested >= NoNeverStartedMin && st.NeverStarted == 0 {
		st.Warnings = append(st.Warnings, fmt.Sprintf("%d jobs and not one that never started: was sacct run without -s %s? "+
			"Job priority needs the jobs that waited and never ran", st.Ingested, PriorityStates))
	}
	return nil
}

// Close stops the parsing goroutines and releases batches not yet returned.
func (s *SacctReader) Close() {
	if s.closed {
		return
	}
	s.closed = true
	close(s.done)
	for res := range s.results {
		if res.rec != nil {
			res.rec.Release()
		}
	}
	for _, res := range s.pending {
		if res.rec != nil {
			res.rec.Release()
		}
	}
	s.pending = nil
}

// ReadSacct reads a whole sacct file, calling fn for each batch (fn must not
// keep the record past its return without Retain). It returns the file's
// Stats. It is ReadJobs of the file's SacctFile.
func ReadSacct(path string, opt SacctOptions, fn func(arrow.RecordBatch) error) (Stats, error) {
	return ReadJobs(SacctFile{Path: path, Options: opt}, JobOptions{}, fn)
}
