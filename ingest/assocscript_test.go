package ingest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParseAssocScriptUBCCR replays the real UB CCR medium-cluster script.
// Expected counts come from reading the file (337 lines):
//   - 8 comment lines and 7 blank lines are not statements → Read = 322;
//   - 1 add cluster + 62 add account + 96 add user = 159 ingested;
//   - 5 add QOS + 1 remove QOS + 1 list = 7 skipped as not association
//     statements; 61 modify account + 95 modify user, all `set qos=` only,
//     = 156 skipped as modify without fairshare, parent or GrpTRESMins.
//
// The tree: root, the root user (added by add cluster), 62 accounts
// (account0, account001..account061, all Fairshare=100 under root) and 96
// users — 160 rows.
func TestParseAssocScriptUBCCR(t *testing.T) {
	t.Parallel()
	as, st, err := ReadAssocScript(filepath.Join(assocTestdata, "sacctmgr_script_ubccr_medium_cluster.txt"))
	if err != nil {
		t.Fatalf("ReadAssocScript: %v", err)
	}
	assocCheckStats(t, st, 322, 159, 0)
	if got := st.Skipped[AssocSkipNotAssoc]; got != 7 {
		t.Errorf("Skipped[%q] = %d, want 7", AssocSkipNotAssoc, got)
	}
	if got := st.Skipped[AssocSkipNoTreeChange]; got != 156 {
		t.Errorf("Skipped[%q] = %d, want 156", AssocSkipNoTreeChange, got)
	}
	var accounts, users int
	for _, r := range as.Rows {
		switch {
		case r.IsRoot():
		case r.IsUser():
			users++
		default:
			accounts++
			if r.Parent != "root" || r.Shares != 100 || r.SharesParent {
				t.Errorf("account %s: parent %q shares %d (parent %v), want root, 100", r.Account, r.Parent, r.Shares, r.SharesParent)
			}
		}
		if r.Cluster != "ubhpc" {
			t.Errorf("row %s|%s cluster = %q, want ubhpc", r.Account, r.User, r.Cluster)
		}
	}
	if accounts != 62 || users != 97 {
		t.Errorf("got %d accounts and %d user associations, want 62 and 97 (96 users + root)", accounts, users)
	}
	// Lineage order: "/" < "/0-root/" < "/account0/" < "/account0/0-admin/" <
	// "/account001/" ('/' sorts before '0') < its users by name.
	wantFirst := []string{"root|", "root|root", "account0|", "account0|admin", "account001|",
		"account001|user001", "account001|user014", "account001|user044", "account001|user051", "account001|user070", "account002|"}
	assocSameStrings(t, "first rows", assocPairs(as.Rows[:len(wantFirst)]), wantFirst)

	tests := []struct {
		account, user string
		shares        int64
		sharesParent  bool
		line          int
	}{
		{"root", "", 1, false, 10},               // add cluster ... Fairshare=1
		{"root", "root", 1, false, 10},           // created by add cluster, default share 1
		{"account0", "", 100, false, 13},         // add account name=account0 Fairshare=100
		{"account001", "user001", 0, true, 80},   // Fairshare=parent
		{"account0", "admin", 1, false, 77},      // DefaultAccount only, default share
		{"account045", "user060", 1, false, 139}, // Fairshare=1
		{"account035", "user083", 0, true, 162},  // AdminLevel before Fairshare=parent
		{"account061", "", 100, false, 74},
	}
	for _, tt := range tests {
		r := assocFind(as.Rows, "ubhpc", tt.account, tt.user, "")
		if r == nil {
			t.Errorf("row %s|%s missing", tt.account, tt.user)
			continue
		}
		if r.SharesParent != tt.sharesParent || (!tt.sharesParent && r.Shares != tt.shares) || r.Line != tt.line {
			t.Errorf("row %s|%s = shares %d parent %v line %d, want %d %v %d",
				tt.account, tt.user, r.Shares, r.SharesParent, r.Line, tt.shares, tt.sharesParent, tt.line)
		}
	}
	if r := assocFind(as.Rows, "ubhpc", "account001", "user001", ""); r == nil || r.Lineage != "/account001/0-user001/" {
		t.Errorf("user001 = %+v, want lineage /account001/0-user001/", r)
	}
	// 9 users have a DefaultAccount other than their Account (grep of the script).
	if len(st.Warnings) != 9 {
		t.Errorf("got %d warnings, want 9: %q", len(st.Warnings), st.Warnings)
	} else if want := "sacctmgr_script_ubccr_medium_cluster.txt:104: DefaultAccount=account021 is not among Account=account018; no association made for it"; st.Warnings[0] != want {
		t.Errorf("warning[0] = %q, want %q", st.Warnings[0], want)
	}
}

