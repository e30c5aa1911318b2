package report

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"
)

// The files of --all-accounts: one report per lab, named by FileNames,
// and an index page (IndexName + ".html") that links every report by the
// lab's real name.

// IndexName is the base name of the index page of --all-accounts; no
// lab's report takes it.
const IndexName = "index"

// MaxFileBase is the longest base name (bytes, without the extension)
// FileNames gives: with ".html" and the writer's temporary-file affixes it
// stays far below the 255 bytes of most file systems (and the 143 of
// eCryptfs).
const MaxFileBase = 100

// hashLen is how many hex digits of the SHA-256 of a lab's name tell
// apart labs whose names sanitise to the same file name.
const hashLen = 8

// sanitizeFileName maps a name to the letters of a portable, visible file
// name: ASCII letters, digits, '-', '_' and '.' are kept, every other
// character (one '_' per character, not per byte: control characters
// too), the leading dots and a leading '-' become '_', so that no file
// name is hidden or read as an option by the commands an admin runs on
// it (rm, mv, mail).
func sanitizeFileName(name string) string {
	var b strings.Builder
	b.Grow(len(name))
	lead := true
	for i, r := range name {
		switch {
		case r == '.' && lead, r == '-' && i == 0:
			r = '_'
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			lead = false
		default:
			r, lead = '_', false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// hashedFileName is the sanitised name cut to fit, a '-' and the first
// hashLen hex digits of the SHA-256 of the real name.
func hashedFileName(name string) string {
	s := sanitizeFileName(name)
	if n := MaxFileBase - 1 - hashLen; len(s) > n {
		s = s[:n] // ASCII: any cut is a character boundary
	}
	sum := sha256.Sum256([]byte(name))
	return s + "-" + hex.EncodeToString(sum[:])[:hashLen]
}

// FileNames returns the base file name (no extension) of each lab's
// report, in the order of labs, which must be distinct. A name that is
// already a portable, visible file name of at most MaxFileBase bytes is
// kept as it is; any other (characters outside [A-Za-z0-9._-], a leading
// '.' or '-', too long, empty, or "index" in any case) is sanitised, cut and
// given "-" and 8 hex digits of the SHA-256 of the real name: "a/b" is
// "a_b-<hash>" beside "a_b", "café" and "cafè" get different hashes.
// Each lab's name depends on its own name only, so it stays the same
// from night to night, except where two names differ only in case
// ("LabA", "laba"): both then take the hashed form, so that the files
// stay distinct on a case-insensitive file system too. An error means
// two labs still share a name (a 32-bit hash collision).
func FileNames(labs []string) ([]string, error) {
	files := make([]string, len(labs))
	for i, lab := range labs {
		if s := sanitizeFileName(lab); s == lab && lab != "" && len(lab) <= MaxFileBase && !strings.EqualFold(lab, IndexName) {
			files[i] = lab
		} else {
			files[i] = hashedFileName(lab)
		}
	}
	// Names equal but for case: every one of them takes the hashed form.
	byKey := map[string][]int{}
	for i, f := range files {
		k := strings.ToLower(f)
		byKey[k] = append(byKey[k], i)
	}
	for _, idx := range byKey {
		if len(idx) > 1 {
			for _, i := range idx {
				files[i] = hashedFileName(labs[i])
			}
		}
	}
	seen := make(map[string]int, len(files))
	for i, f := range files {
		k := strings.ToLower(f)
		if j, ok := seen[k]; ok {
			return nil, fmt.Errorf("report file names: accounts %q and %q both give %q", labs[j], labs[i], f)
		}
		seen[k] = i
	}
	return files, nil
}

// IndexEntry is one lab's line of the index page.
type IndexEntry struct {
	// Account is the lab's real name; File its report's file name, with
	// extension, relative to the index.
	Account, File string
}

// WriteIndex writes the index page of --all-accounts: one self-contained
// HTML page linking every report of entries (in their order) by the lab's
// real name, with the cluster and period the reports cover.
func (d *Dataset) WriteIndex(w io.Writer, entries []IndexEntry) error {
	var b strings.Builder
	title := "Fair-share reports: " + d.Cluster
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"+
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>%s</title>\n<style>\n%s\n</style>\n</head>\n<body>\n",
		esc(title), pageCSS)
	fmt.Fprintf(&b, "<header>\n<h1>%s</h1>\n<p class=\"meta\">Cluster %s · %s · last snapshot %s · %d labs</p>\n</header>\n<ul>\n",
		esc(title), esc(d.Cluster), esc(periodLabel(d.From, d.To)), esc(fmtTime(d.Last)), len(entries))
	for _, e := range entries {
		fmt.Fprintf(&b, "<li><a href=\"%s\">%s</a></li>\n", esc((&url.URL{Path: e.File}).EscapedPath()), esc(e.Account))
	}
	b.WriteString("</ul>\n<footer>Written by fairledger report --all-accounts.</footer>\n</body>\n</html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// periodLabel prints a period [from, to) as its first and last UTC days,
// "2025-01-01 to 2025-03-31".
func periodLabel(from, to time.Time) string {
	end := to
	if end.Equal(end.Truncate(24 * time.Hour)) {
		end = end.Add(-24 * time.Hour)
	}
	if !end.After(from) {
		end = from
	}
	return fmt.Sprintf("%s to %s", from.Format(time.DateOnly), end.Format(time.DateOnly))
}
