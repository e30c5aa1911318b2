package ingest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

const qosDir = "../testdata/qos"

// qosRead parses a file of testdata/qos.
func qosRead(t testing.TB, name string) (*QOSTable, Stats, error) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(qosDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return ParseQOS(name, strings.NewReader(string(data)))
}

func TestParseQOSBasic(t *testing.T) {
	t.Parallel()
	tab, st, err := qosRead(t, "qos_basic.psv")
	if err != nil {
		t.Fatalf("ParseQOS(qos_basic.psv) error = %v", err)
	}
	want := []QOS{
		{Name: "normal", UsageFactor: 1, Line: 2},
		{Name: "general-compute", UsageFactor: 1, Flags: []string{"DenyOnLimit"}, Line: 3},
		{Name: "debug", UsageFactor: 2, Line: 4},
		{Name: "scavenger", UsageFactor: 0, Flags: []string{"NoDecay", "DenyOnLimit"}, NoDecay: true, Line: 5},
		{Name: "half", UsageFactor: 0.5, Line: 6},
	}
	if !reflect.DeepEqual(tab.Rows, want) {
		t.Errorf("Rows = %+v, want %+v", tab.Rows, want)
	}
	if tab.File != "qos_basic.psv" {
		t.Errorf("File = %q, want qos_basic.psv", tab.File)
	}
	if st.Read != 5 || st.Ingested != 5 || st.Rejected != 0 || !st.Balanced() || len(st.Warnings) != 0 {
		t.Errorf("Stats = %+v, want read=5 ingested=5, balanced, no warnings", st)
	}
}

func TestQOSUsageFactor(t *testing.T) {
	t.Parallel()
	tab, _, err := qosRead(t, "qos_basic.psv")
	if err != nil {
		t.Fatal(err)
	}
	// §2.1: q is the job QOS's UsageFactor; no QOS (or one sacctmgr does not
	// know) means 1.
	tests := []struct {
		name string
		want float64
	}{
		{"debug", 2},
		{"DEBUG", 2}, // slurmctld matches QOS names without regard to case
		{"half", 0.5},
		{"scavenger", 0},
		{"normal", 1},
		{"", 1},
		{"no-such-qos", 1},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("QOS %q", tt.name), func(t *testing.T) {
			if got := tab.UsageFactor(tt.name); got != tt.want {
				t.Errorf("UsageFactor(%q) = %v, want %v", tt.name, got, tt.want)
			}
		})
	}
	var nilTab *QOSTable
	if got := nilTab.UsageFactor("debug"); got != 1 {
		t.Errorf("(*QOSTable)(nil).UsageFactor(debug) = %v, want 1", got)
	}
	// A table built by hand (no index) is searched linearly.
	manual := &QOSTable{Rows: []QOS{{Name: "Lo", UsageFactor: 0.25}}}
	if got := manual.UsageFactor("lo"); got != 0.25 {
		t.Errorf("manual.UsageFactor(lo) = %v, want 0.25", got)
	}
	if got := manual.UsageFactor("hi"); got != 1 {
		t.Errorf("manual.UsageFactor(hi) = %v, want 1", got)
	}
}

func TestParseQOSReorderedColumnsCRLF(t *testing.T) {
	t.Parallel()
	// Header "Flags|Priority|UsageFactor|name": any order, extra column,
	// case-insensitive titles, CRLF line ends; an empty UsageFactor is 1.
	tab, st, err := qosRead(t, "qos_reordered_crlf.psv")
	if err != nil {
		t.Fatalf("ParseQOS error = %v", err)
	}
	want := []QOS{
		{Name: "Supporters", UsageFactor: 1, Flags: []string{"NoDecay"}, NoDecay: true, Priority: 10, Line: 2},
		{Name: "debug", UsageFactor: 0.25, Line: 3},
	}
	if !reflect.DeepEqual(tab.Rows, want) {
		t.Errorf("Rows = %+v, want %+v", tab.Rows, want)
	}
	if st.Read != 2 || st.Ingested != 2 || !st.Balanced() {
		t.Errorf("Stats = %+v, want read=2 ingested=2", st)
	}
}

