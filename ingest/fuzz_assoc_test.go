package ingest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// assocFuzzSeeds adds the fixtures in testdata/assoc whose names match one
// of the suffixes as seeds.
func assocFuzzSeeds(f *testing.F, suffixes ...string) {
	entries, err := os.ReadDir(assocTestdata)
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range entries {
		for _, s := range suffixes {
			if strings.HasSuffix(e.Name(), s) {
				data, err := os.ReadFile(filepath.Join(assocTestdata, e.Name()))
				if err != nil {
					f.Fatal(err)
				}
				f.Add(string(data))
			}
		}
	}
}

// assocFuzzCheck asserts the invariants every parse result must hold.
func assocFuzzCheck(t *testing.T, as *Associations, st Stats, err error) {
	for _, e := range assocLeafErrors(err) {
		if _, ok := e.(*ParseError); !ok {
			t.Fatalf("error %v is a %T, want *ParseError", e, e)
		}
	}
	if !st.Balanced() || st.Read < 0 || st.Rejected < 0 || st.Ingested < 0 {
		t.Fatalf("stats %s not balanced", st.String())
	}
	if as == nil {
		if err == nil {
			t.Fatalf("nil associations without an error")
		}
		return
	}
	seen := map[assocKey]bool{}
	for i, r := range as.Rows {
		k := assocKey{r.Cluster, r.Account, r.User, r.Partition}
		if seen[k] {
			t.Fatalf("duplicate association %+v", r)
		}
		seen[k] = true
		if i > 0 {
			p := as.Rows[i-1]
			if p.Cluster > r.Cluster || (p.Cluster == r.Cluster && p.Lineage > r.Lineage) {
				t.Fatalf("rows out of order: %+v before %+v", p, r)
			}
		}
		if r.IsRoot() {
			if r.Lineage != "/" || r.SharesParent {
				t.Fatalf("bad root %+v", r)
			}
			continue
		}
		if !seen[assocKey{r.Cluster, r.Parent, "", ""}] {
			t.Fatalf("row %+v comes before its parent or has none", r)
		}
		if r.SharesParent && r.Shares != assocSharesParentRaw || r.Shares < 0 {
			t.Fatalf("bad shares %+v", r)
		}
	}
	// Every cluster has its root first.
	for i, r := range as.Rows {
		if i == 0 || as.Rows[i-1].Cluster != r.Cluster {
			if !r.IsRoot() {
				t.Fatalf("cluster %q starts with %+v, want its root", r.Cluster, r)
			}
		}
	}
}

// FuzzParseAssoc: no panics; errors are *ParseError or joins of them; Stats
// balance; the rows form a sorted tree.
//
//	go test ./ingest -run '^$' -fuzz FuzzParseAssoc$ -fuzztime 60s
func FuzzParseAssoc(f *testing.F) {
	assocFuzzSeeds(f, ".psv")
	f.Add("Account|User|ParentName|Share\nroot|||1\na||a|1\n")
	f.Add("Account|User|ParentName|Share|Lineage|\nroot|||parent|/|\nb|u|c|x|/b/0-u/|\n")
	f.Fuzz(func(t *testing.T, in string) {
		as, st, err := ParseAssoc("fuzz.psv", strings.NewReader(in))
		assocFuzzCheck(t, as, st, err)
	})
}

// FuzzParseAssocScript: the same invariants for sacctmgr scripts.
//
//	go test ./ingest -run '^$' -fuzz FuzzParseAssocScript -fuzztime 60s
func FuzzParseAssocScript(f *testing.F) {
	assocFuzzSeeds(f, ".sacctmgr", ".txt")
	f.Add("add cluster c\nadd account a,b parent=b\nmodify account a set parent=a fairshare=parent\ndelete user root\n")
	f.Add("add user u account=x \\\n partition=p\nremove account x\n'\n")
	f.Add("modifY ACCt set shAre=") // once panicked: set key with an empty value
	f.Add("add account a GrpTRESMins=cpu=5,mem=2G GrpCPUMins=-1\nadd user u account=a grpcpumins=7\n" +
		"modify user where name=u set GrpTRESMins=mem=-1,gres/gpu=3\n")
	f.Fuzz(func(t *testing.T, in string) {
		as, st, err := ParseAssocScript("fuzz.txt", strings.NewReader(in))
		assocFuzzCheck(t, as, st, err)
	})
}
