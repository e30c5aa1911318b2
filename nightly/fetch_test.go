package nightly

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeRunner answers each call with the first reply whose key is in the
// call's arguments.
type fakeRunner struct {
	replies []reply
	calls   []string
}

type reply struct {
	match, stdout, stderr string
	err                   error
	wait                  bool // block until the context ends
}

func (f *fakeRunner) Run(ctx context.Context, name string, args, env []string, stdout io.Writer) (string, error) {
	call := name + " " + strings.Join(args, " ")
	f.calls = append(f.calls, call)
	for _, r := range f.replies {
		if strings.Contains(call, r.match) {
			if r.wait {
				<-ctx.Done()
				return "", context.Cause(ctx)
			}
			io.WriteString(stdout, r.stdout)
			return r.stderr, r.err
		}
	}
	return "", errors.New("unexpected call " + call)
}

func TestFetcher(t *testing.T) {
	t.Parallel()
	span := Span{time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(2025, 3, 2, 0, 0, 0, 0, time.UTC)}
	header := "JobID|JobIDRaw|Cluster\n"
	for _, tc := range []struct {
		name    string
		replies []reply
		want    string // error text; "" for success
	}{
		{"ok", []reply{{match: "-S", stdout: header + "1|1|c\n"}}, ""},
		{"exit 1", []reply{{match: "-S", stderr: "sacct: error: Problem talking to the database: Connection refused", err: errors.New("sacct: exit status 1")}}, "exit status 1"},
		{"an error on stderr with exit 0", []reply{{match: "-S", stdout: header, stderr: "sacct: error: slurmdbd: Connection refused"}},
			"sacct printed an error (exit 0): sacct: error: slurmdbd: Connection refused"},
		{"nothing printed", []reply{{match: "-S"}}, "printed nothing, not even its header line"},
		{"not sacct's header", []reply{{match: "-S", stdout: "oops\n"}}, `printed "oops\n" where its header line JobID|… was expected`},
		{"timeout", []reply{{match: "-S", wait: true}}, "timed out after 50ms (sacct_timeout)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			f := &Fetcher{SacctPath: "sacct", SacctmgrPath: "sacctmgr", Cluster: "c", Timeout: 50 * time.Millisecond, Runner: &fakeRunner{replies: tc.replies}}
			files, err := f.Sacct(context.Background(), []Span{span}, dir, nil)
			if tc.want == "" {
				if err != nil || len(files) != 1 {
					t.Fatalf("Sacct = %v, %v", files, err)
				}
				b, _ := os.ReadFile(files[0])
				if string(b) != header+"1|1|c\n" {
					t.Errorf("file = %q", b)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Sacct error = %v, want one with %q", err, tc.want)
			}
			if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 {
				t.Errorf("a failed fetch left %v", left)
			}
		})
	}
}

func TestSacctArgs(t *testing.T) {
	t.Parallel()
	span := Span{time.Date(2025, 3, 1, 23, 0, 0, 0, time.UTC), time.Date(2025, 3, 2, 23, 0, 0, 0, time.UTC)}
	f := &Fetcher{SacctPath: "/usr/bin/sacct", Cluster: "hpc", Priority: true}
	got := f.SacctCommand(span)
	want := "SLURM_TIME_FORMAT=%s TZ=UTC /usr/bin/sacct -a -D -P -M hpc -S 2025-03-01T23:00:00 -E 2025-03-02T23:00:00 -s PD,R,RQ,RS,RV,S,CD,CA,F,TO,NF,PR,OOM,BF,DL" +
		" -o JobID,JobIDRaw,Cluster,Partition,QOS,Account,User,Submit,Eligible,Start,End,Elapsed,ElapsedRaw,Suspended,State,ExitCode,NNodes,AllocCPUS,ReqCPUS,ReqNodes,ReqTRES,AllocTRES,Timelimit,Priority,JobName,SubmitLine"
	if got != want {
		t.Errorf("SacctCommand =\n%s\nwant\n%s", got, want)
	}
}

// Before 23.02 sacctmgr does not know Lineage: the dump is asked again
// without it.
func TestAssocWithoutLineage(t *testing.T) {
	t.Parallel()
	r := &fakeRunner{replies: []reply{
		{match: "Lineage", stderr: " Unknown field 'Lineage'", err: errors.New("sacctmgr: exit status 1:  Unknown field 'Lineage'")},
		{match: "show assoc", stdout: "Cluster|Account|User|Partition|ParentName|Share|GrpTRESMins\nc|root|||||\n"},
	}}
	f := &Fetcher{SacctPath: "sacct", SacctmgrPath: "sacctmgr", Cluster: "c", Timeout: time.Second, Runner: r}
	file := filepath.Join(t.TempDir(), "assoc.psv")
	if err := f.Assoc(context.Background(), file); err != nil {
		t.Fatal(err)
	}
	if len(r.calls) != 2 || !strings.HasSuffix(r.calls[1], "format=Cluster,Account,User,Partition,ParentName,Share,GrpTRESMins") {
		t.Errorf("calls = %q", r.calls)
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	for out, want := range map[string]string{"slurm 22.05.8\n": "22.05", "slurm 24.11.5\n": "24.11", "slurm-wlm 22.05.8\n": "22.05", "munge 0.5\n": "error", "slurm 21.08.8\n": "error"} {
		f := &Fetcher{SacctPath: "sacct", Timeout: time.Second, Runner: &fakeRunner{replies: []reply{{match: "--version", stdout: out}}}}
		v, err := f.Version(context.Background())
		got := v.String()
		if err != nil {
			got = "error"
		}
		if got != want {
			t.Errorf("Version(%q) = %s (%v), want %s", out, got, err, want)
		}
	}
}
