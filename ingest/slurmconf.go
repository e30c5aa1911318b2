package ingest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/fairledger/fairledger/billing"
	"github.com/fairledger/fairledger/fairshare"
	"github.com/fairledger/fairledger/internal/release"
)

// Config is the part of slurm.conf that fair-share accounting and job
// priority depend on, with Slurm's defaults filled in for every key the
// file leaves out.
type Config struct {
	// File is the name the configuration was read from.
	File string
	// ClusterName, lower-cased as slurmctld stores it (and as sacct prints
	// it in the Cluster column).
	ClusterName string
	// PriorityType is the priority plugin, e.g. "priority/multifactor"; empty
	// when the file does not set it.
	PriorityType string
	// DecayHalfLifeSec is PriorityDecayHalfLife in seconds (default 7-0 =
	// 604800); 0 means no decay.
	DecayHalfLifeSec int64
	// CalcPeriodSec is PriorityCalcPeriod in seconds (a time string in
	// minutes, at least 1 minute; default 5 minutes = 300).
	CalcPeriodSec int64
	// UsageResetPeriod is PriorityUsageResetPeriod, upper-case: NONE (the
	// default), NOW, DAILY, WEEKLY, MONTHLY, QUARTERLY or YEARLY.
	UsageResetPeriod string
	// PriorityFlags are the PriorityFlags items, upper-case, in file order.
	// Slurm tests them by substring; use HasFlag and Algorithm rather than
	// comparing items.
	PriorityFlags []string
	// FairShareDampeningFactor (default 1) divides the classic and
	// depth-oblivious exponent; Fair Tree ignores it.
	FairShareDampeningFactor int64
	// PriorityWeightAge is the job-priority weight of the age factor (default 0).
	PriorityWeightAge int64
	// PriorityWeightAssoc is the weight of the association factor (default 0).
	PriorityWeightAssoc int64
	// PriorityWeightFairshare is the weight of the fair-share factor (default 0).
	PriorityWeightFairshare int64
	// PriorityWeightJobSize is the weight of the job-size factor (default 0).
	PriorityWeightJobSize int64
	// PriorityWeightPartition is the weight of the partition factor (default 0).
	PriorityWeightPartition int64
	// PriorityWeightQOS is the weight of the QOS factor (default 0).
	PriorityWeightQOS int64
	// PriorityWeightTRES is the raw PriorityWeightTRES string ("" = none).
	PriorityWeightTRES string
	// PriorityMaxAgeSec is PriorityMaxAge in seconds (default 7-0 = 604800).
	PriorityMaxAgeSec int64
	// PriorityFavorSmall is the PriorityFavorSmall boolean (default false).
	PriorityFavorSmall bool
	// AccountingStorageEnforce items, lower-case, in file order.
	AccountingStorageEnforce []string
	// AccountingStorageTRES items as listed (case kept), in file order.
	AccountingStorageTRES []string
	// SlurmctldLogFile is slurmctld's log file, as written (empty: none
	// set, slurmctld logs to syslog).
	SlurmctldLogFile string
	// DebugFlags are slurmctld's debug flags as listed (case kept): the
	// decay lines fairledger reads need Priority.
	DebugFlags []string
	// Partitions in file order, with PartitionName=DEFAULT values already
	// applied; the DEFAULT pseudo-partition itself is not listed.
	Partitions []Partition
	// NodeGroups are the NodeName lines in file order (NodeName=DEFAULT
	// lines applied, not listed). Nodes slurmd registers dynamically, and
	// those of a NodeSet without NodeName lines, are in no slurm.conf.
	NodeGroups []NodeGroup
	// Totals are the whole cluster's resources: every node of NodeGroups
	// (the job-size factor's node and CPU counts).
	Totals Totals
	// Set holds the lower-cased top-level keys whose value the file set and
	// this reader accepted, so callers can tell a default from an explicit
	// value. Keys this reader ignores are recorded too.
	Set map[string]bool
	// Warnings are remarks about a usable configuration, each naming the
	// file: PriorityType left out or set to priority/basic (Slurm then
	// keeps no fair share; fairledger computes what priority/multifactor
	// would).
	Warnings []string
}

// Partition is one PartitionName line of slurm.conf.
type Partition struct {
	// Name is the partition name as written (Slurm partition names are
	// case-sensitive).
	Name string
	// TRESBillingWeights is the raw weight string, inherited from
	// PartitionName=DEFAULT when the line does not set it; "" means none.
	TRESBillingWeights string
	// PriorityJobFactor (default 1); the older Priority= key, on the line or
	// on DEFAULT, overrides it as in Slurm.
	PriorityJobFactor int64
	// PriorityTier (default 1), which orders partitions for scheduling
	// and preemption; the older Priority= overrides it too.
	PriorityTier int64
	// MaxTimeMin is MaxTime in minutes; -1 for UNLIMITED (the default),
	// which slurmctld holds as INFINITE (4294967295). A job without a time
	// limit of its own (sacct's Timelimit "Partition_Limit") takes it.
	MaxTimeMin int64
	// Nodes is the Nodes= value as written, inherited from
	// PartitionName=DEFAULT: a hostlist of node and NodeSet names, or ALL;
	// "" for none.
	Nodes string
	// Totals are the resources of the partition's nodes (each node once):
	// the denominators of the TRES factors of its jobs' priority.
	Totals Totals
	// File is the file holding the partition line.
	File string
	// Line is the physical line where the partition line starts.
	Line int
	// WeightsFile and WeightsLine are where TRESBillingWeights is written:
	// the partition's own line, or the PartitionName=DEFAULT line it
	// inherits them from; "" and 0 without weights.
	WeightsFile string
	WeightsLine int
}

