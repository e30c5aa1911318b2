package repotest

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// repoFiles returns the module root and the repository's tracked files
// (git ls-files), or, without git, every file under the root but .git.
func repoFiles(t *testing.T) (string, []string) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "-C", root, "ls-files", "-z").Output(); err == nil {
		var files []string
		for _, f := range strings.Split(string(out), "\x00") {
			if f != "" {
				files = append(files, filepath.FromSlash(f))
			}
		}
		return root, files
	}
	var files []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(root, p)
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return root, files
}

// textLines reads a file and splits it into lines; binary files (a NUL in
// the first 8000 bytes) and files gone from the work tree give nil.
func textLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil // deleted in the work tree, not yet committed
		}
		t.Fatal(err)
	}
	head := data
	if len(head) > 8000 {
		head = head[:8000]
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return nil
	}
	return strings.Split(string(data), "\n")
}

// outsidePatterns match what the repository must not cite: the reference
// document kept outside it and paths of the machine it was written on. They
// are built from pieces so that this file does not match them. The work
// directory counts only at the root of a path, not inside one such as the
// home/slurm/work tree a third-party slurm.conf names.
var outsidePatterns = []struct {
	re   *regexp.Regexp
	what string
}{
	{regexp.MustCompile(`SLURM-` + `SEMANTICS`), "cites the outside reference document; cite docs/slurm-semantics.md §N"},
	{regexp.MustCompile(`(^|[^A-Za-z0-9_.~-])/` + `work/`), "a path on the development machine; cite the sample's public origin"},
	{regexp.MustCompile(`\.\./` + `shared`), "a path outside the repository; cite the sample's public origin"},
	{regexp.MustCompile(`shared/` + `(realdata|seeds)`), "a path outside the repository; cite the sample's public origin"},
}

// TestNoOutsideCitations fails, naming file and line, for any tracked text
// file that cites something outside the repository (outsidePatterns).
func TestNoOutsideCitations(t *testing.T) {
	t.Parallel()
	root, files := repoFiles(t)
	for _, f := range files {
		for i, line := range textLines(t, filepath.Join(root, f)) {
			for _, p := range outsidePatterns {
				if p.re.MatchString(line) {
					t.Errorf("%s:%d: %s: %s", filepath.ToSlash(f), i+1, p.what, strings.TrimSpace(line))
				}
			}
		}
	}
}

var (
	// docHeading matches a numbered heading: "## 2. Usage", "### 2.1 The unit".
	docHeading = regexp.MustCompile(`^#{2,4} (\d+(?:\.\d+)*)\.?\s`)
	// semanticsCite and versionsCite match an explicit citation of a section.
	semanticsCite = regexp.MustCompile(`slurm-semantics\.md §(\d+(?:\.\d+)*)`)
	versionsCite  = regexp.MustCompile(`slurm-versions(?:\.md)? §(\d+(?:\.\d+)*)`)
	// bareCite matches any section sign with a number.
	bareCite = regexp.MustCompile(`§(\d+(?:\.\d+)*)`)
)

// docSections returns the section numbers of a document's numbered headings.
func docSections(t *testing.T, path string) map[string]bool {
	t.Helper()
	lines := textLines(t, path)
	if lines == nil {
		t.Fatalf("%s: missing", path)
	}
	secs := map[string]bool{}
	for _, l := range lines {
		if m := docHeading.FindStringSubmatch(l); m != nil {
			secs[m[1]] = true
		}
	}
	return secs
}

// TestDocSectionCitations fails when a file cites a section that
// docs/slurm-semantics.md (or docs/slurm-versions.md) lacks. Explicit
// citations ("slurm-semantics.md §N", "slurm-versions.md §N") are checked in
// every tracked text file. In Go files, test scripts and
// docs/slurm-semantics.md itself a bare "§N" means docs/slurm-semantics.md,
// unless its line names slurm-versions; those are checked too.
func TestDocSectionCitations(t *testing.T) {
	t.Parallel()
	root, files := repoFiles(t)
	semantics := docSections(t, filepath.Join(root, "docs", "slurm-semantics.md"))
	versions := docSections(t, filepath.Join(root, "docs", "slurm-versions.md"))
	bareMeansSemantics := func(f string) bool {
		switch filepath.Ext(f) {
		case ".go", ".txtar", ".sacctmgr", ".conf":
			return true
		}
		return filepath.ToSlash(f) == "docs/slurm-semantics.md"
	}
	for _, f := range files {
		for i, line := range textLines(t, filepath.Join(root, f)) {
			if !strings.Contains(line, "§") {
				continue
			}
			at := filepath.ToSlash(f) + ":" + strconv.Itoa(i+1)
			for _, m := range semanticsCite.FindAllStringSubmatch(line, -1) {
				if !semantics[m[1]] {
					t.Errorf("%s: cites docs/slurm-semantics.md §%s, which the document lacks", at, m[1])
				}
			}
			for _, m := range versionsCite.FindAllStringSubmatch(line, -1) {
				if !versions[m[1]] {
					t.Errorf("%s: cites docs/slurm-versions.md §%s, which the document lacks", at, m[1])
				}
			}
			if !bareMeansSemantics(f) || strings.Contains(line, "slurm-versions") {
				continue
			}
			for _, m := range bareCite.FindAllStringSubmatch(line, -1) {
				if !semantics[m[1]] {
					t.Errorf("%s: §%s is not a section of docs/slurm-semantics.md", at, m[1])
				}
			}
		}
	}
}

// mdLink matches a Markdown link or image target: [text](target) or
// ![alt](target), up to an optional "#anchor".
var mdLink = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s#]*)(#[^)\s]*)?\)`)

// TestDocLinks fails when a relative link in README.md or a tracked
// docs/*.md (docs/cli/ included) names a file or directory that does not
// exist, or an anchor within a document that has no such heading. Links
// inside code blocks and to other sites are not checked.
func TestDocLinks(t *testing.T) {
	t.Parallel()
	root, files := repoFiles(t)
	for _, f := range files {
		f = filepath.ToSlash(f)
		if f != "README.md" && !(strings.HasPrefix(f, "docs/") && strings.HasSuffix(f, ".md")) {
			continue
		}
		inCode := false
		for i, line := range textLines(t, filepath.Join(root, f)) {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				inCode = !inCode
			}
			if inCode {
				continue
			}
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target, anchor := m[1], strings.TrimPrefix(m[2], "#")
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				at := f + ":" + strconv.Itoa(i+1)
				path := filepath.Join(root, filepath.Dir(filepath.FromSlash(f)), filepath.FromSlash(target))
				if target == "" {
					path = filepath.Join(root, filepath.FromSlash(f))
				}
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s: link %q: no such file in the repository", at, m[1])
					continue
				}
				if anchor != "" && strings.HasSuffix(path, ".md") && !docAnchors(t, path)[anchor] {
					t.Errorf("%s: link %q: %s has no heading #%s", at, m[1]+m[2], filepath.Base(path), anchor)
				}
			}
		}
	}
}

// docAnchors returns the anchors GitHub gives a document's headings: lower
// case, punctuation but '-' and '_' dropped, spaces as '-'.
func docAnchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	anchors := map[string]bool{}
	inCode := false
	for _, l := range textLines(t, path) {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			inCode = !inCode
		}
		if inCode || !strings.HasPrefix(l, "#") {
			continue
		}
		h := strings.ToLower(strings.TrimSpace(strings.TrimLeft(l, "#")))
		var b strings.Builder
		for _, r := range h {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		anchors[b.String()] = true
	}
	return anchors
}
