package ingest

import (
	"strings"
	"testing"
)

// scriptLimits replays script and returns each association's GrpTRESMins
// as "account|user" → limit, with its stats and errors.
func scriptLimits(t *testing.T, script string) (map[string]string, Stats, []string) {
	t.Helper()
	as, st, err := ParseAssocScript("s.txt", strings.NewReader(script))
	got := map[string]string{}
	for _, r := range as.Rows {
		got[r.Account+"|"+r.User] = r.GrpTRESMins
	}
	return got, st, assocErrorLines(t, err)
}

// cleanScriptLimits is scriptLimits for a script that must parse without
// errors.
func cleanScriptLimits(t *testing.T, script string) (map[string]string, Stats) {
	t.Helper()
	got, st, errs := scriptLimits(t, script)
	if len(errs) > 0 {
		t.Fatalf("errors: %q", errs)
	}
	return got, st
}

func checkLimits(t *testing.T, got, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("got %d associations %v, want %d", len(got), got, len(want))
	}
	for k, w := range want {
		if g, ok := got[k]; !ok || g != w {
			t.Errorf("GrpTRESMins(%s) = %q (present %v), want %q", k, g, ok, w)
		}
	}
}

// Hand expectations from slurmdbd's rules (assocscript_limits.go): an add
// keeps the statement's items, later options replacing earlier ones of the
// same TRES and -1 dropping the TRES; children inherit nothing; the TRES
// are listed cpu, mem, ... (Slurm's static order) then gres/*.
func TestParseAssocScriptLimitsAdd(t *testing.T) {
	t.Parallel()
	script := "add cluster c\n" +
		"add account a GrpTRESMins=gres/gpu=100,mem=20G,CPU=6000\n" +
		"add account b parent=a\n" +
		"add user u account=a GrpCPUMins=500\n" +
		"add user v account=b GrpTRESMins=gres/gpu=10,cpu=-1 GrpTRESMins=cpu=7\n" +
		"add account d GrpTRESMins=cpu=5 GrpCPUMins=-1\n"
	got, st := cleanScriptLimits(t, script)
	checkLimits(t, got, map[string]string{
		"root|":     "",
		"root|root": "",
		"a|":        "cpu=6000,mem=20G,gres/gpu=100",
		"b|":        "", // a's limit is not inherited
		"a|u":       "cpu=500",
		"b|v":       "cpu=7,gres/gpu=10", // cpu=-1 then cpu=7: the later wins
		"d|":        "",                  // cpu=5 then cleared
	})
	if st.Read != 6 || st.Ingested != 6 || st.Rejected != 0 || !st.Balanced() {
		t.Errorf("stats = %s, want read=6 ingested=6 rejected=0", st.String())
	}
}

// add cluster's limit is the root account association's; the root user
// association Slurm adds with it has none, and nothing below inherits it.
func TestParseAssocScriptLimitsCluster(t *testing.T) {
	t.Parallel()
	got, st := cleanScriptLimits(t, "add cluster c GrpTRESMins=node=4,cpu=1000\nadd account a\n")
	checkLimits(t, got, map[string]string{"root|": "cpu=1000,node=4", "root|root": "", "a|": ""})
	if st.Read != 2 || st.Ingested != 2 || !st.Balanced() {
		t.Errorf("stats = %s, want read=2 ingested=2", st.String())
	}
	if _, _, errs := scriptLimits(t, "add cluster c GrpCPUMins=x\n"); len(errs) != 1 || !strings.Contains(errs[0], `GrpCPUMins="x"`) {
		t.Errorf("errors = %q, want the bad GrpCPUMins", errs)
	}
}

// A modify replaces the TRES it names, keeps the others, and -1 removes a
// TRES (mod_tres_str); a limit-only modify is applied and ingested, while a
// qos-only one is still skipped.
func TestParseAssocScriptLimitsModify(t *testing.T) {
	t.Parallel()
	script := "add cluster c\n" +
		"add account a GrpTRESMins=cpu=6000,mem=20G\n" +
		"add user u account=a\n" +
		"modify account a set GrpTRESMins=cpu=-1,gres/gpu=50\n" +
		"modify user where name=u set GrpCPUMins=100\n" +
		"modify user u set qos=normal\n" +
		"add account e GrpTRESMins=cpu=1\n" +
		"modify account e set GrpTRESMins=cpu=-1\n" +
		"modify account where name=e set fairshare=3 GrpTRESMins=node=2\n"
	got, st := cleanScriptLimits(t, script)
	checkLimits(t, got, map[string]string{
		"root|":     "",
		"root|root": "",
		"a|":        "mem=20G,gres/gpu=50",
		"a|u":       "cpu=100",
		"e|":        "node=2",
	})
	// 9 statements: the qos-only modify skipped, the other 8 applied.
	if st.Read != 9 || st.Ingested != 8 || st.Rejected != 0 || st.Skipped[AssocSkipNoTreeChange] != 1 || !st.Balanced() {
		t.Errorf("stats = %s, want read=9 ingested=8 rejected=0, 1 %q", st.String(), AssocSkipNoTreeChange)
	}
}

// Bad values reject their statement with file, line, field and value; a
// rejected add account orphans its users; read = ingested + rejected.
func TestParseAssocScriptLimitsRejected(t *testing.T) {
	t.Parallel()
	script := "add cluster c\n" +
		"add account a GrpTRESMins=cpu=lots\n" +
		"add user u account=a\n" +
		"add account b GrpTRESMins=cpu=9\n" +
		"modify account b set GrpCPUMins=ten\n" +
		"modify account b set GrpTRESMins=\n" +
		"modify account b set GrpTRESMins=cpu=1,cpu=2\n" +
		"modify account b set GrpTRESMins=mem=-2\n"
	got, st, errs := scriptLimits(t, script)
	assocSameStrings(t, "errors", errs, []string{
		`ingest s.txt:2: GrpTRESMins="cpu=lots": item "cpu=lots": count is not a non-negative integer`,
		`ingest s.txt:3: Account="a": unknown parent account (the account was rejected)`,
		`ingest s.txt:5: GrpCPUMins="ten": want a non-negative integer (CPU-minutes) or -1 to clear`,
		`ingest s.txt:6: GrpTRESMins="": item "": want type=count`,
		`ingest s.txt:7: GrpTRESMins="cpu=1,cpu=2": item "cpu=2": TRES cpu given twice`,
		`ingest s.txt:8: GrpTRESMins="mem=-2": item "mem=-2": count is not a non-negative number with an optional unit (K, M, G, T, P, E)`,
	})
	checkLimits(t, got, map[string]string{"root|": "", "root|root": "", "b|": "cpu=9"})
	if st.Read != 8 || st.Ingested != 2 || st.Rejected != 6 || !st.Balanced() {
		t.Errorf("stats = %s, want read=8 ingested=2 rejected=6", st.String())
	}
}

// The limit a script gives reads back through ParseTRESLimit to the same
// counts as the dump reader's column would give: mem=20G is 20480 MiB.
func TestParseAssocScriptLimitsReadBack(t *testing.T) {
	t.Parallel()
	got, _ := cleanScriptLimits(t, "add account a GrpTRESMins=mem=20G,cpu=6000\n")
	counts, err := ParseTRESLimit(got["a|"])
	if err != nil {
		t.Fatalf("ParseTRESLimit(%q): %v", got["a|"], err)
	}
	if s := SshareTRES(counts); s != "cpu=6000,mem=20480" {
		t.Errorf("SshareTRES = %q, want cpu=6000,mem=20480", s)
	}
}