func TestParseQOSRejects(t *testing.T) {
	t.Parallel()
	tab, st, err := qosRead(t, "qos_bad.psv")
	var names []string
	for _, q := range tab.Rows {
		names = append(names, q.Name)
	}
	if want := []string{"normal", "long"}; !reflect.DeepEqual(names, want) {
		t.Errorf("accepted rows = %v, want %v", names, want)
	}
	if st.Read != 7 || st.Ingested != 2 || st.Rejected != 5 || !st.Balanced() {
		t.Errorf("Stats = %+v, want read=7 ingested=2 rejected=5", st)
	}
	errs := confParseErrors(t, err)
	want := []string{
		`ingest qos_bad.psv:3: UsageFactor="-1.000000": negative usage factor`,
		`ingest qos_bad.psv:4: Name="": empty QOS name`,
		`ingest qos_bad.psv:5: UsageFactor="fast": not a number`,
		`ingest qos_bad.psv:6: Name="NORMAL": duplicate QOS name`,
		`ingest qos_bad.psv:7: 2 fields, header has 3`,
	}
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("errors =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestParseQOSInputs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		in       string
		rows     int
		rejected int64
		warnings int
		errSub   string // "" = no error
	}{
		{"header only", "Name|UsageFactor|Flags\n", 0, 0, 0, ""},
		{"empty input", "", 0, 0, 0, "header is missing"},
		{"no header", "normal|1.000000|\n", 0, 0, 0, "lacks the Name and UsageFactor columns"},
		{"sacctmgr -p trailing bar", "Name|UsageFactor|Flags|\nnormal|1.000000||\n", 1, 0, 0, ""},
		{"no Flags column", "Name|UsageFactor\nnormal|1.5\n", 1, 0, 1, ""},
		// sacctmgr ends every line with a newline: a copy cut short is read,
		// with a warning.
		{"no trailing newline", "Name|UsageFactor|Flags\nx|1.000000|NoDecay", 1, 0, 1, ""},
		{"blank lines are not records", "Name|UsageFactor|Flags\n\nx|1|\n\n", 1, 0, 0, ""},
		{"NaN and Inf are rejected", "Name|UsageFactor|Flags\na|NaN|\nb|+Inf|\n", 0, 2, 0, "not a finite number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab, st, err := ParseQOS("in.psv", strings.NewReader(tt.in))
			if tt.errSub == "" && err != nil || tt.errSub != "" && (err == nil || !strings.Contains(err.Error(), tt.errSub)) {
				t.Errorf("%s: ParseQOS error = %v, want %q", tt.name, err, tt.errSub)
			}
			confParseErrors(t, err)
			if tab == nil || len(tab.Rows) != tt.rows || st.Rejected != tt.rejected || len(st.Warnings) != tt.warnings || !st.Balanced() {
				t.Errorf("%s: ParseQOS = %+v, %+v, want %d rows, %d rejected, %d warnings", tt.name, tab, st, tt.rows, tt.rejected, tt.warnings)
			}
		})
	}
}

// FuzzParseQOS checks that any input parses without panicking, that every
// error is a ParseError, and that every data row is accounted for.
// Run: go test -run '^$' -fuzz FuzzParseQOS -fuzztime 30s ./ingest/
func FuzzParseQOS(f *testing.F) {
	for _, name := range []string{"qos_basic.psv", "qos_reordered_crlf.psv", "qos_bad.psv"} {
		data, err := os.ReadFile(filepath.Join(qosDir, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data))
	}
	f.Add("Name|UsageFactor|Flags|\nx|1e309||\n")
	f.Add("name|usagefactor\n|\n")
	f.Fuzz(func(t *testing.T, in string) {
		tab, st, err := ParseQOS("fuzz.psv", strings.NewReader(in))
		if tab == nil {
			t.Fatal("ParseQOS returned a nil table")
		}
		if !st.Balanced() {
			t.Errorf("Stats %+v not balanced", st)
		}
		if int64(len(tab.Rows)) != st.Ingested {
			t.Errorf("%d rows, Stats.Ingested = %d", len(tab.Rows), st.Ingested)
		}
		for _, q := range tab.Rows {
			if q.Name == "" || q.UsageFactor < 0 || q.UsageFactor != q.UsageFactor {
				t.Errorf("accepted bad row %+v", q)
			}
		}
		var leaves []error
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			leaves = j.Unwrap()
		} else if err != nil {
			leaves = []error{err}
		}
		for _, e := range leaves {
			var pe *ParseError
			if !errors.As(e, &pe) || pe != e {
				t.Errorf("error %v (%T) is not a *ParseError", e, e)
			}
		}
	})
}

// BenchmarkParseQOS parses a 1000-row QOS dump from memory.
// Reproduce: go test -run '^$' -bench BenchmarkParseQOS ./ingest/
func BenchmarkParseQOS(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("Name|UsageFactor|Flags\n")
	const rows = 1000
	for i := 0; i < rows; i++ {
		sb.WriteString("qos" + strconv.Itoa(i) + "|1.500000|NoDecay,DenyOnLimit\n")
	}
	in := sb.String()
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for i := 0; i < b.N; i++ {
		_, st, err := ParseQOS("bench.psv", strings.NewReader(in))
		if err != nil || st.Ingested != rows {
			b.Fatalf("ParseQOS: %v, %+v", err, st)
		}
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