// Default values, from Slurm's read_config.c and docs/slurm-semantics.md §2.
const (
	confDefaultHalfLifeSec   = 7 * 86400
	confDefaultCalcPeriodSec = 5 * 60
	confDefaultMaxAgeSec     = 7 * 86400
	confMaxIncludeDepth      = 32
	confMissingValue         = "missing value"
	// confKeptErrors bounds the errors kept while reading, so that a huge
	// file of the wrong kind does not fill memory with them; the rest are
	// only counted.
	confKeptErrors = 1000
)

// The PriorityType values Slurm has (its priority plugins; slurmctld
// matches the name exactly).
const (
	confPriorityMultifactor = "priority/multifactor"
	confPriorityBasic       = "priority/basic"
)

// confRecordKeys are the slurm.conf keys that start a multi-pair record
// line; every other top-level key takes exactly one value per line.
var confRecordKeys = map[string]bool{
	"nodename":      true,
	"partitionname": true,
	"frontendname":  true,
	"downnodes":     true,
	"nodeset":       true,
}

// confResetPeriods are the accepted PriorityUsageResetPeriod values (§2.7).
var confResetPeriods = map[string]bool{
	"NONE": true, "NOW": true, "DAILY": true, "WEEKLY": true,
	"MONTHLY": true, "QUARTERLY": true, "YEARLY": true,
}

// confEnforceItems are the AccountingStorageEnforce items slurmctld accepts
// (_validate_accounting_storage_enforce in read_config.c).
var confEnforceItems = map[string]bool{
	"1": true, "2": true, "associations": true, "limits": true, "safe": true,
	"wckeys": true, "qos": true, "all": true, "nojobs": true, "nosteps": true,
}

// confValue is the last value given for a top-level key.
type confValue struct {
	key    string // as written
	value  string
	op     byte // 0, or the operator of "Key+=value" and friends
	file   string
	line   int
	seq    int
	quoted bool
}

// confError is a ParseError with the reading order of its line, so the
// errors of a file and its includes can be reported in reading order.
type confError struct {
	seq int
	err *ParseError
}

// confParser holds the state of one ParseSlurmConf call.
type confParser struct {
	open     func(path string) (io.ReadCloser, error)
	cfg      *Config
	values   map[string]confValue
	defaults map[string]confValue // merged PartitionName=DEFAULT keys
	parts    map[string]bool
	errs     []confError
	dropped  int // errors counted past confKeptErrors
	stack    []confFile
	seq      int
	// nonBlank counts the non-blank logical lines read, notKV those of them
	// that do not even start with a Key=Value pair; when the two are equal
	// the input is no slurm.conf at all. firstNotKV locates the first one.
	nonBlank, notKV int
	firstNotKV      confValue
	stopped         bool // reading stopped: the input is no slurm.conf

	nodeDefaults map[string]confValue   // merged NodeName=DEFAULT keys
	nodeIndex    map[string]int         // node name → its NodeGroups index
	nodeSets     map[string]confNodeSet // NodeSet lines by name
	partNodes    []confPartNodes        // per Partitions entry
}

// confFile is one file of the Include chain being read: its name as given
// or resolved, its cleaned absolute path and, when the reader could say,
// its identity, so that a file reached by another path (relative or
// absolute, a symlink, a hard link) is still known as the same.
type confFile struct {
	name, abs string
	info      fs.FileInfo // nil when the reader has no Stat
}

// newConfFile describes the file name read through r.
func newConfFile(name string, r any) confFile {
	c := confFile{name: name, abs: filepath.Clean(name)}
	if abs, err := filepath.Abs(name); err == nil {
		c.abs = abs
	}
	if st, ok := r.(interface{ Stat() (fs.FileInfo, error) }); ok {
		if fi, err := st.Stat(); err == nil {
			c.info = fi
		}
	}
	return c
}

// same reports whether c and o are one file.
func (c confFile) same(o confFile) bool {
	return c.abs == o.abs || c.info != nil && o.info != nil && os.SameFile(c.info, o.info)
}

