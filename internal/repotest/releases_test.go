package repotest

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fairledger/fairledger/internal/release"
)

var updateReleaseDoc = flag.Bool("update-release-doc", false,
	"rewrite the rows of docs/slurm-versions.md's table of release rules from internal/release.Rules, keeping each rule's section cell")

// releaseTableHeading is the heading of docs/slurm-versions.md's table of
// the rules in the code, whose rows repeat internal/release.Rules.
const releaseTableHeading = "## The rules in the code"

// TestReleaseRules keeps the one table of release rules
// (internal/release.Rules), docs/slurm-versions.md and the code together:
// the document's table lists exactly the table's rules, in its order;
// each rule is a release.Series value of its name, with a doc comment, in
// its package, at the release series the table says; and every top-level
// release.Series value outside internal/release is a rule of the table.
func TestReleaseRules(t *testing.T) {
	root, files := repoFiles(t)
	rules := release.Rules()
	if *updateReleaseDoc {
		writeReleaseTable(t, filepath.Join(root, "docs", "slurm-versions.md"), rules)
	}

	var want []string
	for _, r := range rules {
		want = append(want, ruleRow(r.Since.String(), r.Package, r.Name, r.Text))
	}
	got := releaseDocRows(t, filepath.Join(root, "docs", "slurm-versions.md"))
	inDoc, inRules := map[string]bool{}, map[string]bool{}
	for _, r := range got {
		inDoc[r] = true
	}
	for _, r := range want {
		inRules[r] = true
		if !inDoc[r] {
			t.Errorf("docs/slurm-versions.md %q lacks the row of internal/release.Rules\n  %s", releaseTableHeading, r)
		}
	}
	for _, r := range got {
		if !inRules[r] {
			t.Errorf("docs/slurm-versions.md %q has a row that is no rule of internal/release.Rules\n  %s", releaseTableHeading, r)
		}
	}
	if !t.Failed() && !slices.Equal(got, want) {
		t.Errorf("docs/slurm-versions.md %q: rows in another order than internal/release.Rules:\n  %s\nwant\n  %s",
			releaseTableHeading, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}

	decls := releaseDecls(t, root, files)
	listed := map[string]bool{}
	for _, r := range rules {
		key := r.Package + "." + r.Name
		listed[key] = true
		d, ok := decls[key]
		switch {
		case !ok:
			t.Errorf("rule %s (%s): no top-level release.Series value %s in package %s", key, r.Text, r.Name, r.Package)
		case d.since != r.Since.String():
			t.Errorf("rule %s: %s declares %s, internal/release.Rules says %s", key, d.pos, d.since, r.Since)
		case !d.doc:
			t.Errorf("rule %s: %s has no doc comment (say where in Slurm the rule comes from)", key, d.pos)
		}
	}
	for key, d := range decls {
		if !listed[key] {
			t.Errorf("%s: release.Series value %s (%s) is no rule of internal/release.Rules: add its row there and in docs/slurm-versions.md", d.pos, key, d.since)
		}
	}
}

// ruleRow is a rule as the test compares it: release, package, name, text.
func ruleRow(since, pkg, name, text string) string {
	return fmt.Sprintf("%s | %s | %s | %s", since, pkg, name, text)
}

// releaseDocRows returns the rows of the table under releaseTableHeading:
// from, package and name (backquotes taken off) and the rule text; the
// columns after the fourth are for readers.
func releaseDocRows(t *testing.T, path string) []string {
	t.Helper()
	lines := textLines(t, path)
	start := -1
	for i, l := range lines {
		if l == releaseTableHeading {
			start = i + 1
			break
		}
	}
	if start < 0 {
		t.Fatalf("%s: no heading %q", path, releaseTableHeading)
	}
	var rows []string
	inTable := false
	for _, l := range lines[start:] {
		if !strings.HasPrefix(l, "|") {
			if inTable || strings.HasPrefix(l, "#") {
				break
			}
			continue
		}
		if !inTable { // the header
			inTable = true
			continue
		}
		cells := strings.Split(strings.Trim(l, "|"), "|")
		if len(cells) < 4 {
			t.Errorf("%s: %q: want at least four cells (from, package, name, rule)", path, l)
			continue
		}
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if strings.Trim(cells[0], "-:") == "" {
			continue // the line under the header
		}
		rows = append(rows, ruleRow(cells[0], strings.Trim(cells[1], "`"), strings.Trim(cells[2], "`"), cells[3]))
	}
	return rows
}

// releaseDecl is a top-level release.Series value found in the code.
type releaseDecl struct {
	pos   string // file:line
	since string // X.YY
	doc   bool   // it has a doc comment
}

// releaseDecls returns the top-level values declared as a
// release.Series{Major: X, Minor: Y} literal in the module's tracked
// non-test Go files outside internal/release, by package path and name
// ("fairshare.lineageRowOrder").
func releaseDecls(t *testing.T, root string, files []string) map[string]releaseDecl {
	t.Helper()
	decls := map[string]releaseDecl{}
	fset := token.NewFileSet()
	for _, f := range files {
		f = filepath.ToSlash(f)
		if !strings.HasSuffix(f, ".go") || strings.HasSuffix(f, "_test.go") || strings.HasPrefix(f, "internal/release/") {
			continue
		}
		if textLines(t, filepath.Join(root, f)) == nil {
			continue // deleted in the work tree
		}
		file, err := parser.ParseFile(fset, filepath.Join(root, f), nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		pkg := filepath.ToSlash(filepath.Dir(f))
		for _, d := range file.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, s := range gd.Specs {
				vs := s.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if i >= len(vs.Values) {
						continue
					}
					since, ok := seriesLiteral(vs.Values[i])
					if !ok {
						continue
					}
					p := fset.Position(name.Pos())
					decls[pkg+"."+name.Name] = releaseDecl{
						pos:   fmt.Sprintf("%s:%d", f, p.Line),
						since: since,
						doc:   vs.Doc != nil || (len(gd.Specs) == 1 && gd.Doc != nil),
					}
				}
			}
		}
	}
	return decls
}

