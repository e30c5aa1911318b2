package ingest

import "testing"

// FuzzParseSubmitLine checks that any text reads without panicking, and
// that a line read has a known command, at least one component and nice
// values within the commands' range.
// Run: go test -run '^$' -fuzz FuzzParseSubmitLine -fuzztime 30s ./ingest/
func FuzzParseSubmitLine(f *testing.F) {
	for _, s := range []string{
		"sbatch --nice=50 -p gpu,cpu job.sh",
		"srun -p a hostname : -p b --nice=3 hostname",
		"salloc -N1 : --nice -N2",
		"sbatch -Hp gpu --begin=now+1hour -- x.sh",
		"sbatch -kH --part=x -W job.sh",
		"sbatch -M cluster001 -p partition001 --qos=qos001 -J qlogin --wrap=env | grep SLURM | sed 's/^/export /g'; sleep 24h",
		"/usr/bin/srun --nice=-2147483645 -p  x",
		"sbatch --nice=2147483646",
		"test_submit_line2",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		s, err := ParseSubmitLine(line)
		if err != nil {
			if len(s.Components) != 0 || s.Program != "" {
				t.Fatalf("error %v with a result %+v", err, s)
			}
			return
		}
		switch s.Program {
		case "sbatch", "srun", "salloc":
		default:
			t.Fatalf("program %q", s.Program)
		}
		if len(s.Components) == 0 {
			t.Fatal("no component")
		}
		for _, c := range s.Components {
			if c.Nice > maxNice || c.Nice < -maxNice {
				t.Fatalf("nice %d out of range", c.Nice)
			}
		}
	})
}
