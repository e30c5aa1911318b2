package ingest

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// Submission is what a job's SubmitLine says about the options that move
// its priority or delay its eligibility: --nice, -p/--partition, -b/--begin
// and -H/--hold, read the way sbatch, srun and salloc read their command
// line (getopt_long in src/common/slurm_opt.c and each command's opt.c).
//
// A SubmitLine is the command's argv joined with single spaces
// (slurm_option_get_argv_str in src/common/slurm_opt.c), with no quoting:
// `sbatch -J "a b" x.sh` is recorded as `sbatch -J a b x.sh`. ParseSubmitLine
// splits it at every space, which restores argv exactly unless an argument
// held a space; then the word after the space reads as the script (or
// command), and the options after it are not seen. Options end at the
// first word that is no option (the script or command), as with the '+'
// getopt_long of the three commands, or at "--".
//
// Only the command line is recorded: #SBATCH lines of a batch script,
// SBATCH_*/SALLOC_*/SLURM_* environment variables, a job_submit or
// cli_filter plugin and a later `scontrol update` may have set the same
// things, and no record says so.
type Submission struct {
	// Program is the command: "sbatch", "srun" or "salloc" (the base name of
	// the first word).
	Program string
	// Components holds the options of each component of a heterogeneous job
	// (the command line's parts between ":" words), in order; a job that is
	// not heterogeneous has one. Component k is the job `<id>+k`.
	Components []SubmitOptions
}

// SubmitOptions are the priority-related options of one job (component).
type SubmitOptions struct {
	// Nice is the --nice value: 0 without the option, 100 for a bare
	// --nice (arg_set_nice), else the value as strtoll reads it (leading
	// blanks and a sign allowed, reading stops at the first non-digit, no
	// digits at all is 0). Slurm adds NICE_OFFSET (2^31) to it for the job
	// record and subtracts it again in the priority (priority_multifactor.c),
	// so this is the amount the job's priority is lowered by (raised, when
	// negative).
	Nice int64
	// Partitions is the -p/--partition value as given: one partition or a
	// comma-separated list ("a,b"), "" when the option is not given (the
	// job then went to the default partition, or to the one the script or
	// the environment named).
	Partitions string
	// Begin reports whether -b/--begin was given (its time is relative to
	// the submission in many spellings; sacct's Eligible is the moment that
	// resulted).
	Begin bool
	// Hold reports whether -H/--hold was given: the job was submitted held
	// (priority 0) until released.
	Hold bool
	// ArrayThrottle is the N of -a/--array's "%N" suffix, the most tasks
	// of the array that run at once (array_recs->max_run_tasks, which
	// slurmctld's _create_job_array reads with atoi after the first '%'
	// and keeps when above 0), 0 without the option or the suffix.
	ArrayThrottle int64
}

// ErrUnreadableSubmitLine marks a SubmitLine ParseSubmitLine cannot read:
// one whose first word is not sbatch, srun or salloc (jobs submitted through
// slurmrestd, a wrapper, or an older record), or one holding an option none
// of the releases it knows has. The options it would give are unknown, not
// absent.
var ErrUnreadableSubmitLine = errors.New("SubmitLine not readable")

// maxNice is the largest |--nice| the commands accept: NICE_OFFSET - 3
// (arg_set_nice in src/common/slurm_opt.c).
const maxNice = 1<<31 - 3

// submitProg is a set of the commands an option belongs to.
type submitProg uint8

const (
	progSbatch submitProg = 1 << iota
	progSrun
	progSalloc
	progAll = progSbatch | progSrun | progSalloc
)

// submitArg says how an option takes its argument (getopt_long's has_arg).
type submitArg uint8

const (
	argNone submitArg = iota
	argRequired
	argOptional
)

// submitOption is one command-line option (see submitOptions).
type submitOption struct {
	name  string
	short byte // 0: none
	arg   submitArg
	progs submitProg
}

