package metrics

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
)

// OpenMetrics writes many snapshots (a history, or a window of it) as
// OpenMetrics text with timestamps, the input of `promtool tsdb
// create-blocks-from openmetrics`: each family once and contiguous, with
// HELP and TYPE, each series' samples together and in time order,
// timestamps in seconds, "# EOF" at the end.
//
// A partition and account that had jobs waiting at an earlier snapshot
// of its cluster and has none at a later one gets 0 in the waiting-time
// families there: a backfill has no staleness markers, and PromQL would
// carry the old value over.
//
// OpenMetrics orders the file by family and series, a history comes
// snapshot by snapshot: Add spills each sample (20 bytes) to a temporary
// file and keeps only the series' labels in memory; WriteTo then reads
// the spill once per chunk of series whose samples fit ChunkSamples, and
// writes them. Memory is the series' labels plus one chunk, whatever the
// number of snapshots.
type OpenMetrics struct {
	// ChunkSamples bounds the samples WriteTo holds in memory at once
	// (16 bytes each); zero means 4 Mi (64 MiB).
	ChunkSamples int

	spill  *os.File
	bw     *bufio.Writer
	ids    map[string]uint32 // family byte + labels → series id
	series []series
	fams   [numFamilies]family
	buf    []byte
	rec    [recordSize]byte
	// waiting are the series of the waiting-time families: one that
	// had jobs at an earlier snapshot of its cluster and has none at a
	// later one gets 0 there (a backfill has no staleness markers, and
	// PromQL would carry the old value over).
	waiting []uint32
}

// series is one series of the output.
type series struct {
	fam     int
	cluster string
	labels  string // {…} as written
	n       int    // samples
	last    int64  // time of the last sample, Unix microseconds
}

// recordSize is a spilled sample: series id (uint32), time (Unix
// microseconds, int64), value (float64 bits).
const recordSize = 4 + 8 + 8

// NewOpenMetrics returns a writer whose spill file is a new temporary
// file in dir (os.TempDir() when dir is ""). The caller calls Close.
func NewOpenMetrics(dir string) (*OpenMetrics, error) {
	f, err := os.CreateTemp(dir, ".fairledger-metrics-spill-*")
	if err != nil {
		return nil, fmt.Errorf("openmetrics spill: %w", err)
	}
	// The spill is ours alone: unlinked at once where the system allows,
	// so that a killed process leaves nothing behind.
	os.Remove(f.Name())
	return &OpenMetrics{spill: f, bw: bufio.NewWriterSize(f, 1<<20), ids: map[string]uint32{}, fams: families()}, nil
}

// Add spills the samples of s. A series' snapshots must come in time
// order (each cluster's in turn, or interleaved); a sample at or before
// the series' previous one is an error.
func (o *OpenMetrics) Add(s *Snapshot) error {
	t := s.Time.UnixMicro()
	var err error
	serr := s.samples(func(fam int, labels []string, v float64) {
		if err != nil {
			return
		}
		o.buf = append(o.buf[:0], byte(fam))
		o.buf = appendLabels(o.buf, o.fams[fam].labels, labels)
		id, ok := o.ids[string(o.buf)]
		if !ok {
			id = uint32(len(o.series))
			o.ids[string(o.buf)] = id
			o.series = append(o.series, series{fam: fam, cluster: s.Cluster, labels: string(o.buf[1:]), last: math.MinInt64})
			if fam >= famPendingJobs {
				o.waiting = append(o.waiting, id)
			}
		}
		sr := &o.series[id]
		if t <= sr.last {
			err = fmt.Errorf("openmetrics: %s%s: snapshot %s is not after the series' previous one", o.fams[fam].name, sr.labels, s.Time.UTC().Format("2006-01-02T15:04:05.999999Z07:00"))
			return
		}
		err = o.spillSample(id, t, v)
	})
	if err = cmp.Or(serr, err); err != nil {
		return err
	}
	for _, id := range o.waiting {
		if sr := &o.series[id]; sr.cluster == s.Cluster && sr.last < t {
			if err := o.spillSample(id, t, 0); err != nil {
				return err
			}
		}
	}
	return nil
}

// spillSample writes one sample of series id to the spill.
func (o *OpenMetrics) spillSample(id uint32, t int64, v float64) error {
	sr := &o.series[id]
	sr.last, sr.n = t, sr.n+1
	binary.LittleEndian.PutUint32(o.rec[0:], id)
	binary.LittleEndian.PutUint64(o.rec[4:], uint64(t))
	binary.LittleEndian.PutUint64(o.rec[12:], math.Float64bits(v))
	if _, err := o.bw.Write(o.rec[:]); err != nil {
		return fmt.Errorf("openmetrics spill: %w", err)
	}
	return nil
}

