package nightly

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/fairledger/fairledger/ingest"
	"github.com/fairledger/fairledger/internal/release"
)

// Runner runs one of Slurm's clients.
type Runner interface {
	// Run runs name with args, env added to the process's environment, and
	// its standard output written to stdout. A non-zero exit is an error
	// holding what the program printed on standard error; stderr is that
	// text in any case.
	Run(ctx context.Context, name string, args, env []string, stdout io.Writer) (stderr string, err error)
}

// ExecRunner runs programs with os/exec.
type ExecRunner struct{}

// Run implements Runner.
func (ExecRunner) Run(ctx context.Context, name string, args, env []string, stdout io.Writer) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout = stdout
	var errb bytes.Buffer
	cmd.Stderr = &limitedBuffer{b: &errb, max: 64 << 10}
	cmd.WaitDelay = 10 * time.Second
	err := cmd.Run()
	msg := strings.TrimSpace(errb.String())
	if ctx.Err() != nil {
		return msg, fmt.Errorf("%s: %w", name, context.Cause(ctx))
	}
	if err != nil {
		if msg != "" {
			return msg, fmt.Errorf("%s: %w: %s", name, err, firstLines(msg, 3))
		}
		return msg, fmt.Errorf("%s: %w", name, err)
	}
	return msg, nil
}

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	b   *bytes.Buffer
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.b.Len(); room > 0 {
		l.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func firstLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = append(lines[:n], "…")
	}
	return strings.Join(lines, " / ")
}

// Fetcher runs a cluster's Slurm clients for a night.
type Fetcher struct {
	// SacctPath and SacctmgrPath are the clients' paths.
	SacctPath, SacctmgrPath string
	// Cluster is the cluster's name (sacct -M, sacctmgr where cluster=).
	Cluster string
	// SlurmConf is given to the clients as $SLURM_CONF, so that each
	// cluster's clients reach its own slurmdbd.
	SlurmConf string
	// Priority fetches every state and the request columns.
	Priority bool
	// Timeout bounds each call.
	Timeout time.Duration
	// Runner runs the clients.
	Runner Runner
}

// timeFormat is how sacct's -S and -E are given: sacct reads them in its
// own zone, which env sets to UTC.
const timeFormat = "2006-01-02T15:04:05"

// env is the clients' environment: Unix seconds in sacct's output, UTC
// for its -S and -E, and the cluster's slurm.conf.
func (f *Fetcher) env() []string {
	env := []string{"SLURM_TIME_FORMAT=%s", "TZ=UTC"}
	if f.SlurmConf != "" {
		env = append(env, "SLURM_CONF="+f.SlurmConf)
	}
	return env
}

// SacctArgs are sacct's arguments for one chunk.
func (f *Fetcher) SacctArgs(s Span) []string {
	cols := ingest.RunFields
	args := []string{"-a", "-D", "-P", "-M", f.Cluster,
		"-S", s.From.UTC().Format(timeFormat), "-E", s.To.UTC().Format(timeFormat)}
	if f.Priority {
		cols = ingest.PriorityFields
		args = append(args, "-s", ingest.PriorityStates)
	}
	return append(args, "-o", strings.Join(cols, ","))
}

// SacctCommand is the sacct command line of a span, for messages.
func (f *Fetcher) SacctCommand(s Span) string {
	return "SLURM_TIME_FORMAT=%s TZ=UTC " + f.SacctPath + " " + strings.Join(f.SacctArgs(s), " ")
}

// Sacct fetches every chunk into dir (sacct-001.psv, …) and returns the
// files in order. A chunk whose sacct fails, times out, prints an error or
// prints no header fails the fetch.
func (f *Fetcher) Sacct(ctx context.Context, chunks []Span, dir string, progress func(done, total int, s Span, took time.Duration)) ([]string, error) {
	var files []string
	for i, s := range chunks {
		name := filepath.Join(dir, fmt.Sprintf("sacct-%03d.psv", i+1))
		start := time.Now()
		if err := f.fetchTo(ctx, name, f.SacctPath, f.SacctArgs(s), "JobID|"); err != nil {
			return nil, fmt.Errorf("sacct %s → %s: %w", fmtTime(s.From), fmtTime(s.To), err)
		}
		files = append(files, name)
		if progress != nil {
			progress(i+1, len(chunks), s, time.Since(start))
		}
	}
	return files, nil
}