// ParseSubmitLine reads the options of a SubmitLine (see Submission). It
// returns an error wrapping ErrUnreadableSubmitLine when the line cannot be
// read, and another error when an option this reader interprets holds a
// value the command refuses (a --nice beyond ±2147483645): such a line
// cannot have submitted a job.
func ParseSubmitLine(line string) (Submission, error) {
	return parseSubmitLine(line, nil)
}

// parseSubmitLine is ParseSubmitLine appending the components to comps,
// so that a caller reading many lines reuses one slice.
func parseSubmitLine(line string, comps []SubmitOptions) (Submission, error) {
	args := submitArgs{rest: line}
	prog, _ := args.next()
	cmd := prog
	if i := strings.LastIndexByte(prog, '/'); i >= 0 {
		prog = prog[i+1:]
	}
	var tbl *submitTable
	switch prog {
	case "sbatch":
		tbl = &submitTables[0]
	case "srun":
		tbl = &submitTables[1]
	case "salloc":
		tbl = &submitTables[2]
	default:
		return Submission{}, fmt.Errorf("%w: %q is not sbatch, srun or salloc", ErrUnreadableSubmitLine, cmd)
	}
	s := Submission{Program: prog, Components: comps[:0]}
	var cur SubmitOptions
	for {
		a, ok := args.next()
		if !ok {
			break
		}
		switch {
		case a == ":":
			s.Components = append(s.Components, cur)
			cur = SubmitOptions{}
			continue
		case a == "--" || len(a) < 2 || a[0] != '-':
			// The end of the options: the script or command (and, after
			// "--", what follows). srun starts each component's options
			// after the previous component's command; sbatch and salloc
			// take one script or command, at the end.
			if tbl.prog != progSrun {
				args.rest, args.done = "", true
				continue
			}
			for {
				if w, ok := args.next(); !ok || w == ":" {
					if ok {
						s.Components = append(s.Components, cur)
						cur = SubmitOptions{}
					}
					break
				}
			}
			continue
		}
		var err error
		if a[1] == '-' {
			err = cur.long(tbl, a[2:], &args)
		} else {
			err = cur.shorts(tbl, a[1:], &args)
		}
		if err != nil {
			return Submission{}, err
		}
	}
	s.Components = append(s.Components, cur)
	return s, nil
}

// submitArgs hands out the words of a SubmitLine, split at every single
// space (an empty word between two spaces is an empty argument).
type submitArgs struct {
	rest string
	done bool
}

// next returns the next word; ok is false after the last one.
func (a *submitArgs) next() (w string, ok bool) {
	if a.done {
		return "", false
	}
	if i := strings.IndexByte(a.rest, ' '); i >= 0 {
		w, a.rest = a.rest[:i], a.rest[i+1:]
		return w, true
	}
	w, a.rest, a.done = a.rest, "", true
	return w, true
}

// long applies the long option word "--"+w; args is after it.
func (o *SubmitOptions) long(tbl *submitTable, w string, args *submitArgs) error {
	name, val, hasVal := strings.Cut(w, "=")
	opt, err := tbl.findLong(name)
	if err != nil {
		return err
	}
	switch opt.arg {
	case argNone:
		if hasVal {
			return fmt.Errorf("%w: option --%s takes no argument", ErrUnreadableSubmitLine, opt.name)
		}
	case argRequired:
		if !hasVal {
			if val, hasVal = args.next(); !hasVal {
				return fmt.Errorf("%w: option --%s lacks its argument", ErrUnreadableSubmitLine, opt.name)
			}
		}
	}
	return o.apply(opt, val, hasVal)
}