// ParseSlurmConf reads a slurm.conf from r; name is used in errors and to
// resolve relative Include paths, which are opened with open (nil: Include
// lines are reported as errors). An Include of a file already being read
// (by any path, when open's files and r have a Stat method as *os.File
// does) is an include cycle. A line longer than MaxLineBytes is an error,
// and is skipped.
//
// NodeName lines (with NodeName=DEFAULT), NodeSet lines and each
// partition's Nodes= give Config.NodeGroups, Config.Totals and
// Partition.Totals. A partition naming a node no NodeName line defines is a
// warning, not an error: a slurm.conf copied without its node lines still
// serves fair share.
//
// The syntax is slurmctld's: Key=Value pairs with case-insensitive keys,
// spaces allowed around '=', double-quoted values that may hold spaces,
// '#' comments (a backslash escapes '#'), '\' line continuations, and
// "Include path" lines ("%c" in the path is the cluster name). Outside
// NodeName/PartitionName-style record lines one pair per line is allowed.
// Duplicate keys: the last one wins. PartitionName=DEFAULT lines supply
// defaults for the partitions defined after them. Keys this reader does not
// use are ignored.
//
// Every problem is reported: the error is an errors.Join of *ParseError
// values, in reading order (past confKeptErrors of them, a *MoreErrors
// counts the rest), and the best-effort Config is returned with it (a key
// with a bad value keeps its default). An input that is no slurm.conf at
// all (a compressed file, or one whose first wrongKindLines lines are none
// of them Key=Value) gets a single error and a nil Config.
//
// An unknown PriorityType is an error; a missing one or priority/basic
// (Slurm's default, which computes no fair share) is noted in
// Config.Warnings.
func ParseSlurmConf(name string, r io.Reader, open func(path string) (io.ReadCloser, error)) (*Config, error) {
	p := &confParser{
		open:     open,
		values:   make(map[string]confValue),
		defaults: make(map[string]confValue),
		parts:    make(map[string]bool),

		nodeDefaults: make(map[string]confValue),
		nodeIndex:    make(map[string]int),
		nodeSets:     make(map[string]confNodeSet),
		cfg: &Config{
			File:                     name,
			DecayHalfLifeSec:         confDefaultHalfLifeSec,
			CalcPeriodSec:            confDefaultCalcPeriodSec,
			UsageResetPeriod:         "NONE",
			FairShareDampeningFactor: 1,
			PriorityMaxAgeSec:        confDefaultMaxAgeSec,
			Set:                      make(map[string]bool),
		},
	}
	p.stack = append(p.stack, newConfFile(filepath.Clean(name), r))
	br := bufio.NewReader(r)
	if head, err := br.Peek(16); err == nil || err == io.EOF {
		if format := compression(head); format != "" {
			return nil, compressedError(name, format)
		}
	}
	p.parseReader(name, br)
	if p.stopped {
		first := p.firstNotKV
		return nil, &ParseError{File: first.file, Err: fmt.Errorf("not a slurm.conf: its first %d lines are not Key=Value (line %d: %s)",
			p.notKV, first.line, quoteHead(first.value))}
	}
	p.apply()
	p.resolveNodes()
	p.priorityType()
	p.priorityFlags()
	p.negativeWeights()

	sort.SliceStable(p.errs, func(i, j int) bool { return p.errs[i].seq < p.errs[j].seq })
	errs := make([]error, len(p.errs))
	for i, e := range p.errs {
		errs[i] = e.err
	}
	if p.dropped > 0 {
		errs = append(errs, &MoreErrors{File: name, N: p.dropped})
	}
	return p.cfg, errors.Join(errs...)
}

// priorityType notes a PriorityType under which Slurm keeps no fair share.
// fairledger goes on, computing what priority/multifactor would: the
// history is still useful (a site weighing the switch, or one whose
// slurm.conf simply leaves the key out), and Slurm's default must be a
// warning anyway, so an explicit priority/basic is one too.
func (p *confParser) priorityType() {
	v, set := p.values["prioritytype"]
	switch {
	case !set:
		p.cfg.Warnings = append(p.cfg.Warnings, unsetPriorityType(p.cfg.File))
	case p.cfg.PriorityType == confPriorityBasic:
		p.cfg.Warnings = append(p.cfg.Warnings, fmt.Sprintf(
			"%s:%d: PriorityType=%s keeps no fair share in Slurm (jobs are ordered first in, first out); fairledger computes what %s would",
			v.file, v.line, confPriorityBasic, confPriorityMultifactor))
	}
}

// knownPriorityFlags are the PriorityFlags slurmctld reads
// (_validate_and_set_defaults in src/common/read_config.c), with FAIR_TREE,
// a flag of the releases before 19.05 that later ones still accept.
var knownPriorityFlags = []string{"ACCRUE_ALWAYS", "SMALL_RELATIVE_TO_TIME", "CALCULATE_RUNNING",
	"DEPTH_OBLIVIOUS", "NO_FAIR_TREE", "FAIR_TREE", "INCR_ONLY", "MAX_TRES_GRES", "MAX_TRES",
	"NO_NORMAL_ALL", "NO_NORMAL_ASSOC", "NO_NORMAL_PART", "NO_NORMAL_QOS", "NO_NORMAL_TRES"}

// priorityFlags warns of each PriorityFlags item that is no flag Slurm
// knows. slurmctld searches the value for each flag it knows and ignores
// the rest without a word, and so does fairledger (see HasFlag); a
// misspelt flag would otherwise change nothing silently.
func (p *confParser) priorityFlags() {
	v, set := p.values["priorityflags"]
	if !set {
		return
	}
	for _, f := range p.cfg.PriorityFlags {
		if !slices.Contains(knownPriorityFlags, f) {
			p.cfg.Warnings = append(p.cfg.Warnings, fmt.Sprintf(
				"%s:%d: PriorityFlags item %q is no flag Slurm knows: ignored, as slurmctld ignores it (it reads only the flags it knows; check the spelling)",
				v.file, v.line, f))
		}
	}
}

