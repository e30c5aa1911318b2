package ingest

import (
	"errors"
	"reflect"
	"testing"
)

// TestParseSubmitLine reads command lines as sbatch, srun and salloc read
// them (getopt_long with '+': options end at the script or command). The
// expected options are worked out from the commands' option table and
// arg_set_nice (src/common/slurm_opt.c), not from this parser.
func TestParseSubmitLine(t *testing.T) {
	t.Parallel()
	one := func(o SubmitOptions) []SubmitOptions { return []SubmitOptions{o} }
	tests := []struct {
		name, line string
		prog       string
		want       []SubmitOptions
	}{
		{"no options", "sbatch job.sh", "sbatch", one(SubmitOptions{})},
		{"bare --nice is 100", "sbatch --nice job.sh", "sbatch", one(SubmitOptions{Nice: 100})},
		{"--nice=N", "sbatch --nice=250 job.sh", "sbatch", one(SubmitOptions{Nice: 250})},
		{"negative nice", "sbatch --nice=-300 job.sh", "sbatch", one(SubmitOptions{Nice: -300})},
		// --nice takes an optional argument: "--nice 5" is a bare --nice
		// and 5 is the script, so the -p after it is the script's.
		{"--nice N is a bare --nice", "sbatch --nice 5 -p gpu job.sh", "sbatch", one(SubmitOptions{Nice: 100})},
		{"srun nice", "srun --nice=10 hostname", "srun", one(SubmitOptions{Nice: 10})},
		{"salloc bare nice", "salloc --nice -N2", "salloc", one(SubmitOptions{Nice: 100})},
		{"largest nice", "sbatch --nice=2147483645 x.sh", "sbatch", one(SubmitOptions{Nice: 2147483645})},
		{"smallest nice", "sbatch --nice=-2147483645 x.sh", "sbatch", one(SubmitOptions{Nice: -2147483645})},
		// strtoll: reading stops at the first non-digit; no digits is 0.
		{"nice digits then text", "sbatch --nice=12abc x.sh", "sbatch", one(SubmitOptions{Nice: 12})},
		{"nice without digits", "sbatch --nice=abc x.sh", "sbatch", one(SubmitOptions{Nice: 0})},
		{"nice empty value", "sbatch --nice= x.sh", "sbatch", one(SubmitOptions{Nice: 0})},
		{"nice plus sign", "sbatch --nice=+7 x.sh", "sbatch", one(SubmitOptions{Nice: 7})},
		{"last nice wins", "sbatch --nice=5 --nice x.sh", "sbatch", one(SubmitOptions{Nice: 100})},

		{"-p a,b", "sbatch -p a,b job.sh", "sbatch", one(SubmitOptions{Partitions: "a,b"})},
		{"-pa,b", "sbatch -pa,b job.sh", "sbatch", one(SubmitOptions{Partitions: "a,b"})},
		{"--partition=a,b", "sbatch --partition=a,b job.sh", "sbatch", one(SubmitOptions{Partitions: "a,b"})},
		{"--partition a,b", "sbatch --partition a,b job.sh", "sbatch", one(SubmitOptions{Partitions: "a,b"})},
		{"abbreviated --part", "sbatch --part=gpu job.sh", "sbatch", one(SubmitOptions{Partitions: "gpu"})},
		{"last partition wins", "srun -p a -p b hostname", "srun", one(SubmitOptions{Partitions: "b"})},
		// Two spaces: an empty argument, -p's.
		{"empty partition argument", "sbatch -p  job.sh", "sbatch", one(SubmitOptions{})},

		{"--begin=", "sbatch --begin=now+1hour job.sh", "sbatch", one(SubmitOptions{Begin: true})},
		{"-b time", "sbatch -b 16:00 -p x job.sh", "sbatch", one(SubmitOptions{Begin: true, Partitions: "x"})},
		{"--begin time", "salloc --begin 2024-01-01T10:00:00 -N1", "salloc", one(SubmitOptions{Begin: true})},
		{"--hold", "sbatch --hold job.sh", "sbatch", one(SubmitOptions{Hold: true})},
		{"-H", "srun -H hostname", "srun", one(SubmitOptions{Hold: true})},
		{"-Hp gpu: hold, then -p with the next word", "sbatch -Hp gpu job.sh", "sbatch", one(SubmitOptions{Hold: true, Partitions: "gpu"})},
		// -k (--no-kill) takes an optional argument: in "-kH" the H is
		// its argument, not --hold; in "-Hk" both are options.
		{"-kH is no-kill=H", "sbatch -kH job.sh", "sbatch", one(SubmitOptions{})},
		{"-Hk is hold and no-kill", "sbatch -Hk job.sh", "sbatch", one(SubmitOptions{Hold: true})},
		// The array throttle: the N after the first '%' of --array
		// (_create_job_array, atoi), kept when above 0.
		{"--array=0-5%2", "sbatch --array=0-5%2 --wrap sleep 30", "sbatch", one(SubmitOptions{ArrayThrottle: 2})},
		{"-a 1,3,5%10", "sbatch -a 1,3,5%10 job.sh", "sbatch", one(SubmitOptions{ArrayThrottle: 10})},
		{"--array without %", "sbatch --array=0-9 job.sh", "sbatch", one(SubmitOptions{})},
		{"--array %0 is no throttle", "sbatch --array=0-9%0 job.sh", "sbatch", one(SubmitOptions{})},
		// -W takes no argument in sbatch (--wait) but one in srun (--wait=sec).
		{"sbatch -W", "sbatch -W -p a job.sh", "sbatch", one(SubmitOptions{Partitions: "a"})},
		{"srun -W sec", "srun -W 5 -p a hostname", "srun", one(SubmitOptions{Partitions: "a"})},
		{"path of the command", "/usr/bin/sbatch -p x job.sh", "sbatch", one(SubmitOptions{Partitions: "x"})},

		{"command arguments are not options", "srun -p a python train.py -p 4 --nice=9", "srun", one(SubmitOptions{Partitions: "a"})},
		{"-- ends the options", "srun -p a -- -p b", "srun", one(SubmitOptions{Partitions: "a"})},
		// sacct records argv without quotes: --wrap="python x.py ..." reads
		// as --wrap=python, then x.py, the end of the options.
		{"a quoted value with spaces", "sbatch --wrap=python x.py --nice 3 -p gpu", "sbatch", one(SubmitOptions{})},

		{"het job", "sbatch -p a --nice=5 : -p b --hold job.sh", "sbatch", []SubmitOptions{{Nice: 5, Partitions: "a"}, {Partitions: "b", Hold: true}}},
		{"srun het job, a command per component", "srun -p a hostname : -p b --nice=3 hostname", "srun", []SubmitOptions{{Partitions: "a"}, {Partitions: "b", Nice: 3}}},
		{"salloc het job", "salloc -N1 : --nice -N2", "salloc", []SubmitOptions{{}, {Nice: 100}}},

		// From ubccr-slurm-simulator/slurm_sim_tools,
		// tests/slurmanalyser/slurmparser/test_sacctlog/sacct_dump2110.log
		// (a --wrap command that holds '|'), and .../sacct_submitline_multiline.log.
		{"real sbatch --wrap", "sbatch -M cluster001 -p partition001 --qos=qos001 --time=24:00:00 --nodes=1 --ntasks=1 --mem=4000 -J qlogin --wrap=env | grep SLURM | sed 's/^/export /g'; sleep 24h",
			"sbatch", one(SubmitOptions{Partitions: "partition001"})},
		{"real srun", "srun --nodes=16 --ntasks-per-node=1 --ntasks=16 bash -c if [ ! -d \"/scratch/9067954\" ]\nthen mkdir x\nfi",
			"srun", one(SubmitOptions{})},
		// From NordicHPC/slurm2sql, tests/test-data1.csv.
		{"real srun without options", "srun test_submit_line", "srun", one(SubmitOptions{})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSubmitLine(tt.line)
			if err != nil {
				t.Fatalf("ParseSubmitLine(%q) error = %v", tt.line, err)
			}
			if got.Program != tt.prog || !reflect.DeepEqual(got.Components, tt.want) {
				t.Errorf("ParseSubmitLine(%q) = %s %+v, want %s %+v", tt.line, got.Program, got.Components, tt.prog, tt.want)
			}
		})
	}
}

func TestParseSubmitLineErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, line string
		unreadable bool // wraps ErrUnreadableSubmitLine
	}{
		// From NordicHPC/slurm2sql, tests/test-data1.csv.
		{"not a submit command", "test_submit_line2", true},
		{"empty", "", true},
		{"unknown long option", "sbatch --frobnicate job.sh", true},
		{"unknown short option", "sbatch -% job.sh", true},
		{"srun-only option in sbatch", "sbatch --pty job.sh", true},
		{"argument to a flag", "sbatch --hold=yes job.sh", true},
		{"missing argument", "sbatch -p", true},
		{"missing long argument", "salloc --partition", true},
		{"ambiguous abbreviation", "sbatch --n=3 job.sh", true},
		{"nice too large", "sbatch --nice=2147483646 job.sh", false},
		{"nice too small", "srun --nice=-2147483646 hostname", false},
		{"nice overflows", "sbatch --nice=99999999999999999999 job.sh", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseSubmitLine(tt.line)
			if err == nil {
				t.Fatalf("ParseSubmitLine(%q) succeeded, want an error", tt.line)
			}
			if got := errors.Is(err, ErrUnreadableSubmitLine); got != tt.unreadable {
				t.Errorf("ParseSubmitLine(%q) error = %v; unreadable %v, want %v", tt.line, err, got, tt.unreadable)
			}
		})
	}
}
