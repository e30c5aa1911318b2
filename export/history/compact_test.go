package history

import (
	"bufio"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/export/record/recordtest"
	"github.com/fairledger/fairledger/schemas"
)

// TestCompactionRule: the constants of the rule docs/history-store.md
// states (four of a class, classes of powers of four, a cap of two row
// groups of 131,072 rows), which the cases of testdata/compaction are
// written against.
func TestCompactionRule(t *testing.T) {
	t.Parallel()
	if compactFanIn != 4 {
		t.Errorf("compactFanIn = %d, want 4", compactFanIn)
	}
	if maxMergeRows != 262144 {
		t.Errorf("maxMergeRows = %d, want 262144", maxMergeRows)
	}
	for _, tc := range []struct {
		rows  int64
		class int
	}{
		{0, 0}, {1, 0}, {3, 0}, {4, 1}, {15, 1}, {16, 2}, {63, 2}, {64, 3}, {255, 3}, {256, 4},
		{4095, 5}, {4096, 6}, {16383, 6}, {16384, 7}, {65535, 7}, {65536, 8}, {262143, 8}, {262144, 9},
	} {
		if got := sizeClass(tc.rows); got != tc.class {
			t.Errorf("sizeClass(%d) = %d, want %d", tc.rows, got, tc.class)
		}
	}
}

// TestPlanCompaction runs the cases of testdata/compaction/*.txt, written
// by hand from the rule (see compactionCase for the format).
func TestPlanCompaction(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "compaction", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no cases in testdata/compaction")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			for _, c := range readCompactionCases(t, file) {
				if got := c.run(t); got != c.want {
					t.Errorf("%s:%d: %s\ngot:\n%swant:\n%s", file, c.line, c.command, got, c.want)
				}
			}
		})
	}
}

// A compactionCase is one case of a testdata/compaction file:
//
//	# comments
//	plan                                  (or compact)
//	month=2026-01 rows=16 path=part-1a    (one line per file; hot=true marks a hot one)
//	...
//	----
//	the expected output
//	(a blank line or the end of the file ends the case)
//
// The lines are one table's files of one cluster; the test gives them to
// the plan in path order, as the manifest lists them, whatever their order
// in the case (path is the file's name in its month's directory).
//
// plan prints the group planCompaction returns, one file a line as in the
// input, or "none". compact does what Txn.Compact does for one table:
// it plans and merges until the plan is none, a merge replacing its group
// by one settled segment of their rows named part-m<round> (after every
// hex name in path order); it prints one line a round,
// "round <n>: month=<m> <paths> -> part-m<n> rows=<sum>", then "left:" and
// the files left.
type compactionCase struct {
	line    int
	command string
	files   []Partition
	want    string
}

// readCompactionCases parses file's cases.
func readCompactionCases(t *testing.T, file string) []compactionCase {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []compactionCase
	var c *compactionCase
	inWant := false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case c == nil && (line == "" || strings.HasPrefix(line, "#")):
		case c == nil:
			if line != "plan" && line != "compact" {
				t.Fatalf("%s:%d: %q: want plan or compact", file, n, line)
			}
			c = &compactionCase{line: n, command: line}
		case inWant && line == "":
			cases = append(cases, *c)
			c, inWant = nil, false
		case inWant:
			c.want += line + "\n"
		case line == "----":
			inWant = true
		default:
			p, err := parseCaseFile(line)
			if err != nil {
				t.Fatalf("%s:%d: %v", file, n, err)
			}
			c.files = append(c.files, p)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if c != nil {
		if !inWant {
			t.Fatalf("%s:%d: case without ----", file, c.line)
		}
		cases = append(cases, *c)
	}
	return cases
}

// parseCaseFile parses a file line of a case into the manifest entry of a
// usage segment of cluster c1.
func parseCaseFile(line string) (Partition, error) {
	p := Partition{Table: schemas.TableUsage, Cluster: "c1"}
	name := ""
	for _, f := range strings.Fields(line) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return p, fmt.Errorf("%q: want key=value", f)
		}
		var err error
		switch k {
		case "month":
			p.Month = v
		case "rows":
			p.Rows, err = strconv.ParseInt(v, 10, 64)
		case "hot":
			p.Hot, err = strconv.ParseBool(v)
		case "path":
			name = v
		default:
			err = fmt.Errorf("unknown key %q", k)
		}
		if err != nil {
			return p, fmt.Errorf("%q: %w", f, err)
		}
	}
	if p.Month == "" || name == "" {
		return p, fmt.Errorf("%q: want a month and a path", line)
	}
	p.Path = casePath(p.Month, name)
	return p, nil
}

// casePath is the path of file name of the month's usage partition.
func casePath(month, name string) string {
	return "usage/cluster=c1/month=" + month + "/" + name + ".parquet"
}

// caseName is the name a case gives file p.
func caseName(p Partition) string { return strings.TrimSuffix(path.Base(p.Path), ".parquet") }

// formatCaseFile prints p as a file line of a case.
func formatCaseFile(p Partition) string {
	s := fmt.Sprintf("month=%s rows=%d path=%s", p.Month, p.Rows, caseName(p))
	if p.Hot {
		s += " hot=true"
	}
	return s
}

