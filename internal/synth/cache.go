package synth

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// Year5M returns the Options of the shared benchmark cluster: a year of
// 5,000,000 allocation rows (2024-01-01..2025-01-01 UTC, seed 7, 300 labs),
// without step rows (like `sacct -X`) and with times printed as local
// (UTC) date-times rather than Unix seconds. The ingest, pipeline and
// DuckDB yardstick benchmarks all read the files Cached writes for it.
func Year5M() Options {
	return Options{
		Seed:         7,
		Jobs:         5_000_000,
		Labs:         300,
		From:         time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC),
		To:           time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
		StepFraction: -1,
	}
}

// Files are the paths of a generated cluster's files, as WriteDir writes
// them, and the Summary of its sacct.psv.
type Files struct {
	Dir       string  // the directory holding the files
	SlurmConf string  // Dir/slurm.conf
	Assoc     string  // Dir/assoc.psv
	QOS       string  // Dir/qos.psv
	Sacct     string  // Dir/sacct.psv
	Summary   Summary // what WriteSacct wrote into sacct.psv
}

// summaryFile holds the Summary of a cached directory, so that reusing the
// files does not mean reading sacct.psv.
const summaryFile = "summary.json"

// Cached returns the files of the cluster o describes, generated into a
// subdirectory of dir named after o (seed, jobs and a fingerprint, see
// CacheName) the first time and reused afterwards.
//
// The files are written into a temp directory next to it (".<name>.tmp-*")
// that is renamed into place only when every file is complete, so a run
// killed while generating leaves no directory Cached would reuse; its temp
// directory stays behind and may be deleted. Concurrent callers may both
// generate; the first rename wins and the other uses its result. Cached
// creates dir if needed.
func Cached(dir string, o Options) (Files, error) {
	name, err := CacheName(o)
	if err != nil {
		return Files{}, fmt.Errorf("synth cache: %w", err)
	}
	final := filepath.Join(dir, name)
	if _, err := os.Stat(final); err == nil {
		f, err := loadCached(final)
		if err == nil {
			return f, nil
		}
		// A directory that is there but incomplete was not written by
		// Cached (it renames only complete ones): start it afresh.
		if err := os.RemoveAll(final); err != nil {
			return Files{}, fmt.Errorf("synth cache: remove incomplete %s: %w", final, err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return Files{}, fmt.Errorf("synth cache: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Files{}, fmt.Errorf("synth cache: %w", err)
	}
	tmp, err := os.MkdirTemp(dir, "."+name+".tmp-*")
	if err != nil {
		return Files{}, fmt.Errorf("synth cache: %w", err)
	}
	defer os.RemoveAll(tmp) // a no-op once renamed
	sum, err := WriteDir(tmp, o)
	if err != nil {
		return Files{}, fmt.Errorf("synth cache: %w", err)
	}
	js, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		return Files{}, fmt.Errorf("synth cache: %w", err)
	}
	if err := os.WriteFile(filepath.Join(tmp, summaryFile), append(js, '\n'), 0o644); err != nil {
		return Files{}, fmt.Errorf("synth cache: %w", err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil { // MkdirTemp makes it 0700
		return Files{}, fmt.Errorf("synth cache: %w", err)
	}
	if err := os.Rename(tmp, final); err != nil {
		// Another caller may have renamed its copy into place first.
		if f, lerr := loadCached(final); lerr == nil {
			return f, nil
		}
		return Files{}, fmt.Errorf("synth cache: %w", err)
	}
	f, err := loadCached(final)
	if err != nil {
		return Files{}, fmt.Errorf("synth cache: %w", err)
	}
	return f, nil
}

// loadCached returns the Files of a complete cached directory, or an
// error naming what is missing.
func loadCached(dir string) (Files, error) {
	f := Files{
		Dir:       dir,
		SlurmConf: filepath.Join(dir, SlurmConfFile),
		Assoc:     filepath.Join(dir, AssocFile),
		QOS:       filepath.Join(dir, QOSFile),
		Sacct:     filepath.Join(dir, SacctFile),
	}
	for _, p := range []string{f.SlurmConf, f.Assoc, f.QOS, f.Sacct} {
		if _, err := os.Stat(p); err != nil {
			return Files{}, fmt.Errorf("cached files: %w", err)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, summaryFile))
	if err != nil {
		return Files{}, fmt.Errorf("cached files: %w", err)
	}
	if err := json.Unmarshal(b, &f.Summary); err != nil {
		return Files{}, fmt.Errorf("cached %s: %s: %w", dir, summaryFile, err)
	}
	return f, nil
}

// fingerprintSacct is how much of sacct.psv the fingerprint covers.
const fingerprintSacct = 64 << 10

// CacheName is the directory name Cached uses for o:
// "seed<S>-jobs<N>-<12 hex>", the hex digits from a SHA-256 of the options
// (defaults filled in) and of what the generator writes for them —
// slurm.conf, assoc.psv, qos.psv and the first 64 KiB of sacct.psv. A
// change to the generator's output thus gets a new directory instead of
// reusing stale files, at the cost of generating a few hundred rows.
func CacheName(o Options) (string, error) {
	c := New(o)
	o = c.opt
	if err := o.validate(); err != nil {
		return "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "seed=%d cluster=%q labs=%d users=%d jobs=%d from=%d to=%d now=%d loc=%q unix=%t steps=%s\n",
		o.Seed, o.Cluster, o.Labs, o.UsersPerLab, o.Jobs, o.From.Unix(), o.To.Unix(), o.Now.Unix(),
		o.Location.String(), o.UnixTimes, strconv.FormatFloat(o.StepFraction, 'g', -1, 64))
	for _, write := range []func(io.Writer) error{c.WriteSlurmConf, c.WriteAssoc, c.WriteQOS} {
		if err := write(h); err != nil {
			return "", err
		}
	}
	lw := &limitWriter{w: h, n: fingerprintSacct}
	if _, err := c.WriteSacct(lw); err != nil && !errors.Is(err, errLimit) {
		return "", err
	}
	return "seed" + strconv.FormatInt(o.Seed, 10) + "-jobs" + strconv.Itoa(o.Jobs) + "-" +
		hex.EncodeToString(h.Sum(nil))[:12], nil
}

// errLimit stops WriteSacct once the fingerprint has enough bytes.
var errLimit = errors.New("fingerprint complete")

// limitWriter passes the first n bytes to w, then fails with errLimit.
type limitWriter struct {
	w io.Writer
	n int
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, errLimit
	}
	k := min(len(p), l.n)
	l.w.Write(p[:k]) // a hash.Hash never fails
	l.n -= k
	if k < len(p) {
		return k, errLimit
	}
	return k, nil
}
