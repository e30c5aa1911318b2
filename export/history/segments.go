package history

import (
	"bufio"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path"
	"path/filepath"
	"time"

	"github.com/fairledger/fairledger/export/encode"
	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/fairshare"
	"github.com/fairledger/fairledger/schemas"
)

// SnapshotSegments writes the new fairshare and associations segments of
// one (cluster, month) into a commit, snapshot by snapshot, straight from
// each snapshot's tree and fairshare.Result (encode.Snapshots, which says
// how, writes them): each file goes into the commit's stage as it is
// encoded and is named by its content at Close. The files are byte for
// byte those Txn.Write writes for the same rows.
type SnapshotSegments struct {
	enc    *encode.Snapshots
	fs, as *segmentFile
	done   bool // Close or Abort was called
}

// NewSnapshotSegments starts the fairshare and associations segments of
// cluster's month in the commit, of snapshots of the trees of st. Close
// adds the files to the commit; Abort drops them. One of the two must be
// called before st serves another month.
func (t *Txn) NewSnapshotSegments(cluster string, month time.Time, st *encode.SnapshotTrees) (*SnapshotSegments, error) {
	if err := validCluster(cluster); err != nil {
		return nil, fmt.Errorf("snapshot segments: %w", err)
	}
	mk := schemas.MonthKey(month)
	fs, err := t.newSegmentFile(schemas.TableFairshare, cluster, mk)
	if err != nil {
		return nil, err
	}
	as, err := t.newSegmentFile(schemas.TableAssociations, cluster, mk)
	if err != nil {
		fs.abort()
		return nil, err
	}
	enc, err := encode.NewSnapshots(st, fs.buf, as.buf, fs.dir, as.dir)
	if err != nil {
		fs.abort()
		as.abort()
		return nil, err
	}
	return &SnapshotSegments{enc: enc, fs: fs, as: as}, nil
}

// AppendSnapshot writes the rows of the snapshot at time at: see
// encode.Snapshots.AppendSnapshot.
func (s *SnapshotSegments) AppendSnapshot(at time.Time, tree int, r *fairshare.Result, tresRunMins []string) error {
	return s.enc.AppendSnapshot(at, tree, r, tresRunMins)
}

// AppendRows writes rows of older segments (a recompute keeps those
// outside its window): see encode.Snapshots.AppendRows.
func (s *SnapshotSegments) AppendRows(fs []record.FairshareRow, as []record.AssociationRow) error {
	return s.enc.AppendRows(fs, as)
}

// Close waits for both files to be encoded, ends them and adds them to the
// commit, returning their manifest entries; a table with no rows writes no
// file (an empty entry). On error neither file is added.
func (s *SnapshotSegments) Close() (fs, as Partition, err error) {
	if s.done {
		return Partition{}, Partition{}, errors.New("snapshot segments: already closed")
	}
	s.done = true
	fst, ast, err := s.enc.Close()
	if err != nil {
		s.fs.abort()
		s.as.abort()
		return Partition{}, Partition{}, err
	}
	if fs, err = s.fs.close(fst); err != nil {
		s.as.abort()
		return Partition{}, Partition{}, err
	}
	if as, err = s.as.close(ast); err != nil {
		// fs is in the commit already: the caller aborts it.
		return Partition{}, Partition{}, err
	}
	return fs, as, nil
}

// Abort stops the encoding and drops both files; a no-op after Close.
func (s *SnapshotSegments) Abort() {
	if s.done {
		return
	}
	s.done = true
	s.enc.Abort()
	s.fs.abort()
	s.as.abort()
}

// segmentFile is a new segment being written into a commit's stage: a
// temporary file, hashed and counted as it is written, named by its
// content when it is complete.
type segmentFile struct {
	txn   *Txn
	p     Partition
	dir   string
	tmp   string
	file  *os.File
	sum   hash.Hash
	count *countingWriter
	buf   *bufio.Writer
}

// newSegmentFile creates the stage file of a new segment of the (table,
// cluster, month) partition.
func (t *Txn) newSegmentFile(table, cluster, month string) (*segmentFile, error) {
	t.mu.Lock()
	done := t.done
	t.mu.Unlock()
	if done {
		return nil, errors.New("commit already finished")
	}
	f := &segmentFile{txn: t, p: Partition{Table: table, Cluster: cluster, Month: month}, dir: partitionDir(table, cluster, month)}
	full := filepath.Join(t.stage, filepath.FromSlash(f.dir))
	if err := os.MkdirAll(full, 0o755); err != nil {
		return nil, fmt.Errorf("write %s: %w", f.dir, err)
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	f.tmp = filepath.Join(full, ".part-"+hex.EncodeToString(rnd[:])+tmpMarker)
	var err error
	if f.file, err = os.OpenFile(f.tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644); err != nil {
		return nil, fmt.Errorf("write %s: %w", f.dir, err)
	}
	f.sum = sha256.New()
	f.count = &countingWriter{w: io.MultiWriter(f.file, f.sum)}
	f.buf = bufio.NewWriterSize(f.count, 1<<20)
	return f, nil
}

// close flushes the file, names it by its content and adds it to the
// commit with the statistics st of its rows; with no rows it removes it
// and returns an empty entry.
func (f *segmentFile) close(st encode.Stats) (Partition, error) {
	if st.Rows == 0 {
		f.abort()
		return Partition{}, nil
	}
	err := f.buf.Flush()
	if err == nil {
		err = f.file.Close()
	}
	if err != nil {
		f.abort()
		return Partition{}, fmt.Errorf("write %s: %w", f.dir, err)
	}
	f.file = nil
	sum := hex.EncodeToString(f.sum.Sum(nil))
	name := "part-" + sum[:16] + ".parquet"
	full := filepath.Join(f.txn.stage, filepath.FromSlash(f.dir))
	if err := os.Rename(f.tmp, filepath.Join(full, name)); err != nil {
		os.Remove(f.tmp)
		return Partition{}, fmt.Errorf("write %s: %w", f.dir, err)
	}
	f.p.Rows, f.p.MinTime, f.p.MaxTime = st.Rows, st.MinTime, st.MaxTime
	f.p.Path, f.p.Bytes, f.p.SHA256 = path.Join(f.dir, name), f.count.n, sum
	t := f.txn
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return Partition{}, errors.New("commit already finished")
	}
	t.add[f.p.Path] = f.p
	delete(t.drop, f.p.Path)
	return f.p, nil
}

// abort closes and removes the stage file.
func (f *segmentFile) abort() {
	if f.file != nil {
		f.file.Close()
		os.Remove(f.tmp)
		f.file = nil
	}
}
