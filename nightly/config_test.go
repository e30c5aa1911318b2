package nightly

import (
	"strings"
	"testing"
	"time"
)

func TestParseConfig(t *testing.T) {
	t.Parallel()
	c, err := Parse("f.toml", []byte(`
history = "/var/lib/fairledger/history"
spool = "/var/spool/fairledger"
keep_days = 7

[[cluster]]
name = "hpc"
slurm_conf = "/etc/slurm/slurm.conf"
first_day = "2025-01-01"
timezone = "UTC"
overlap = "2d"
max_query_range = "1d12h"

[cluster.run]
snapshot-every = "8h"
keep-checkpoints = 90
`))
	if err != nil {
		t.Fatal(err)
	}
	cl := c.Clusters[0]
	if *c.KeepDays != 7 || c.Sacct != "sacct" || c.Sacctmgr != "sacctmgr" {
		t.Errorf("defaults: keep_days %d, sacct %q, sacctmgr %q", *c.KeepDays, c.Sacct, c.Sacctmgr)
	}
	if cl.Overlap.Duration != 48*time.Hour || cl.MaxQueryRange.Duration != 36*time.Hour || cl.SacctTimeout.Duration != 15*time.Minute {
		t.Errorf("durations: overlap %s, max_query_range %s, sacct_timeout %s", cl.Overlap, cl.MaxQueryRange, cl.SacctTimeout)
	}
	if cl.WindowEnd != WindowMidnight || !*cl.Priority || cl.SlurmctldLog != "auto" || cl.SlurmVersion != "auto" {
		t.Errorf("defaults: window_end %q, priority %v, slurmctld_log %q, slurm_version %q", cl.WindowEnd, *cl.Priority, cl.SlurmctldLog, cl.SlurmVersion)
	}
	if got, want := strings.Join(cl.RunFlags(), " "), "--keep-checkpoints=90 --snapshot-every=8h"; got != want {
		t.Errorf("RunFlags = %s, want %s", got, want)
	}
}

// Every problem of a file is reported at once, each with the file and key.
func TestParseConfigErrors(t *testing.T) {
	t.Parallel()
	_, err := Parse("f.toml", []byte(`
spool = "/s"
histroy = "/h"
metrics_file = "-"

[[cluster]]
name = "a"
window_end = "noon"
timezone = "Mars/Olympus"

[cluster.run]
to = "2025-01-01"

[[cluster]]
name = "a"
slurm_conf = "/x"
`))
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		"config f.toml: history: required",
		"config f.toml: unknown key histroy",
		`config f.toml: metrics_file "-": want a file's path`,
		`[[cluster]] "a": slurm_conf: required`,
		`[[cluster]] "a": window_end "noon": want "midnight" or "now"`,
		`[[cluster]] "a": timezone "Mars/Olympus"`,
		`[[cluster]] "a": run.to: set by the nightly job itself (use window_end, or nightly --to)`,
		`[[cluster]] "a": the same name as [[cluster]] #1`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	// A bad duration stops the TOML decoder itself, with its line.
	_, err = Parse("f.toml", []byte("history=\"/h\"\nspool=\"/s\"\n[[cluster]]\nslurm_conf=\"/x\"\noverlap=\"two days\"\n"))
	if err == nil || !strings.Contains(err.Error(), `line 5 (last key "cluster.overlap"): duration "two days"`) {
		t.Errorf("bad overlap: %v", err)
	}
}

func TestParseDuration(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]time.Duration{"36h": 36 * time.Hour, "2d": 48 * time.Hour, "1d12h": 36 * time.Hour, "90m": 90 * time.Minute} {
		if got, err := parseDuration(s); err != nil || got != want {
			t.Errorf("parseDuration(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "d", "-1d", "2 days", "-5h"} {
		if _, err := parseDuration(s); err == nil {
			t.Errorf("parseDuration(%q): no error", s)
		}
	}
}
