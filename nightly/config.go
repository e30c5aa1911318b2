package nightly

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// DefaultConfigPath is where `fairledger nightly` looks for its
// configuration without --config or $FAIRLEDGER_CONFIG.
const DefaultConfigPath = "/etc/fairledger/fairledger.toml"

// Config is the nightly job's configuration file: the history, the spool
// and one section per cluster.
type Config struct {
	// File is the path the configuration was read from.
	File string `toml:"-"`
	// History is the history directory all clusters share.
	History string `toml:"history"`
	// Spool is where the fetched dumps are kept: per cluster its sacct
	// files (pruned after KeepDays), its association dumps (one per change,
	// kept) and its latest QOS dump.
	Spool string `toml:"spool"`
	// LogFile receives the JSON log of every night, appended; empty: none
	// (the log goes nowhere; warnings still reach stderr as plain lines).
	LogFile string `toml:"log_file"`
	// MetricsFile, when set, receives `fairledger metrics`' text (the
	// latest snapshot of every cluster of the history, for node_exporter's
	// textfile collector), written atomically after the nights; empty:
	// none.
	MetricsFile string `toml:"metrics_file"`
	// KeepDays is how many days the fetched sacct files are kept in the
	// spool after they were fetched (default 14; 0 keeps none once a night
	// has committed).
	KeepDays *int `toml:"keep_days"`
	// Sacct and Sacctmgr are Slurm's clients (default: sacct and sacctmgr
	// on $PATH).
	Sacct    string `toml:"sacct"`
	Sacctmgr string `toml:"sacctmgr"`
	// Clusters are the clusters, one [[cluster]] section each, run in order.
	Clusters []Cluster `toml:"cluster"`
}

// Cluster is one [[cluster]] section.
type Cluster struct {
	// Name is the cluster's name (sacct -M, the history's cluster=); default
	// slurm.conf's ClusterName.
	Name string `toml:"name"`
	// SlurmConf is the cluster's slurm.conf (its includes are read too).
	SlurmConf string `toml:"slurm_conf"`
	// FirstDay is where an empty history starts: the night backfills from
	// it (YYYY-MM-DD[THH:MM[:SS]] in the zone, RFC 3339 or @UNIX, read as
	// run --from is). Required until the history has a checkpoint of the
	// cluster.
	FirstDay string `toml:"first_day"`
	// Timezone is the site's zone (usage resets, local midnight, the
	// window's end); default: the history's, else $TZ, else UTC.
	Timezone string `toml:"timezone"`
	// WindowEnd is where a night ends: "midnight" (the last local midnight,
	// the default) or "now" (the current second).
	WindowEnd string `toml:"window_end"`
	// Overlap is how far before the last checkpoint sacct is asked again,
	// for records slurmdbd got late (default 1d).
	Overlap Duration `toml:"overlap"`
	// MaxQueryRange is the longest span one sacct call asks for: slurmdbd
	// refuses longer ones with MaxQueryTimeRange set (default 30d).
	MaxQueryRange Duration `toml:"max_query_range"`
	// SacctTimeout bounds each sacct and sacctmgr call (default 15m).
	SacctTimeout Duration `toml:"sacct_timeout"`
	// Priority computes job priorities (run --priority), and fetches every
	// state and the request columns it needs (default true).
	Priority *bool `toml:"priority"`
	// SlurmctldLog is "auto" (default: slurm.conf's SlurmctldLogFile and
	// its rotated .1 when DebugFlags has Priority), "none", or a path.
	SlurmctldLog string `toml:"slurmctld_log"`
	// SlurmVersion is the release series of slurmctld, or "auto" (default:
	// from `sacct --version`).
	SlurmVersion string `toml:"slurm_version"`
	// Run are more flags of `fairledger run`, by name without the dashes
	// (snapshot-every = "24h", keep-checkpoints = 62, ...).
	Run map[string]any `toml:"run"`
}

// Duration is a TOML string such as "36h", "90m" or "2d" (days of 24 h).
type Duration struct{ time.Duration }

// UnmarshalText reads a Duration.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := parseDuration(string(b))
	if err != nil {
		return err
	}
	d.Duration = v
	return nil
}

// parseDuration reads Go's durations and whole days ("2d", "1d12h").
func parseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	var days time.Duration
	if i := strings.IndexByte(s, 'd'); i > 0 {
		n, err := strconv.Atoi(s[:i])
		if err != nil || n < 0 {
			return 0, fmt.Errorf("duration %q: want e.g. 36h, 90m or 2d", s)
		}
		days, s = time.Duration(n)*24*time.Hour, s[i+1:]
		if s == "" {
			return days, nil
		}
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("duration %q: want e.g. 36h, 90m or 2d", s)
	}
	return days + v, nil
}

// Defaults of a cluster section.
const (
	defaultOverlap       = 24 * time.Hour
	defaultMaxQueryRange = 30 * 24 * time.Hour
	defaultSacctTimeout  = 15 * time.Minute
	defaultKeepDays      = 14
)

// Window ends of a cluster section.
const (
	WindowMidnight = "midnight"
	WindowNow      = "now"
)

// ownRunFlags are the run flags the nightly job sets itself: a [run] table
// must not set them, and the message says which key to use instead.
var ownRunFlags = map[string]string{
	"slurm-conf": "slurm_conf", "assoc": "(fetched)", "qos": "(fetched)", "sacct": "(fetched)",
	"sacct-fields": "(fetched with a header)", "sacct-start": "(the fetched span)", "sacct-end": "(the fetched span)",
	"history": "history", "to": "window_end, or nightly --to", "from": "first_day, or run --from for a recompute",
	"tz": "timezone", "cluster": "name", "slurm-version": "slurm_version", "slurmctld-log": "slurmctld_log",
	"priority": "priority", "dry-run": "nightly --dry-run", "rejects": "(kept in the spool)", "progress": "(logged)",
}