// negativeWeights warns, once per line that writes them, of negative
// TRESBillingWeights, naming the file, the line, the partitions that take
// them (several when they inherit PartitionName=DEFAULT's) and each
// negative weight. slurmctld takes any number strtod reads
// (_tres_weight_item, src/common/slurm_protocol_api.c, 22.05–26.05), and
// charges the billing it gives, negative too: a job's billing, and the
// usage charged with it, may fall below 0 (docs/slurm-semantics.md §3).
// fairledger computes them as Slurm does; the warning is there because a
// negative weight is more often a typing slip than a policy. Items that
// do not parse are left to the run, which refuses them.
func (p *confParser) negativeWeights() {
	type at struct {
		file string
		line int
	}
	var lines []at
	parts := make(map[at][]string)
	for _, pt := range p.cfg.Partitions {
		if pt.TRESBillingWeights == "" {
			continue
		}
		k := at{pt.WeightsFile, pt.WeightsLine}
		if _, seen := parts[k]; !seen {
			lines = append(lines, k)
		}
		parts[k] = append(parts[k], pt.Name)
	}
	for _, k := range lines {
		names := parts[k]
		weights := ""
		for _, pt := range p.cfg.Partitions {
			if pt.WeightsFile == k.file && pt.WeightsLine == k.line {
				weights = pt.TRESBillingWeights
				break
			}
		}
		var neg []string
		for _, item := range strings.Split(weights, ",") {
			w, err := billing.ParseWeights(item, nil)
			if err != nil || len(w) != 1 || w[0].PerUnit >= 0 {
				continue
			}
			unit := "unit"
			if typ, _, _ := strings.Cut(w[0].TRES, "/"); typ == "mem" || typ == "bb" {
				unit = "MiB"
			}
			neg = append(neg, fmt.Sprintf("%s (%s=%g per %s)", strings.TrimSpace(item), w[0].TRES, w[0].PerUnit, unit))
		}
		if len(neg) == 0 {
			continue
		}
		which := "partition " + names[0]
		if len(names) > 1 {
			which = "partitions " + strings.Join(names, ", ")
		}
		p.cfg.Warnings = append(p.cfg.Warnings, fmt.Sprintf(
			"%s:%d: TRESBillingWeights=%q of %s: negative weight %s: Slurm takes it, and a job's billing and the usage charged with it can fall below 0; fairledger computes them as Slurm does",
			k.file, k.line, weights, which, strings.Join(neg, ", ")))
	}
}

// unsetPriorityType is the warning for a slurm.conf without PriorityType,
// whose default is priority/basic up to Slurm 23.02.
func unsetPriorityType(file string) string {
	return fmt.Sprintf("%s: PriorityType is not set, and Slurm's default %s keeps no fair share; fairledger computes what %s would",
		file, confPriorityBasic, confPriorityMultifactor)
}

// defaultMultifactor: from 23.11 the default PriorityType is
// priority/multifactor, before it priority/basic, which keeps no fair share
// (src/common/read_config.h, DEFAULT_PRIORITY_TYPE; commit 2f301e7958
// "Change default value of PriorityType to "priority/multifactor"";
// CHANGELOG 23.11.0rc1).
var defaultMultifactor = release.Series{Major: 23, Minor: 11}

// WarningsFor returns c.Warnings as they hold for Slurm release series v:
// from defaultMultifactor on a slurm.conf without PriorityType needs no
// warning.
func (c *Config) WarningsFor(v release.Series) []string {
	if v.AtLeast(defaultMultifactor) && !c.Set["prioritytype"] {
		unset := unsetPriorityType(c.File)
		return slices.DeleteFunc(slices.Clone(c.Warnings), func(w string) bool { return w == unset })
	}
	return c.Warnings
}

// ReadSlurmConf opens and parses the slurm.conf at path; Include paths are
// resolved relative to the directory of the file that includes them. The
// file and each one it includes must be a regular file of at most
// MaxConfBytes.
func ReadSlurmConf(path string) (*Config, error) {
	f, err := openBounded(path, "slurm.conf", "slurm.conf files", MaxConfBytes)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseSlurmConf(path, f, func(p string) (io.ReadCloser, error) {
		return openBounded(p, "included file", "slurm.conf files", MaxConfBytes)
	})
}

// Partition returns the partition with exactly this name.
func (c *Config) Partition(name string) (Partition, bool) {
	for _, p := range c.Partitions {
		if p.Name == name {
			return p, true
		}
	}
	return Partition{}, false
}

// LimitsEnforced reports whether AccountingStorageEnforce includes limits
// (directly, as its numeric alias "2", or through safe or all), which
// decides whether usage is charged at job end (docs/slurm-semantics.md §2.5).
func (c *Config) LimitsEnforced() bool {
	for _, it := range c.AccountingStorageEnforce {
		switch it {
		case "limits", "2", "safe", "all":
			return true
		}
	}
	return false
}

// Algorithm is the fair-share algorithm PriorityFlags selects, matching
// by case-insensitive substring as slurmctld does (§5): depth-oblivious if
// a flag contains DEPTH_OBLIVIOUS, else classic if one contains
// NO_FAIR_TREE, else Fair Tree.
func (c *Config) Algorithm() fairshare.Algorithm {
	switch {
	case c.flagSubstr(fairshare.DepthObliviousAlgo.Flag()):
		return fairshare.DepthObliviousAlgo
	case c.flagSubstr(fairshare.ClassicAlgo.Flag()):
		return fairshare.ClassicAlgo
	default:
		return fairshare.FairTreeAlgo
	}
}

// HasFlag reports whether slurmctld would treat the PriorityFlags bit named
// flag (case-insensitive) as set. Like slurmctld it matches by substring,
// with its special cases: MAX_TRES_GRES takes precedence over MAX_TRES;
// NO_NORMAL_ALL sets NO_NORMAL_ASSOC, _PART, _QOS and _TRES; DEPTH_OBLIVIOUS
// implies NO_FAIR_TREE; FAIR_TREE is set exactly when Algorithm() is
// Fair Tree.
func (c *Config) HasFlag(flag string) bool {
	f := strings.ToUpper(strings.TrimSpace(flag))
	switch f {
	case "":
		return false
	case fairshare.FairTreeAlgo.Flag():
		return c.Algorithm() == fairshare.FairTreeAlgo
	case fairshare.ClassicAlgo.Flag():
		return c.Algorithm() != fairshare.FairTreeAlgo
	case "MAX_TRES":
		return c.flagSubstr("MAX_TRES") && !c.flagSubstr("MAX_TRES_GRES")
	case "NO_NORMAL_ASSOC", "NO_NORMAL_PART", "NO_NORMAL_QOS", "NO_NORMAL_TRES":
		return c.flagSubstr(f) || c.flagSubstr("NO_NORMAL_ALL")
	}
	return c.flagSubstr(f)
}