// run runs the case and returns its output.
func (c compactionCase) run(t *testing.T) string {
	files := slices.Clone(c.files)
	slices.SortFunc(files, func(a, b Partition) int { return strings.Compare(a.Path, b.Path) })
	var b strings.Builder
	if c.command == "plan" {
		group := planCompaction(files)
		if len(group) == 0 {
			return "none\n"
		}
		for _, p := range group {
			b.WriteString(formatCaseFile(p) + "\n")
		}
		return b.String()
	}
	for round := 1; ; round++ {
		group := planCompaction(files)
		if len(group) == 0 {
			break
		}
		if round > 9 {
			t.Fatalf("line %d: more than 9 rounds", c.line)
		}
		merged := Partition{Table: group[0].Table, Cluster: group[0].Cluster, Month: group[0].Month}
		merged.Path = casePath(merged.Month, fmt.Sprintf("part-m%d", round))
		var names []string
		for _, p := range group {
			merged.Rows += p.Rows
			names = append(names, caseName(p))
			files = slices.DeleteFunc(files, func(q Partition) bool { return q.Path == p.Path })
		}
		fmt.Fprintf(&b, "round %d: month=%s %s -> %s rows=%d\n", round, merged.Month, strings.Join(names, " "), caseName(merged), merged.Rows)
		files = append(files, merged)
		slices.SortFunc(files, func(a, b Partition) int { return strings.Compare(a.Path, b.Path) })
	}
	b.WriteString("left:\n")
	for _, p := range files {
		b.WriteString(formatCaseFile(p) + "\n")
	}
	return b.String()
}

// compactRow returns rows of table for TestCompact: one row, the i-th of
// its kind (distinct rows give distinct files).
func compactRow(t *testing.T, table string, i int) any {
	switch table {
	case schemas.TableJobs:
		r := sampleJobs()[0]
		r.JobIDRaw, r.JobID = int64(1000+i), strconv.Itoa(1000+i)
		return []record.JobRow{r}
	case schemas.TableUsage:
		r := sampleUsage()[0]
		r.BillingSec = float64(i + 1)
		return []record.UsageRow{r}
	case schemas.TableFairshare:
		r := sampleFairshare()[0]
		r.RawUsage = ptr(float64(i + 1))
		return []record.FairshareRow{r}
	case schemas.TableAssociations:
		r := sampleAssociations()[0]
		r.SourceFile = fmt.Sprintf("assoc-%d.txt", i)
		return []record.AssociationRow{r}
	case schemas.TableRuns:
		r := sampleRun()
		r.RunID = fmt.Sprintf("%016x", i+1)
		return []record.RunRow{r}
	case schemas.TablePriority:
		r := recordtest.Priority()[0]
		r.JobID = int64(1000 + i)
		return []record.PriorityRow{r}
	}
	t.Fatalf("no rows for table %s", table)
	return nil
}

// TestCompact: Txn.Compact merges, in every table, four one-row settled
// segments of January of cluster c1 — two of the base, two the commit
// wrote — into one of 4 rows: 6 tables x 4 = 24 segments merged. A hot
// usage segment of c1 and four usage segments of c2 stay; a second
// Compact finds nothing to merge.
func TestCompact(t *testing.T) {
	t.Parallel()
	h := openHistory(t)
	write := func(tx *Txn, table, cluster string, i int, hot bool) {
		t.Helper()
		if _, err := tx.Write(table, cluster, jan, compactRow(t, table, i), hot); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := h.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for _, def := range schemas.Tables() {
		write(tx, def.Name, "c1", 0, false)
		write(tx, def.Name, "c1", 1, false)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if tx, err = h.Begin(); err != nil {
		t.Fatal(err)
	}
	for _, def := range schemas.Tables() {
		write(tx, def.Name, "c1", 2, false)
		write(tx, def.Name, "c1", 3, false)
	}
	write(tx, schemas.TableUsage, "c1", 4, true)
	for i := range 4 {
		write(tx, schemas.TableUsage, "c2", i, false)
	}
	merged, err := tx.Compact("c1")
	if err != nil || merged != 24 {
		t.Fatalf("Compact = %d, %v; want 24", merged, err)
	}
	if merged, err := tx.Compact("c1"); err != nil || merged != 0 {
		t.Errorf("second Compact = %d, %v; want 0", merged, err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	for _, def := range schemas.Tables() {
		var settled, hot []Partition
		for _, p := range histFiles(t, h, def.Name, "c1", "2025-01") {
			if p.Hot {
				hot = append(hot, p)
			} else {
				settled = append(settled, p)
			}
		}
		wantHot := 0
		if def.Name == schemas.TableUsage {
			wantHot = 1
		}
		if len(settled) != 1 || settled[0].Rows != 4 || len(hot) != wantHot {
			t.Errorf("%s: settled %+v, hot %+v; want one settled segment of 4 rows and %d hot", def.Name, settled, hot, wantHot)
		}
	}
	if files := histFiles(t, h, schemas.TableUsage, "c2", "2025-01"); len(files) != 4 {
		t.Errorf("c2's usage: %d files, want its 4", len(files))
	}
	v, err := h.View()
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	var usage []record.UsageRow
	if err := v.ReadPartition(schemas.TableUsage, "c1", jan, &usage); err != nil {
		t.Fatal(err)
	}
	var billing []float64
	for _, r := range usage {
		billing = append(billing, r.BillingSec)
	}
	slices.Sort(billing)
	if want := []float64{1, 2, 3, 4, 5}; !slices.Equal(billing, want) {
		t.Errorf("c1's usage billing_sec = %v, want %v", billing, want)
	}
}