// WriteTo writes the OpenMetrics text of every sample added, and "# EOF".
func (o *OpenMetrics) WriteTo(w io.Writer) (int64, error) {
	if err := o.bw.Flush(); err != nil {
		return 0, fmt.Errorf("openmetrics spill: %w", err)
	}
	order := make([]uint32, len(o.series))
	for i := range order {
		order[i] = uint32(i)
	}
	slices.SortFunc(order, func(a, b uint32) int {
		x, y := &o.series[a], &o.series[b]
		return cmp.Or(cmp.Compare(x.fam, y.fam), strings.Compare(x.labels, y.labels))
	})
	limit := cmp.Or(o.ChunkSamples, 4<<20)
	cw := &countWriter{w: w}
	bw := bufio.NewWriterSize(cw, 1<<20)
	lastFam := -1
	// slot[id] is the series' first sample in the chunk's arrays; -1 for
	// a series outside the chunk.
	slot := make([]int, len(o.series))
	for start := 0; start < len(order); {
		end, n := start, 0
		for end < len(order) && (end == start || n+o.series[order[end]].n <= limit) {
			n += o.series[order[end]].n
			end++
		}
		for i := range slot {
			slot[i] = -1
		}
		off := 0
		for _, id := range order[start:end] {
			slot[id] = off
			off += o.series[id].n
		}
		ts, vs, err := o.readChunk(slot, n)
		if err != nil {
			return cw.n, err
		}
		var line []byte
		for _, id := range order[start:end] {
			sr := &o.series[id]
			if sr.fam != lastFam {
				line = appendHeader(line[:0], o.fams[sr.fam])
				bw.Write(line)
				lastFam = sr.fam
			}
			for k := slot[id]; k < slot[id]+sr.n; k++ {
				line = append(line[:0], o.fams[sr.fam].name...)
				line = append(line, sr.labels...)
				line = append(line, ' ')
				line = appendValue(line, vs[k])
				line = append(line, ' ')
				line = appendSeconds(line, ts[k])
				line = append(line, '\n')
				bw.Write(line)
			}
		}
		start = end
	}
	bw.WriteString("# EOF\n")
	err := bw.Flush()
	return cw.n, err
}

// readChunk reads the spill and returns the times and values of the
// series with a slot, each series' samples from its slot on, in the
// order they were added (time order).
func (o *OpenMetrics) readChunk(slot []int, n int) ([]int64, []float64, error) {
	if _, err := o.spill.Seek(0, io.SeekStart); err != nil {
		return nil, nil, fmt.Errorf("openmetrics spill: %w", err)
	}
	ts, vs := make([]int64, n), make([]float64, n)
	next := slices.Clone(slot)
	r := bufio.NewReaderSize(o.spill, 1<<20)
	var rec [recordSize]byte
	for {
		if _, err := io.ReadFull(r, rec[:]); errors.Is(err, io.EOF) {
			return ts, vs, nil
		} else if err != nil {
			return nil, nil, fmt.Errorf("openmetrics spill: %w", err)
		}
		id := binary.LittleEndian.Uint32(rec[0:])
		k := next[id]
		if k < 0 {
			continue
		}
		ts[k] = int64(binary.LittleEndian.Uint64(rec[4:]))
		vs[k] = math.Float64frombits(binary.LittleEndian.Uint64(rec[12:]))
		next[id]++
	}
}

// Close removes the spill file.
func (o *OpenMetrics) Close() error {
	name := o.spill.Name()
	err := o.spill.Close()
	if rerr := os.Remove(name); rerr != nil && !errors.Is(rerr, os.ErrNotExist) && err == nil {
		err = rerr
	}
	return err
}

// appendSeconds appends a time in Unix microseconds as seconds, with
// the fraction only when there is one.
func appendSeconds(b []byte, us int64) []byte {
	if us < 0 {
		b = append(b, '-')
		us = -us
	}
	sec, frac := us/1e6, us%1e6
	b = strconv.AppendInt(b, sec, 10)
	if frac == 0 {
		return b
	}
	f := strconv.AppendInt(nil, frac+1e6, 10)[1:] // six digits
	return append(append(b, '.'), strings.TrimRight(string(f), "0")...)
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