// flagSubstr is slurmctld's xstrcasestr test on the PriorityFlags value.
func (c *Config) flagSubstr(upper string) bool {
	for _, f := range c.PriorityFlags {
		if strings.Contains(f, upper) {
			return true
		}
	}
	return false
}

// addErr records a problem found on line of file.
func (p *confParser) addErr(seq int, file string, line int, field, value string, err error) {
	if len(p.errs) >= confKeptErrors {
		p.dropped++
		return
	}
	p.errs = append(p.errs, confError{seq: seq, err: &ParseError{File: file, Line: line, Field: field, Value: value, Err: err}})
}

// parseReader reads one file (the top level or an include), line by line.
func (p *confParser) parseReader(file string, r io.Reader) {
	lr := newLineReader(r, MaxLineBytes)
	var logical strings.Builder
	start := 0
	for {
		raw, n, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			line := lr.n
			if n == 0 {
				line++
			}
			p.addErr(p.seq+1, file, line, "", "", fmt.Errorf("read: %w", err))
			break
		}
		if logical.Len() == 0 {
			start = lr.n
		}
		if n > MaxLineBytes || logical.Len()+n > MaxLineBytes {
			// Not slurm.conf text: an error, counted as a line that is
			// no Key=Value (see ParseSlurmConf's wrong-kind check).
			p.seq++
			p.addErr(p.seq, file, start, "", "", fmt.Errorf("line of %d bytes, longer than the %s a line may have: skipped",
				int64(logical.Len())+int64(n), formatBytes(MaxLineBytes)))
			if p.notKV == 0 {
				p.firstNotKV = confValue{value: string(raw[:min(len(raw), 64)]), file: file, line: start}
			}
			p.nonBlank++
			p.notKV++
			logical.Reset()
			if p.notKV == p.nonBlank && p.notKV >= wrongKindLines {
				p.stopped = true
				return
			}
			continue
		}
		text := confStripComment(strings.TrimRight(string(raw), "\r"))
		if cut, cont := confContinuation(text); cont {
			logical.WriteString(cut)
			continue
		}
		logical.WriteString(text)
		line := confStripEscapes(logical.String())
		logical.Reset()
		p.seq++
		p.parseLine(file, start, p.seq, line)
		if p.notKV == p.nonBlank && p.notKV >= wrongKindLines {
			p.stopped = true
			return
		}
	}
	if logical.Len() > 0 {
		p.seq++
		p.parseLine(file, start, p.seq, confStripEscapes(logical.String()))
	}
}

// parseLine handles one logical line (comments, continuations and escapes
// already processed).
func (p *confParser) parseLine(file string, line, seq int, text string) {
	trimmed := strings.TrimSpace(text)
	if trimmed == "" {
		return
	}
	p.nonBlank++
	if !utf8.ValidString(trimmed) {
		// Name the key=value that holds the stray bytes.
		field, value := "", trimmed
		for _, tok := range strings.Fields(trimmed) {
			if !utf8.ValidString(tok) {
				value = tok
				if k, v, ok := strings.Cut(tok, "="); ok && utf8.ValidString(k) {
					field, value = k, v
				}
				break
			}
		}
		p.addErr(seq, file, line, field, value, errNotUTF8)
		return
	}
	if strings.HasPrefix(trimmed, "{%") {
		p.addErr(seq, file, line, "", trimmed, fmt.Errorf("unrendered template directive %q", trimmed))
		return
	}
	if len(trimmed) > len("include") && strings.EqualFold(trimmed[:len("include")], "include") &&
		confIsSpace(trimmed[len("include")]) {
		p.include(file, line, seq, strings.TrimSpace(trimmed[len("include"):]))
		return
	}
	if strings.EqualFold(trimmed, "include") {
		p.addErr(seq, file, line, "Include", "", errors.New("missing path"))
		return
	}
	first, ok, why := confScanPair(text, 0)
	if !ok {
		if why != confMissingValue && !strings.Contains(trimmed, "{{") {
			if p.notKV == 0 {
				p.firstNotKV = confValue{value: trimmed, file: file, line: line}
			}
			p.notKV++
		}
		p.scanErr(file, line, seq, first, why, trimmed)
		return
	}
	if strings.Contains(text[first.valStart:], "{{") || strings.Contains(text[first.valStart:], "{%") {
		p.addErr(seq, file, line, first.key, strings.TrimSpace(text[first.valStart:]),
			errors.New("unrendered template placeholder"))
		return
	}
	lkey := strings.ToLower(first.key)
	if confRecordKeys[lkey] {
		pairs := []confPair{first}
		pos := first.end
		for {
			pr, ok, why := confScanPair(text, pos)
			if !ok {
				if rest := strings.TrimSpace(text[pos:]); rest != "" {
					p.scanErr(file, line, seq, pr, why, rest)
				}
				break
			}
			pairs = append(pairs, pr)
			pos = pr.end
		}
		switch lkey {
		case "partitionname":
			p.partition(file, line, seq, pairs)
		case "nodename":
			p.nodeLine(file, line, seq, pairs)
		case "nodeset":
			p.nodeSet(file, line, seq, pairs)
		}
		p.cfg.Set[lkey] = true
		return
	}
	if rest := strings.TrimSpace(text[first.end:]); rest != "" {
		p.addErr(seq, file, line, first.key, first.value,
			fmt.Errorf("unexpected text %q after the value (one Key=Value per line)", rest))
	}
	if !first.quoted && strings.HasPrefix(first.value, `"`) {
		p.addErr(seq, file, line, first.key, first.value, errors.New("unbalanced double quote"))
		return
	}
	p.values[lkey] = confValue{
		key: first.key, value: first.value, op: first.op, quoted: first.quoted,
		file: file, line: line, seq: seq,
	}
}