// TestParseAssocScriptTest24_1: the script form of §11.1 builds the same tree
// as the dump form (cluster aside).
func TestParseAssocScriptTest24_1(t *testing.T) {
	t.Parallel()
	fromScript, st, err := ReadAssocScript(filepath.Join(assocTestdata, "test24_1.sacctmgr"))
	if err != nil {
		t.Fatalf("ReadAssocScript: %v", err)
	}
	// 17 statements: 14 applied (add cluster, delete user, 5 add account
	// lines, 2 modify fairshare, 5 add user lines), add qos and list skipped
	// as not association statements, modify ... set qos as no tree change.
	assocCheckStats(t, st, 17, 14, 0)
	if st.Skipped[AssocSkipNotAssoc] != 2 || st.Skipped[AssocSkipNoTreeChange] != 1 {
		t.Errorf("skipped = %v, want 2 %q and 1 %q", st.Skipped, AssocSkipNotAssoc, AssocSkipNoTreeChange)
	}
	fromDump, _, err := ReadAssoc(filepath.Join(assocTestdata, "test24_1.psv"))
	if err != nil {
		t.Fatalf("ReadAssoc: %v", err)
	}
	if len(fromScript.Rows) != len(fromDump.Rows) {
		t.Fatalf("script gives %d rows, dump %d:\n%q\n%q", len(fromScript.Rows), len(fromDump.Rows),
			assocPairs(fromScript.Rows), assocPairs(fromDump.Rows))
	}
	for i, s := range fromScript.Rows {
		d := fromDump.Rows[i]
		if s.Cluster != "linux" {
			t.Errorf("script row %d cluster = %q, want linux", i, s.Cluster)
		}
		s.Cluster, s.File, s.Line = d.Cluster, d.File, d.Line
		if s != d {
			t.Errorf("script row %d = %+v, dump row = %+v", i, s, d)
		}
	}
	if r := assocFind(fromScript.Rows, "linux", "AccountF", "User5", ""); r == nil || r.Line != 20 {
		t.Errorf("User5 (continued line) = %+v, want line 20", r)
	}
}

func TestParseAssocScriptStatements(t *testing.T) {
	t.Parallel()
	const cl = "add cluster c\n"
	tests := []struct {
		name, script string
		wantErrs     []string
		wantRows     []string // account|user[|partition] in output order
		read, ing    int64
	}{
		{"no cluster: cluster \"\" with a synthesized root",
			"add account a\nadd user u account=a\n", nil,
			[]string{"root|", "a|", "a|u"}, 2, 2},
		{"per-partition users and comma lists",
			cl + "add account a,b\nadd user u,v account=a partition=p1,p2\n", nil,
			[]string{"root|", "root|root", "a|", "a|u|p1", "a|u|p2", "a|v|p1", "a|v|p2", "b|"}, 3, 3},
		{"cluster= restricts, other cluster gets nothing",
			"add cluster c1,c2\nadd account a cluster=c2\nadd user u account=a cluster=c1\n",
			[]string{`ingest s.txt:3: Account="a": unknown parent account`},
			[]string{"root|", "root|root", "root|", "root|root", "a|"}, 3, 2},
		{"modify user fairshare applies",
			cl + "add account a\nadd user u account=a\nmodify user where name=u account=a set fairshare=parent\n", nil,
			[]string{"root|", "root|root", "a|", "a|u"}, 4, 4},
		{"modify parent re-parents",
			cl + "add account a,b\nmodify account b set parent=a\n", nil,
			[]string{"root|", "root|root", "a|", "b|"}, 3, 3},
		{"modify matching nothing is rejected",
			cl + "modify account where name=zz set fairshare=5\n",
			[]string{`ingest s.txt:2: Name="zz": modify account matches no association`},
			[]string{"root|", "root|root"}, 2, 1},
		{"modify user parent is rejected",
			cl + "add account a\nadd user u account=a\nmodify user u set parent=a\n",
			[]string{`ingest s.txt:4: Parent="a": only accounts have a parent`},
			[]string{"root|", "root|root", "a|", "a|u"}, 4, 3},
		{"bad fairshare orphans children",
			cl + "add account a fairshare=-1\nadd account b parent=a\nadd user u account=a\n",
			[]string{
				`ingest s.txt:2: Fairshare="-1": bad share (want a non-negative integer or parent)`,
				`ingest s.txt:3: ParentName="a": unknown parent account (the parent was rejected)`,
				`ingest s.txt:4: Account="a": unknown parent account (the account was rejected)`,
			},
			[]string{"root|", "root|root"}, 4, 1},
		{"user without account",
			cl + "add user u fairshare=3\n",
			[]string{`ingest s.txt:2: Account="": user row without account (give Account= or DefaultAccount=)`},
			[]string{"root|", "root|root"}, 2, 1},
		{"delete account with users is refused, delete user works",
			cl + "add account a\nadd user u account=a\ndelete account a\ndelete user u\ndelete account a\n",
			[]string{`ingest s.txt:4: Name="a": delete account with child associations is not supported (a has child user u at line 3)`},
			[]string{"root|", "root|root"}, 6, 5},
		{"cycle through modify parent",
			cl + "add account a\nadd account b parent=a\nmodify account a set parent=b\n",
			[]string{
				`ingest s.txt:2: ParentName="b": cycle in account parents: a -> b -> a`,
				`ingest s.txt:3: ParentName="a": cycle in account parents: a -> b -> a`,
			},
			[]string{"root|", "root|root"}, 4, 2},
		{"empty fairshare value",
			cl + "add account a\nmodify account a set fairshare=\n",
			[]string{`ingest s.txt:3: Fairshare="": empty share (want a non-negative integer or parent)`},
			[]string{"root|", "root|root", "a|"}, 3, 2},
		{"duplicate add",
			cl + "add account a\nadd account a fairshare=3\n",
			[]string{`ingest s.txt:3: Account="a": duplicate association (first at line 2)`},
			[]string{"root|", "root|root", "a|"}, 3, 2},
		{"unknown command, unknown entity, unterminated quote, empty command",
			cl + "frobnicate account a\nadd acount a\nadd account \"a\nsacctmgr -i\n",
			[]string{
				`ingest s.txt:2: unknown sacctmgr command "frobnicate"`,
				`ingest s.txt:3: unknown sacctmgr entity "acount"`,
				`ingest s.txt:4: unterminated quote`,
				`ingest s.txt:5: empty sacctmgr command`,
			},
			[]string{"root|", "root|root"}, 5, 1},
		{"quoted values, shell prefix, CRLF, case",
			"sacctmgr -i ADD Cluster Name=c\r\nsacctmgr --immediate Add Account Name=a Description=\"a b c\" FAIRSHARE=7\r\n", nil,
			[]string{"root|", "root|root", "a|"}, 2, 2},
		{"delete cluster and modify cluster are rejected",
			cl + "delete cluster c\nmodify cluster c set fairshare=2\n",
			[]string{
				`ingest s.txt:2: delete cluster is not supported`,
				`ingest s.txt:3: modify cluster is not supported; set the root share with add cluster`,
			},
			[]string{"root|", "root|root"}, 3, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			as, st, err := ParseAssocScript("s.txt", strings.NewReader(tt.script))
			assocSameStrings(t, "errors", assocErrorLines(t, err), tt.wantErrs)
			assocSameStrings(t, "rows", assocPairs(as.Rows), tt.wantRows)
			if st.Read != tt.read || st.Ingested != tt.ing || !st.Balanced() {
				t.Errorf("stats = %s, want read=%d ingested=%d and balanced", st.String(), tt.read, tt.ing)
			}
		})
	}
}

