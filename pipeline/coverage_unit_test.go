package pipeline

import (
	"strings"
	"testing"
	"time"
)

// TestSacctCommand: the command a coverage refusal names, written by hand
// from docs/inputs.md: the times in the run's zone as sacct reads them,
// with TZ set to it (none for Local, the machine's own).
func TestSacctCommand(t *testing.T) {
	t.Parallel()
	lo, to := int64(1764547200), int64(1764979200) // 2025-12-01T00:00:00Z, 2025-12-06T00:00:00Z
	cols := "JobID,JobIDRaw,Cluster,Partition,QOS,Account,User,Submit,Eligible,Start,End,Elapsed,ElapsedRaw,Suspended,State,ExitCode,NNodes,AllocCPUS,ReqTRES,AllocTRES,Timelimit,JobName"
	if got, want := sacctCommand(time.UTC, lo, to, false),
		"TZ=UTC SLURM_TIME_FORMAT=%s sacct -a -D -P -S 2025-12-01T00:00:00 -E 2025-12-06T00:00:00 -o "+cols; got != want {
		t.Errorf("sacctCommand(UTC) =\n%s\nwant\n%s", got, want)
	}
	if got := sacctCommand(time.Local, lo, to, false); !strings.HasPrefix(got, "SLURM_TIME_FORMAT=%s sacct -a -D -P -S ") {
		t.Errorf("sacctCommand(Local) = %s, want no TZ", got)
	}
	if got, want := sacctCommand(time.FixedZone("CET", 3600), lo, to, true),
		"TZ=CET SLURM_TIME_FORMAT=%s sacct -a -D -P -S 2025-12-01T01:00:00 -E 2025-12-06T01:00:00 -s PD,R,RQ,RS,RV,S,CD,CA,F,TO,NF,PR,OOM,BF,DL -o "+
			"JobID,JobIDRaw,Cluster,Partition,QOS,Account,User,Submit,Eligible,Start,End,Elapsed,ElapsedRaw,Suspended,State,ExitCode,NNodes,AllocCPUS,ReqCPUS,ReqNodes,ReqTRES,AllocTRES,Timelimit,Priority,JobName,SubmitLine"; got != want {
		t.Errorf("sacctCommand(CET, priority) =\n%s\nwant\n%s", got, want)
	}
}

// TestCheckZone: a checkpoint without a zone (written before it was
// recorded) accepts any; one with a zone only its own.
func TestCheckZone(t *testing.T) {
	t.Parallel()
	cet := time.FixedZone("CET", 3600)
	for _, c := range []struct {
		zone string
		loc  *time.Location
		ok   bool
	}{
		{"", cet, true},
		{"UTC", time.UTC, true},
		{"CET", cet, true},
		{"UTC", cet, false},
		{"CET", time.UTC, false},
	} {
		err := checkZone(&checkpoint{Zone: c.zone, To: 1764547200}, c.loc, "c1")
		if (err == nil) != c.ok {
			t.Errorf("checkZone(checkpoint in %q, run in %s) = %v, want ok %v", c.zone, c.loc, err, c.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "run with --tz "+c.zone) {
			t.Errorf("checkZone(%q, %s) = %v: does not name the fix", c.zone, c.loc, err)
		}
	}
}

// TestCheckSacctSpan: the declared span must cover the window (lo, to]:
// a start at lo or before and an end at to or after (times by hand).
func TestCheckSacctSpan(t *testing.T) {
	t.Parallel()
	const lo, to = 1000, 2000
	at := func(s int64) time.Time { return time.Unix(s, 0) }
	for _, c := range []struct {
		start, end int64 // 0: not given
		resumed    bool
		want       string // "" accepted
	}{
		{0, 0, true, ""},
		{1000, 2000, true, ""},
		{900, 2100, false, ""},
		{1001, 0, true, "is after 1970-01-01T00:16:40Z, where the history"},
		{1001, 0, false, "--from 1970-01-01T00:16:40Z is before --sacct-start 1970-01-01T00:16:41Z"},
		{0, 1999, true, "--sacct-end 1970-01-01T00:33:19Z is before the window's end 1970-01-01T00:33:20Z"},
	} {
		opt := Options{Location: time.UTC}
		if c.start != 0 {
			opt.SacctStart = at(c.start)
		}
		if c.end != 0 {
			opt.SacctEnd = at(c.end)
		}
		err := checkSacctSpan(opt, "c1", lo, to, c.resumed, false)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("span [%d, %d] over (%d, %d]: %v, want accepted", c.start, c.end, lo, to, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "nothing was written")):
			t.Errorf("span [%d, %d] over (%d, %d]: %v, want a refusal holding %q", c.start, c.end, lo, to, err, c.want)
		}
	}
}
