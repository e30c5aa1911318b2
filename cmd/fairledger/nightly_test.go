package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fairledger/fairledger/nightly"
)

// The example configuration in dist/ is a valid configuration whose [run]
// flags are fairledger run's.
func TestExampleConfig(t *testing.T) {
	t.Parallel()
	cfg, err := nightly.Load(filepath.Join("..", "..", "dist", "fairledger.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := checkRunFlags(cfg); err != nil {
		t.Fatal(err)
	}
	if len(cfg.Clusters) != 1 || cfg.Clusters[0].Name != "hpc" || cfg.History != "/var/lib/fairledger/history" {
		t.Errorf("example config: %d clusters, history %q", len(cfg.Clusters), cfg.History)
	}
}

// TestSystemdUnits checks the unit files of dist/systemd with
// systemd-analyze verify (skipped where it is missing, unless
// FAIRLEDGER_REQUIRE_SLURM=1, as in CI's live Slurm step), with ExecStart's
// binary replaced by this test's own executable.
func TestSystemdUnits(t *testing.T) {
	sa, err := exec.LookPath("systemd-analyze")
	if err != nil {
		if os.Getenv("FAIRLEDGER_REQUIRE_SLURM") == "1" {
			t.Fatal("systemd-analyze not found")
		}
		t.Skip("systemd-analyze not found")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var files []string
	for _, name := range []string{"fairledger-nightly.service", "fairledger-nightly.timer"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "dist", "systemd", name))
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		if strings.HasSuffix(name, ".service") {
			if !strings.Contains(s, "\nExecStart=/usr/local/bin/fairledger nightly\n") {
				t.Fatalf("%s: ExecStart is not /usr/local/bin/fairledger nightly", name)
			}
			s = strings.ReplaceAll(s, "ExecStart=/usr/local/bin/fairledger", "ExecStart="+self)
		}
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	out, err := exec.Command(sa, append([]string{"verify"}, files...)...).CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}