// Load reads and checks a configuration file; every problem is reported
// at once, each naming the file and the key.
func Load(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return Parse(path, b)
}

// Parse reads a configuration from b, read from the file name.
func Parse(name string, b []byte) (*Config, error) {
	c := &Config{File: name}
	md, err := toml.NewDecoder(bytes.NewReader(b)).Decode(c)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", name, err)
	}
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("config %s: "+format, append([]any{name}, args...)...))
	}
	for _, k := range md.Undecoded() {
		if len(k) >= 3 && k[0] == "cluster" && k[1] == "run" {
			continue // run flags are checked by the command, which knows them
		}
		bad("unknown key %s", k.String())
	}
	if c.History == "" {
		bad("history: required (the history directory, e.g. /var/lib/fairledger/history)")
	}
	if c.Spool == "" {
		bad("spool: required (where fetched dumps are kept, e.g. /var/spool/fairledger)")
	}
	if c.MetricsFile == "-" || strings.HasSuffix(c.MetricsFile, "/") {
		bad("metrics_file %q: want a file's path (e.g. /var/lib/prometheus/node-exporter/fairledger.prom)", c.MetricsFile)
	}
	if c.KeepDays == nil {
		c.KeepDays = new(int)
		*c.KeepDays = defaultKeepDays
	} else if *c.KeepDays < 0 {
		bad("keep_days = %d: want 0 or more", *c.KeepDays)
	}
	if c.Sacct == "" {
		c.Sacct = "sacct"
	}
	if c.Sacctmgr == "" {
		c.Sacctmgr = "sacctmgr"
	}
	if len(c.Clusters) == 0 {
		bad("no [[cluster]] section")
	}
	names := map[string]int{}
	for i := range c.Clusters {
		cl := &c.Clusters[i]
		where := fmt.Sprintf("[[cluster]] #%d", i+1)
		if cl.Name != "" {
			where = fmt.Sprintf("[[cluster]] %q", cl.Name)
			if j, ok := names[cl.Name]; ok {
				bad("%s: the same name as [[cluster]] #%d", where, j+1)
			}
			names[cl.Name] = i
		}
		for _, e := range cl.check() {
			bad("%s: %v", where, e)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return c, nil
}

// check sets a cluster section's defaults and returns its problems.
func (cl *Cluster) check() []error {
	var errs []error
	if cl.SlurmConf == "" {
		errs = append(errs, errors.New("slurm_conf: required (the cluster's slurm.conf)"))
	}
	if cl.Timezone != "" {
		if _, err := time.LoadLocation(cl.Timezone); err != nil {
			errs = append(errs, fmt.Errorf("timezone %q: %v", cl.Timezone, err))
		}
	}
	switch cl.WindowEnd {
	case "":
		cl.WindowEnd = WindowMidnight
	case WindowMidnight, WindowNow:
	default:
		errs = append(errs, fmt.Errorf("window_end %q: want %q or %q", cl.WindowEnd, WindowMidnight, WindowNow))
	}
	if cl.Overlap.Duration == 0 {
		cl.Overlap.Duration = defaultOverlap
	}
	if cl.MaxQueryRange.Duration == 0 {
		cl.MaxQueryRange.Duration = defaultMaxQueryRange
	} else if cl.MaxQueryRange.Duration < time.Hour {
		errs = append(errs, fmt.Errorf("max_query_range %s: want at least 1h", cl.MaxQueryRange.Duration))
	}
	if cl.SacctTimeout.Duration == 0 {
		cl.SacctTimeout.Duration = defaultSacctTimeout
	}
	if cl.Priority == nil {
		cl.Priority = new(bool)
		*cl.Priority = true
	}
	switch {
	case cl.SlurmctldLog == "":
		cl.SlurmctldLog = "auto"
	case cl.SlurmctldLog == "auto", cl.SlurmctldLog == "none", strings.HasPrefix(cl.SlurmctldLog, "/"):
	default:
		errs = append(errs, fmt.Errorf("slurmctld_log %q: want auto, none or an absolute path", cl.SlurmctldLog))
	}
	if cl.SlurmVersion == "" {
		cl.SlurmVersion = "auto"
	}
	for _, k := range slices.Sorted(maps.Keys(cl.Run)) {
		if use, ok := ownRunFlags[k]; ok {
			errs = append(errs, fmt.Errorf("run.%s: set by the nightly job itself (use %s)", k, use))
		}
		switch cl.Run[k].(type) {
		case string, int64, bool, float64:
		default:
			errs = append(errs, fmt.Errorf("run.%s: want a string, number or boolean", k))
		}
	}
	return errs
}

// RunFlags are the cluster's [run] flags as command-line arguments
// (--name=value), sorted by name.
func (cl *Cluster) RunFlags() []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(cl.Run)) {
		var v string
		switch x := cl.Run[k].(type) {
		case string:
			v = x
		case int64:
			v = strconv.FormatInt(x, 10)
		case float64:
			v = strconv.FormatFloat(x, 'f', -1, 64)
		case bool:
			v = strconv.FormatBool(x)
		}
		out = append(out, "--"+k+"="+v)
	}
	return out
}
