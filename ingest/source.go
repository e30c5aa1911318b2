package ingest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"os"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
)

// JobSource is one input of job records, in whatever format it comes: the
// one interface through which the pipeline and check read a site's jobs.
// Each yields the batches of the jobs schema (schemas.JobsWith) that the
// sacct reader yields, so that another format of sacct's output is a new
// JobSource and its reader, not a change to the pipeline. SacctFile is the
// source of sacct -P files and pipes.
type JobSource interface {
	// Name names the input (its path) in errors, the log, progress and
	// the runs table.
	Name() string
	// Size is the input's size in bytes before it is read, for progress:
	// 0 when it is not known ahead (a named pipe).
	Size() (int64, error)
	// Open starts reading the input, with the caller's settings on top of
	// the source's own options.
	Open(opt JobOptions) (JobReader, error)
}

// JobOptions are what the reader of a site's jobs sets on every source it
// reads, whatever its format. A zero field leaves the source's own option.
type JobOptions struct {
	// DenseTRES, when set, replaces the TRES that get a dense column
	// (the billing table's, billing.Table.DenseTRES).
	DenseTRES []string
	// Cluster is the cluster of rows that name none, when the source's
	// options give none.
	Cluster string
	// Bounds are the job times a record may hold, when the source's
	// options set no upper bound.
	Bounds TimeBounds
	// Priority reads the jobs as job priority needs them: with the jobs
	// that never started and the request columns (SacctOptions
	// KeepPending and RequestColumns).
	Priority bool
	// Hash computes the SHA-256 of the input (JobReader.SHA256), which a
	// run records; a dry run records nothing and leaves it unset.
	Hash bool
}

// JobReader yields the batches of one JobSource, in input order.
type JobReader interface {
	// Next returns the next batch, or io.EOF after the last one. The
	// caller owns the record and must Release it.
	Next() (arrow.RecordBatch, error)
	// Stats are the input's counts so far, complete once Next returned
	// io.EOF.
	Stats() Stats
	// ParsedBytes are the input bytes of the batches Next returned, which
	// with their rows estimate the rows of the whole input (bytes read run
	// ahead of them).
	ParsedBytes() int64
	// BytesRead are the bytes taken from the input so far (for progress,
	// and the size a run records); it may be called while batches are
	// parsed.
	BytesRead() int64
	// SHA256 is the hex SHA-256 of the bytes read, the whole input's once
	// Next returned io.EOF; "" without JobOptions.Hash.
	SHA256() string
	// Close stops reading and closes the input; once closed, it does
	// nothing.
	Close()
}

// SacctFile is a sacct -P file, or a named pipe sacct writes into, as a
// JobSource read by SacctReader.
type SacctFile struct {
	// Path is the file's path.
	Path string
	// Options are the reader's options; JobOptions are applied on top.
	Options SacctOptions
}

// SacctFiles are the sacct files paths as job sources, each read with opt.
func SacctFiles(paths []string, opt SacctOptions) []JobSource {
	out := make([]JobSource, len(paths))
	for i, p := range paths {
		out[i] = SacctFile{Path: p, Options: opt}
	}
	return out
}

// Name is the file's path.
func (f SacctFile) Name() string { return f.Path }

// Size is the file's size (0 for a named pipe).
func (f SacctFile) Size() (int64, error) {
	fi, err := os.Stat(f.Path)
	if err != nil {
		return 0, fmt.Errorf("sacct: %w", err)
	}
	return fi.Size(), nil
}

// Open opens the file as OpenSacctStream does, with the options'
// PipeTimeout, and starts its reader.
func (f SacctFile) Open(o JobOptions) (JobReader, error) {
	opt := f.Options.with(o)
	in, err := OpenSacctStream(f.Path, opt.PipeTimeout)
	if err != nil {
		return nil, err
	}
	hr := &hashingReader{r: in}
	if o.Hash {
		hr.h = sha256.New()
	}
	rd, err := NewSacctReader(f.Path, hr, opt)
	if err != nil {
		in.Close()
		return nil, err
	}
	return &sacctJobs{SacctReader: rd, in: in, hr: hr}, nil
}

// with is o applied on top of opt (see JobOptions).
func (opt SacctOptions) with(o JobOptions) SacctOptions {
	if o.DenseTRES != nil {
		opt.DenseTRES = o.DenseTRES
	}
	if opt.Cluster == "" {
		opt.Cluster = o.Cluster
	}
	if opt.Bounds.Max == 0 && o.Bounds.Max != 0 {
		opt.Bounds = o.Bounds
	}
	if o.Priority {
		opt.KeepPending, opt.RequestColumns = true, true
	}
	return opt
}

// sacctJobs is an open SacctFile.
type sacctJobs struct {
	*SacctReader
	in     io.Closer
	hr     *hashingReader
	closed bool
}

func (s *sacctJobs) BytesRead() int64 { return s.hr.n.Load() }

func (s *sacctJobs) SHA256() string {
	if s.hr.h == nil {
		return ""
	}
	return hex.EncodeToString(s.hr.h.Sum(nil))
}

// Close stops the reader and closes the file.
func (s *sacctJobs) Close() {
	if s.closed {
		return
	}
	s.closed = true
	s.SacctReader.Close()
	s.in.Close()
}

// hashingReader counts and hashes what a reader consumes.
type hashingReader struct {
	r io.Reader
	h hash.Hash    // nil: count only
	n atomic.Int64 // the reader's goroutine reads; progress reports it
}

func (h *hashingReader) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	if h.h != nil {
		h.h.Write(p[:n])
	}
	h.n.Add(int64(n))
	return n, err
}

// ReadJobs reads the whole of src with o, calling fn for each batch (fn
// must not keep the record past its return without Retain). It returns
// the input's Stats (only its File when it could not be opened).
func ReadJobs(src JobSource, o JobOptions, fn func(arrow.RecordBatch) error) (Stats, error) {
	r, err := src.Open(o)
	if err != nil {
		return Stats{File: src.Name()}, err
	}
	defer r.Close()
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return r.Stats(), nil
		}
		if err != nil {
			return r.Stats(), err
		}
		err = fn(rec)
		rec.Release()
		if err != nil {
			return r.Stats(), err
		}
	}
}