// scanErr reports text that is not a Key=Value pair.
func (p *confParser) scanErr(file string, line, seq int, pair confPair, why, text string) {
	switch {
	case strings.Contains(text, "{{"):
		p.addErr(seq, file, line, "", text, fmt.Errorf("unrendered template placeholder in %q", text))
	case why == confMissingValue:
		p.addErr(seq, file, line, pair.key, "", errors.New(why))
	default:
		p.addErr(seq, file, line, "", text, fmt.Errorf("expected Key=Value, got %q", text))
	}
}

// include parses the file named by an Include line.
func (p *confParser) include(file string, line, seq int, arg string) {
	name := arg
	if i := strings.IndexFunc(arg, func(r rune) bool { return r < 128 && confIsSpace(byte(r)) }); i >= 0 {
		name = arg[:i]
		p.addErr(seq, file, line, "Include", arg, fmt.Errorf("unexpected text %q after the path", strings.TrimSpace(arg[i:])))
	}
	if name == "" {
		p.addErr(seq, file, line, "Include", "", errors.New("missing path"))
		return
	}
	if strings.Contains(name, "%c") {
		cluster, ok := p.values["clustername"]
		if !ok || cluster.value == "" {
			p.addErr(seq, file, line, "Include", name, errors.New("%c needs ClusterName set before the Include"))
			return
		}
		name = strings.ReplaceAll(name, "%c", strings.ToLower(cluster.value))
	}
	path := name
	if !filepath.IsAbs(path) {
		path = filepath.Join(filepath.Dir(file), path)
	}
	path = filepath.Clean(path)
	if p.cycle(seq, file, line, name, newConfFile(path, nil)) {
		return
	}
	if len(p.stack) >= confMaxIncludeDepth {
		p.addErr(seq, file, line, "Include", name, fmt.Errorf("includes nested more than %d deep", confMaxIncludeDepth))
		return
	}
	if p.open == nil {
		p.addErr(seq, file, line, "Include", name, errors.New("no way to open included files was given"))
		return
	}
	rc, err := p.open(path)
	if err != nil {
		p.addErr(seq, file, line, "Include", name, fmt.Errorf("open %s: %w", path, err))
		return
	}
	defer rc.Close()
	inc := newConfFile(path, rc)
	if p.cycle(seq, file, line, name, inc) {
		return
	}
	p.stack = append(p.stack, inc)
	p.parseReader(path, rc)
	p.stack = p.stack[:len(p.stack)-1]
}

// cycle reports, as an error of the Include line, whether inc is a file of
// the Include chain being read.
func (p *confParser) cycle(seq int, file string, line int, name string, inc confFile) bool {
	for _, s := range p.stack {
		if s.same(inc) {
			chain := make([]string, 0, len(p.stack)+1)
			for _, c := range p.stack {
				chain = append(chain, c.name)
			}
			chain = append(chain, inc.name)
			p.addErr(seq, file, line, "Include", name, fmt.Errorf("include cycle: %s", strings.Join(chain, " -> ")))
			return true
		}
	}
	return false
}

// partition handles a PartitionName line (pairs[0] is PartitionName=...).
func (p *confParser) partition(file string, line, seq int, pairs []confPair) {
	name := pairs[0].value
	if name == "" || strings.Contains(name, "=") {
		p.addErr(seq, file, line, pairs[0].key, name, errors.New("partition line without a name"))
		return
	}
	vals := make(map[string]confValue, len(pairs))
	for _, pr := range pairs[1:] {
		vals[strings.ToLower(pr.key)] = confValue{key: pr.key, value: pr.value, file: file, line: line, seq: seq}
	}
	if strings.EqualFold(name, "DEFAULT") {
		// Later DEFAULT lines override earlier ones key by key and keep the
		// rest (s_p_hashtbl_merge in Slurm's parse_config.c).
		for k, v := range vals {
			p.defaults[k] = v
		}
		return
	}
	get := func(key string) (confValue, bool) {
		if v, ok := vals[key]; ok {
			return v, true
		}
		v, ok := p.defaults[key]
		return v, ok
	}
	part := Partition{Name: name, PriorityJobFactor: 1, PriorityTier: 1, MaxTimeMin: -1, File: file, Line: line}
	if v, ok := get("tresbillingweights"); ok {
		part.TRESBillingWeights, part.WeightsFile, part.WeightsLine = v.value, v.file, v.line
	}
	if v, ok := get("priorityjobfactor"); ok {
		if n, err := confUint(v.value, 0xffff); err != nil {
			p.addErr(seq, file, line, v.key, v.value, err)
		} else {
			part.PriorityJobFactor = n
		}
	}
	if v, ok := get("prioritytier"); ok {
		if n, err := confUint(v.value, 0xffff); err != nil {
			p.addErr(seq, file, line, v.key, v.value, err)
		} else {
			part.PriorityTier = n
		}
	}
	// The deprecated Priority= sets both PriorityJobFactor and PriorityTier
	// and wins over them (read_config.c _parse_partitionname).
	if v, ok := get("priority"); ok {
		if n, err := confUint(v.value, 0xffff); err != nil {
			p.addErr(seq, file, line, v.key, v.value, err)
		} else {
			part.PriorityJobFactor, part.PriorityTier = n, n
		}
	}
	if v, ok := get("maxtime"); ok {
		m, err := TimeStrToMins(v.value)
		switch {
		case errors.Is(err, ErrUnlimited):
		case err != nil:
			p.addErr(seq, file, line, v.key, v.value, err)
		default:
			part.MaxTimeMin = m
		}
	}
	pn := confPartNodes{file: file, line: line, seq: seq}
	if v, ok := get("nodes"); ok {
		part.Nodes, pn.nodes, pn.key = v.value, v.value, v.key
	}
	if p.parts[name] {
		p.addErr(seq, file, line, pairs[0].key, name, errors.New("duplicate partition name"))
		return
	}
	p.parts[name] = true
	p.cfg.Partitions = append(p.cfg.Partitions, part)
	p.partNodes = append(p.partNodes, pn)
}

