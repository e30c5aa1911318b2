package ingest

import (
	"errors"
	"fmt"
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
	args := strings.Split(line, " ")
	prog := args[0]
	if i := strings.LastIndexByte(prog, '/'); i >= 0 {
		prog = prog[i+1:]
	}
	var mask submitProg
	switch prog {
	case "sbatch":
		mask = progSbatch
	case "srun":
		mask = progSrun
	case "salloc":
		mask = progSalloc
	default:
		return Submission{}, fmt.Errorf("%w: %q is not sbatch, srun or salloc", ErrUnreadableSubmitLine, args[0])
	}
	s := Submission{Program: prog}
	var cur SubmitOptions
	i := 1
	for i < len(args) {
		a := args[i]
		i++
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
			if mask != progSrun {
				i = len(args)
				continue
			}
			for i < len(args) && args[i] != ":" {
				i++
			}
			continue
		}
		var err error
		if a[1] == '-' {
			i, err = cur.long(mask, a[2:], args, i)
		} else {
			i, err = cur.shorts(mask, a[1:], args, i)
		}
		if err != nil {
			return Submission{}, err
		}
	}
	s.Components = append(s.Components, cur)
	return s, nil
}

// long applies the long option word "--"+w; next is the index of the word
// after it, and the index after the option's argument is returned.
func (o *SubmitOptions) long(mask submitProg, w string, args []string, next int) (int, error) {
	name, val, hasVal := strings.Cut(w, "=")
	opt, err := findLongOption(mask, name)
	if err != nil {
		return next, err
	}
	switch opt.arg {
	case argNone:
		if hasVal {
			return next, fmt.Errorf("%w: option --%s takes no argument", ErrUnreadableSubmitLine, opt.name)
		}
	case argRequired:
		if !hasVal {
			if next >= len(args) {
				return next, fmt.Errorf("%w: option --%s lacks its argument", ErrUnreadableSubmitLine, opt.name)
			}
			val, hasVal = args[next], true
			next++
		}
	}
	return next, o.apply(opt, val, hasVal)
}

// shorts applies a word of short options ("-H", "-Hp", "-pa,b"); w is the
// word without its '-'.
func (o *SubmitOptions) shorts(mask submitProg, w string, args []string, next int) (int, error) {
	for j := 0; j < len(w); j++ {
		opt, ok := findShortOption(mask, w[j])
		if !ok {
			return next, fmt.Errorf("%w: unknown option -%c", ErrUnreadableSubmitLine, w[j])
		}
		if opt.arg == argNone {
			if err := o.apply(opt, "", false); err != nil {
				return next, err
			}
			continue
		}
		// The rest of the word is the argument; a required one without
		// it is the next word.
		val, hasVal := w[j+1:], j+1 < len(w)
		if !hasVal && opt.arg == argRequired {
			if next >= len(args) {
				return next, fmt.Errorf("%w: option -%c lacks its argument", ErrUnreadableSubmitLine, opt.short)
			}
			val, hasVal = args[next], true
			next++
		}
		return next, o.apply(opt, val, hasVal)
	}
	return next, nil
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

// findLongOption finds the option "--"+name of the commands in mask: an
// exact name, or, as getopt_long allows, an abbreviation that only one
// option starts with. Abbreviations shared by options that read alike here
// (the same argument kind, none of them one Submission reads, or all the
// same one) are taken too: getopt_long refuses some of them, and then no
// job was submitted with them.
func findLongOption(mask submitProg, name string) (*submitOption, error) {
	for i := range submitOptions {
		if o := &submitOptions[i]; o.progs&mask != 0 && o.name == name {
			return o, nil
		}
	}
	var found *submitOption
	for i := range submitOptions {
		o := &submitOptions[i]
		if o.progs&mask == 0 || !strings.HasPrefix(o.name, name) {
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

// findShortOption finds the option -c of the commands in mask.
func findShortOption(mask submitProg, c byte) (*submitOption, bool) {
	for i := range submitOptions {
		if o := &submitOptions[i]; o.short == c && o.progs&mask != 0 {
			return o, true
		}
	}
	return nil, false
}