func TestParseAssocScriptModifyValues(t *testing.T) {
	t.Parallel()
	script := "add cluster c\nadd account a,b fairshare=5\nmodify account where name=b set fairshare=parent\n" +
		"add user u account=a\nmodify user u set fairshare=9\nmodify account b set parent=a\n"
	as, _, err := ParseAssocScript("s.txt", strings.NewReader(script))
	if err != nil {
		t.Fatalf("ParseAssocScript: %v", err)
	}
	tests := []struct {
		account, user, parent, lineage string
		shares                         int64
		sharesParent                   bool
	}{
		{"a", "", "root", "/a/", 5, false},
		{"b", "", "a", "/a/b/", 0x7FFFFFFF, true},
		{"a", "u", "a", "/a/0-u/", 9, false},
	}
	for _, tt := range tests {
		r := assocFind(as.Rows, "c", tt.account, tt.user, "")
		if r == nil || r.Parent != tt.parent || r.Lineage != tt.lineage || r.Shares != tt.shares || r.SharesParent != tt.sharesParent {
			t.Errorf("row %s|%s = %+v, want parent %q lineage %q shares %d/%v", tt.account, tt.user, r, tt.parent, tt.lineage, tt.shares, tt.sharesParent)
		}
	}
}

func TestAssocTokens(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []string
	}{
		{"add  account\ta", []string{"add", "account", "a"}},
		{`modify user set qoslevel="a,b c"`, []string{"modify", "user", "set", "qoslevel=a,b c"}},
		{`x 'y z' ""`, []string{"x", "y z", ""}},
		{"", nil},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.in), func(t *testing.T) {
			got, err := assocTokens(tt.in)
			if err != nil {
				t.Errorf("assocTokens(%q) error %v", tt.in, err)
				return
			}
			assocSameStrings(t, "assocTokens("+tt.in+")", got, tt.want)
		})
	}
}

// BenchmarkParseAssocScript replays the 337-line UB CCR script.
//
//	go test ./ingest -run '^$' -bench BenchmarkParseAssocScript -benchmem
func BenchmarkParseAssocScript(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(assocTestdata, "sacctmgr_script_ubccr_medium_cluster.txt"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	var stmts int64
	for b.Loop() {
		_, st, err := ParseAssocScript("bench.txt", strings.NewReader(string(data)))
		if err != nil {
			b.Fatal(err)
		}
		stmts = st.Read
	}
	b.ReportMetric(float64(stmts)*float64(b.N)/b.Elapsed().Seconds(), "statements/s")
}