// seriesLiteral reads release.Series{Major: X, Minor: Y} as "X.YY".
func seriesLiteral(e ast.Expr) (string, bool) {
	cl, ok := e.(*ast.CompositeLit)
	if !ok {
		return "", false
	}
	sel, ok := cl.Type.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Series" {
		return "", false
	}
	if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "release" {
		return "", false
	}
	var s release.Series
	for _, el := range cl.Elts {
		kv, ok := el.(*ast.KeyValueExpr)
		if !ok {
			return "unkeyed", true
		}
		k, _ := kv.Key.(*ast.Ident)
		lit, _ := kv.Value.(*ast.BasicLit)
		if k == nil || lit == nil {
			return "not literal", true
		}
		n, err := strconv.Atoi(lit.Value)
		if err != nil {
			return "not literal", true
		}
		switch k.Name {
		case "Major":
			s.Major = n
		case "Minor":
			s.Minor = n
		}
	}
	return s.String(), true
}

// writeReleaseTable rewrites the rows of the table under
// releaseTableHeading in the document at path from rules, in their order:
// from, package, name and rule text from the list, and the section cell
// (for readers, not in the list) kept from the row of the same package and
// name, empty for a new rule. The header, the lines around the table and
// the rest of the document are left as they are.
func writeReleaseTable(t *testing.T, path string, rules []release.Rule) {
	t.Helper()
	lines := textLines(t, path)
	start := slices.Index(lines, releaseTableHeading)
	if start < 0 {
		t.Fatalf("%s: no heading %q", path, releaseTableHeading)
	}
	head := start + 1
	for head < len(lines) && !strings.HasPrefix(lines[head], "|") {
		head++
	}
	if head+1 >= len(lines) {
		t.Fatalf("%s: no table under %q", path, releaseTableHeading)
	}
	end := head + 2 // past the header and the line under it
	section := map[string]string{}
	for ; end < len(lines) && strings.HasPrefix(lines[end], "|"); end++ {
		cells := strings.Split(strings.Trim(lines[end], "|"), "|")
		if len(cells) >= 5 {
			key := strings.Trim(strings.TrimSpace(cells[1]), "`") + "." + strings.Trim(strings.TrimSpace(cells[2]), "`")
			section[key] = strings.TrimSpace(cells[4])
		}
	}
	var rows []string
	for _, r := range rules {
		rows = append(rows, fmt.Sprintf("| %s | `%s` | `%s` | %s | %s |", r.Since, r.Package, r.Name, r.Text, section[r.Package+"."+r.Name]))
	}
	out := slices.Concat(lines[:head+2], rows, lines[end:])
	if err := os.WriteFile(path, []byte(strings.Join(out, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
}