// apply interprets the collected top-level values into p.cfg.
func (p *confParser) apply() {
	c := p.cfg
	keys := make([]string, 0, len(p.values))
	for k := range p.values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := p.values[k]
		if err := p.applyOne(k, v); err != nil {
			p.addErr(v.seq, v.file, v.line, v.key, v.value, err)
			continue
		}
		c.Set[k] = true
	}
	// §2.2: slurmctld refuses a zero half-life unless a reset period is
	// given (an explicit NONE passes).
	if hl, ok := p.values["prioritydecayhalflife"]; ok && c.Set["prioritydecayhalflife"] &&
		c.DecayHalfLifeSec == 0 {
		if _, given := p.values["priorityusageresetperiod"]; !given {
			p.addErr(hl.seq, hl.file, hl.line, hl.key, hl.value,
				errors.New("PriorityDecayHalfLife=0 needs PriorityUsageResetPeriod set (slurmctld refuses this configuration)"))
		}
	}
}

// applyOne sets the Config field for one key; it returns the problem with
// the value, if any. Unknown keys are accepted and ignored.
func (p *confParser) applyOne(k string, v confValue) error {
	c := p.cfg
	if v.op != 0 {
		switch k {
		case "clustername", "prioritytype", "prioritydecayhalflife", "prioritycalcperiod",
			"priorityusageresetperiod", "priorityflags", "fairsharedampeningfactor",
			"priorityweightage", "priorityweightassoc", "priorityweightfairshare",
			"priorityweightjobsize", "priorityweightpartition", "priorityweightqos",
			"priorityweighttres", "prioritymaxage", "priorityfavorsmall",
			"accountingstorageenforce", "accountingstoragetres":
			return fmt.Errorf("operator %c= is not supported for this key", v.op)
		}
		return nil
	}
	val := v.value
	var err error
	switch k {
	case "clustername":
		c.ClusterName = strings.ToLower(val)
	case "prioritytype":
		if val != confPriorityMultifactor && val != confPriorityBasic {
			return fmt.Errorf("unknown priority plugin (want %s; Slurm's only other one is %s)",
				confPriorityMultifactor, confPriorityBasic)
		}
		c.PriorityType = val
	case "prioritydecayhalflife":
		var s int64
		if s, err = confTimeSecs(val); err == nil {
			c.DecayHalfLifeSec = s
		}
	case "prioritycalcperiod":
		var s int64
		if s, err = confTimeSecs(val); err == nil {
			if s < 60 {
				return errors.New("must be at least 1 minute")
			}
			c.CalcPeriodSec = s
		}
	case "prioritymaxage":
		var s int64
		if s, err = confTimeSecs(val); err == nil {
			c.PriorityMaxAgeSec = s
		}
	case "priorityusageresetperiod":
		u := strings.ToUpper(val)
		if !confResetPeriods[u] {
			return errors.New("unknown reset period (want NONE, NOW, DAILY, WEEKLY, MONTHLY, QUARTERLY or YEARLY)")
		}
		c.UsageResetPeriod = u
	case "priorityflags":
		c.PriorityFlags = confList(val, strings.ToUpper)
	case "fairsharedampeningfactor":
		var n int64
		if n, err = confUint(val, 0xffff); err == nil {
			if n == 0 {
				return errors.New("must be at least 1")
			}
			c.FairShareDampeningFactor = n
		}
	case "priorityweightage":
		err = confSetUint32(&c.PriorityWeightAge, val)
	case "priorityweightassoc":
		err = confSetUint32(&c.PriorityWeightAssoc, val)
	case "priorityweightfairshare":
		err = confSetUint32(&c.PriorityWeightFairshare, val)
	case "priorityweightjobsize":
		err = confSetUint32(&c.PriorityWeightJobSize, val)
	case "priorityweightpartition":
		err = confSetUint32(&c.PriorityWeightPartition, val)
	case "priorityweightqos":
		err = confSetUint32(&c.PriorityWeightQOS, val)
	case "priorityweighttres":
		c.PriorityWeightTRES = val
	case "priorityfavorsmall":
		var b bool
		if b, err = confBool(val); err == nil {
			c.PriorityFavorSmall = b
		}
	case "accountingstorageenforce":
		items := confList(val, strings.ToLower)
		for _, it := range items {
			if !confEnforceItems[it] {
				return fmt.Errorf("unknown item %q (want associations, limits, qos, safe, wckeys, all, nojobs or nosteps)", it)
			}
		}
		c.AccountingStorageEnforce = items
	case "accountingstoragetres":
		c.AccountingStorageTRES = confList(val, nil)
	case "slurmctldlogfile":
		c.SlurmctldLogFile = val
	case "debugflags":
		c.DebugFlags = confList(val, nil)
	}
	return err
}