// assocFields are the fields of the association dump; Lineage exists from
// Slurm 23.02 on and is dropped when sacctmgr does not know it.
func (f *Fetcher) assocFields(lineage bool) string {
	fields := "Cluster,Account,User,Partition,ParentName,Share"
	if lineage {
		fields += ",Lineage"
	}
	fields += ",GrpTRESMins"
	if f.Priority {
		fields += ",Priority"
	}
	return fields
}

// Assoc dumps the cluster's association tree into file.
func (f *Fetcher) Assoc(ctx context.Context, file string) error {
	args := func(lineage bool) []string {
		return []string{"-P", "show", "assoc", "where", "cluster=" + f.Cluster, "format=" + f.assocFields(lineage)}
	}
	err := f.fetchTo(ctx, file, f.SacctmgrPath, args(true), "Cluster|")
	if err != nil && strings.Contains(err.Error(), "Unknown field") {
		err = f.fetchTo(ctx, file, f.SacctmgrPath, args(false), "Cluster|")
	}
	if err != nil {
		return fmt.Errorf("sacctmgr show assoc: %w", err)
	}
	return nil
}

// QOS dumps the QOS table into file.
func (f *Fetcher) QOS(ctx context.Context, file string) error {
	fields := "Name,UsageFactor,Flags"
	if f.Priority {
		fields += ",Priority"
	}
	if err := f.fetchTo(ctx, file, f.SacctmgrPath, []string{"-P", "show", "qos", "format=" + fields}, "Name|"); err != nil {
		return fmt.Errorf("sacctmgr show qos: %w", err)
	}
	return nil
}

// Version is the release series of the installed client (`sacct
// --version`: "slurm 22.05.8").
func (f *Fetcher) Version(ctx context.Context) (release.Series, error) {
	var out bytes.Buffer
	ctx, cancel := context.WithTimeoutCause(ctx, f.Timeout, fmt.Errorf("timed out after %s (sacct_timeout)", f.Timeout))
	defer cancel()
	if _, err := f.Runner.Run(ctx, f.SacctPath, []string{"--version"}, f.env(), &out); err != nil {
		return release.Series{}, fmt.Errorf("sacct --version: %w", err)
	}
	// "slurm 24.11.5" as SchedMD builds it, "slurm-wlm 22.05.8" as Debian does.
	fields := strings.Fields(out.String())
	if len(fields) < 2 || !strings.HasPrefix(strings.ToLower(fields[0]), "slurm") {
		return release.Series{}, fmt.Errorf("sacct --version printed %q, not \"slurm X.Y.Z\": set slurm_version", strings.TrimSpace(out.String()))
	}
	v, err := release.Parse(fields[1])
	if err != nil {
		return release.Series{}, fmt.Errorf("sacct --version: %w; set slurm_version to the nearest series", err)
	}
	return v, nil
}

// fetchTo runs a client with its output into file (written to a
// temporary name, renamed when complete). The output must start with
// header: a client that printed nothing, or something else, failed even
// when it exited 0; so did one that printed an error.
func (f *Fetcher) fetchTo(ctx context.Context, file, name string, args []string, header string) error {
	ctx, cancel := context.WithTimeoutCause(ctx, f.Timeout, fmt.Errorf("timed out after %s (sacct_timeout)", f.Timeout))
	defer cancel()
	tmp := file + ".part"
	out, err := os.Create(tmp)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	w := bufio.NewWriterSize(out, 1<<20)
	msg, err := f.Runner.Run(ctx, name, args, f.env(), w)
	if err == nil {
		err = w.Flush()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if m := errorLine(msg); m != "" {
		return fmt.Errorf("%s printed an error (exit 0): %s", name, m)
	}
	if err := checkHeader(tmp, header); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return os.Rename(tmp, file)
}

// errorLine is the first line of a client's standard error that reports
// an error ("sacct: error: …", "slurmdbd: …"), or "".
func errorLine(stderr string) string {
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(strings.ToLower(l), "error") {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

// checkHeader checks that file starts with the header's prefix.
func checkHeader(file, prefix string) error {
	fh, err := os.Open(file)
	if err != nil {
		return err
	}
	defer fh.Close()
	b := make([]byte, len(prefix))
	n, err := io.ReadFull(fh, b)
	switch {
	case n == 0 && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)):
		return errors.New("printed nothing, not even its header line")
	case string(b[:n]) != prefix:
		return fmt.Errorf("printed %q where its header line %s… was expected", string(b[:n]), prefix)
	}
	return nil
}