// shorts applies a word of short options ("-H", "-Hp", "-pa,b"); w is the
// word without its '-', args is after it.
func (o *SubmitOptions) shorts(tbl *submitTable, w string, args *submitArgs) error {
	for j := 0; j < len(w); j++ {
		opt := tbl.short[w[j]]
		if opt == nil {
			return fmt.Errorf("%w: unknown option -%c", ErrUnreadableSubmitLine, w[j])
		}
		if opt.arg == argNone {
			if err := o.apply(opt, "", false); err != nil {
				return err
			}
			continue
		}
		// The rest of the word is the argument; a required one without
		// it is the next word.
		val, hasVal := w[j+1:], j+1 < len(w)
		if !hasVal && opt.arg == argRequired {
			if val, hasVal = args.next(); !hasVal {
				return fmt.Errorf("%w: option -%c lacks its argument", ErrUnreadableSubmitLine, opt.short)
			}
		}
		return o.apply(opt, val, hasVal)
	}
	return nil
}

// apply records the options Submission reads; a later one overrides an
// earlier one, as in the commands.
func (o *SubmitOptions) apply(opt *submitOption, val string, hasVal bool) error {
	switch opt.name {
	case "nice":
		n := int64(100)
		if hasVal {
			var ok bool
			if n, ok = strtoll(val); !ok || n > maxNice || n < -maxNice {
				return fmt.Errorf("--nice=%s: out of range (at most ±%d)", val, maxNice)
			}
		}
		o.Nice = n
	case "partition":
		o.Partitions = val
	case "begin":
		o.Begin = true
	case "hold":
		o.Hold = true
	case "array":
		o.ArrayThrottle = 0
		if _, limit, ok := strings.Cut(val, "%"); ok {
			if n, ok := strtoll(limit); ok && n > 0 && n <= math.MaxInt32 {
				o.ArrayThrottle = n
			}
		}
	}
	return nil
}

// strtoll reads s as C's strtoll(s, NULL, 10) does: leading white space,
// an optional sign, then digits up to the first other byte; no digits read
// as 0. ok is false when the value overflows int64 (strtoll then clamps,
// which every caller here refuses anyway).
func strtoll(s string) (int64, bool) {
	i := 0
	for i < len(s) && confIsSpace(s[i]) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	var n int64
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		if n > (1<<63-1-int64(s[i]-'0'))/10 {
			return 0, false
		}
		n = n*10 + int64(s[i]-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// submitTable is the option table of one command, indexed.
type submitTable struct {
	prog  submitProg
	long  map[string]*submitOption
	short [256]*submitOption
}

// submitTables index submitOptions for sbatch, srun and salloc; they are
// built once and only read.
var submitTables = func() (t [3]submitTable) {
	for k, prog := range []submitProg{progSbatch, progSrun, progSalloc} {
		t[k] = submitTable{prog: prog, long: make(map[string]*submitOption)}
		for i := range submitOptions {
			o := &submitOptions[i]
			if o.progs&prog == 0 {
				continue
			}
			t[k].long[o.name] = o
			if o.short != 0 {
				t[k].short[o.short] = o
			}
		}
	}
	return t
}()

// findLong finds the option "--"+name of the command: an exact name, or, as
// getopt_long allows, an abbreviation that only one option starts with.
// Abbreviations shared by options that read alike here (the same argument
// kind, none of them one Submission reads, or all the same one) are taken
// too: getopt_long refuses some of them, and then no job was submitted with
// them.
func (t *submitTable) findLong(name string) (*submitOption, error) {
	if o := t.long[name]; o != nil {
		return o, nil
	}
	var found *submitOption
	for i := range submitOptions {
		o := &submitOptions[i]
		if o.progs&t.prog == 0 || !strings.HasPrefix(o.name, name) {
			continue
		}
		switch {
		case found == nil:
			found = o
		case found.arg != o.arg || (submitReads(found.name) || submitReads(o.name)) && found.name != o.name:
			return nil, fmt.Errorf("%w: ambiguous option --%s", ErrUnreadableSubmitLine, name)
		}
	}
	if found == nil || name == "" {
		return nil, fmt.Errorf("%w: unknown option --%s", ErrUnreadableSubmitLine, name)
	}
	return found, nil
}

// submitReads reports whether Submission records the option.
func submitReads(name string) bool {
	switch name {
	case "nice", "partition", "begin", "hold":
		return true
	}
	return false
}