// confTimeSecs reads a slurm.conf time string (minutes, §2.2) as seconds.
func confTimeSecs(s string) (int64, error) {
	m, err := TimeStrToMins(s)
	if errors.Is(err, ErrUnlimited) {
		return 0, errors.New("an unlimited time is not usable here")
	}
	if err != nil {
		return 0, err
	}
	return m * 60, nil
}

// confSetUint32 stores a uint32 setting (Slurm's PriorityWeight* type).
func confSetUint32(dst *int64, s string) error {
	n, err := confUint(s, 0xffffffff)
	if err == nil {
		*dst = n
	}
	return err
}

// confUint parses a non-negative decimal integer no larger than max.
func confUint(s string, max int64) (int64, error) {
	if s == "" {
		return 0, errors.New("empty value, want an integer")
	}
	if s[0] == '-' {
		return 0, errors.New("negative value, want an integer >= 0")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, errors.New("not an integer")
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n > max {
		return 0, fmt.Errorf("out of range (max %d)", max)
	}
	return n, nil
}

// confBool parses a slurm.conf boolean the way Slurm's s_p_handle_boolean
// does: YES/UP/TRUE/1 or NO/DOWN/FALSE/0, any case.
func confBool(s string) (bool, error) {
	switch strings.ToLower(s) {
	case "yes", "up", "true", "1":
		return true, nil
	case "no", "down", "false", "0":
		return false, nil
	}
	return false, errors.New("not a boolean (want YES or NO)")
}

// confList splits a comma-separated value, trims the items, drops empty
// ones and maps each through conv (nil keeps them as written).
func confList(s string, conv func(string) string) []string {
	var out []string
	for _, it := range strings.Split(s, ",") {
		it = strings.TrimSpace(it)
		if it == "" {
			continue
		}
		if conv != nil {
			it = conv(it)
		}
		out = append(out, it)
	}
	return out
}

// confPair is one Key=Value pair found on a line.
type confPair struct {
	key      string
	value    string
	op       byte
	quoted   bool
	valStart int // offset of the value (after '=' and spaces)
	end      int // offset just after the value
}

// confScanPair reads the Key=Value pair starting at or after offset start,
// following the pattern of Slurm's keyvalue regex (parse_config.c): a key of
// letters, digits, '_' and '.', optional spaces, an optional operator
// (+ - * /) before '=', optional spaces, then a double-quoted value (which
// must be followed by a space or the end of the line) or a run of non-space
// characters. When ok is false, why says what is missing and pair.key holds
// the key if one was read.
func confScanPair(s string, start int) (pair confPair, ok bool, why string) {
	i := start
	for i < len(s) && confIsSpace(s[i]) {
		i++
	}
	k := i
	for i < len(s) && confIsKeyChar(s[i]) {
		i++
	}
	if i == k {
		return pair, false, "no key"
	}
	pair.key = s[k:i]
	for i < len(s) && confIsSpace(s[i]) {
		i++
	}
	if i < len(s) && strings.IndexByte("+-*/", s[i]) >= 0 && i+1 < len(s) && s[i+1] == '=' {
		pair.op = s[i]
		i++
	}
	if i >= len(s) || s[i] != '=' {
		return pair, false, "no '=' after the key"
	}
	i++
	for i < len(s) && confIsSpace(s[i]) {
		i++
	}
	if i >= len(s) {
		return pair, false, confMissingValue
	}
	pair.valStart = i
	if s[i] == '"' {
		if j := strings.IndexByte(s[i+1:], '"'); j >= 0 {
			end := i + 1 + j
			if end+1 == len(s) || confIsSpace(s[end+1]) {
				pair.value = s[i+1 : end]
				pair.quoted = true
				pair.end = end + 1
				return pair, true, ""
			}
		}
	}
	j := i
	for j < len(s) && !confIsSpace(s[j]) {
		j++
	}
	pair.value = s[i:j]
	pair.end = j
	return pair, true, ""
}

// confIsSpace reports whether c is C isspace() white space.
func confIsSpace(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\v', '\f', '\r':
		return true
	}
	return false
}

// confIsKeyChar reports whether c may appear in a slurm.conf key.
func confIsKeyChar(c byte) bool {
	return c == '_' || c == '.' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

// confStripComment cuts s at the first '#' not escaped by an odd number of
// backslashes (_strip_comments in parse_config.c). A '#' inside double
// quotes starts a comment too, as in Slurm.
func confStripComment(s string) string {
	bs := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '#':
			if bs%2 == 0 {
				return s[:i]
			}
			bs = 0
		case '\\':
			bs++
		default:
			bs = 0
		}
	}
	return s
}

// confContinuation reports whether s ends in an odd number of backslashes
// (optionally followed by white space), and returns s without the last
// backslash and what follows it (_strip_continuation in parse_config.c).
func confContinuation(s string) (string, bool) {
	end := len(s)
	for end > 0 && confIsSpace(s[end-1]) {
		end--
	}
	bs := 0
	for end-bs > 0 && s[end-bs-1] == '\\' {
		bs++
	}
	if bs%2 == 0 {
		return s, false
	}
	return s[:end-1], true
}

// confStripEscapes drops each backslash and keeps the character after it,
// so "\#" is '#' and "\\" is '\' (_strip_escapes in parse_config.c).
func confStripEscapes(s string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			if i >= len(s) {
				break
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
