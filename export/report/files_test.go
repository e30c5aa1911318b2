package report

import (
	"slices"
	"strings"
	"testing"
)

// TestFileNames: the collisions of issue 23 ("a/b" and "a_b" both
// a_b.html, "café" and "cafè" both caf_.html, a 245-byte name too long
// with its temporary file, "." names hidden) get distinct, visible,
// bounded names. The 8 hex digits are the start of `printf %s NAME |
// sha256sum`, computed with coreutils.
func TestFileNames(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("l", 245)
	tests := []struct{ lab, want string }{
		{"a/b", "a_b-c14cddc0"},
		{"a_b", "a_b"},
		{"caf\u00e9", "caf_-850f7dc4"}, // é as UTF-8 c3 a9: one '_'
		{"caf\u00e8", "caf_-08dcdafd"},
		{long, strings.Repeat("l", MaxFileBase-9) + "-e5569f5c"},
		{".", "_-cdb4ee2a"},
		{"..", "__-5ec1f7e7"},
		{".hidden", "_hidden-16924190"},
		{"index", "index-1bc04b52"}, // the index page's name
		{"r&d", "r_d-dacc7c16"},
		{"lab.v2", "lab.v2"},              // a dot inside is kept
		{"LabX", "LabX-9a0336a1"},         // LabX and labx: one file on a
		{"labx", "labx-ede0512b"},         // case-insensitive file system
		{"farouk_lab", "farouk_lab"},      // plain names are kept
		{"-2+3+cmd", "_2_3_cmd-f945d0df"}, // never an option to a command
		{"-lab", "_lab-2f96df9f"},
		{"a\x1b[2Jb", "a__2Jb-ba68753a"}, // no control character
	}
	var labs, want []string
	for _, tc := range tests {
		labs, want = append(labs, tc.lab), append(want, tc.want)
	}
	got, err := FileNames(labs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range labs {
		if got[i] != want[i] {
			t.Errorf("FileNames: %q -> %q, want %q", labs[i], got[i], want[i])
		}
	}
	seen := map[string]bool{}
	for _, f := range got {
		k := strings.ToLower(f)
		if seen[k] {
			t.Errorf("file name %q given twice", f)
		}
		seen[k] = true
		if strings.HasPrefix(f, ".") || len(f) > MaxFileBase || strings.Trim(f, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") != "" {
			t.Errorf("file name %q: hidden, longer than %d bytes or not portable", f, MaxFileBase)
		}
	}
	// Stable: a lab's name does not depend on the other labs (LabX alone
	// is kept as it is, a case twin being what hashes it).
	alone, _ := FileNames([]string{"a/b", "LabX"})
	if !slices.Equal(alone, []string{"a_b-c14cddc0", "LabX"}) {
		t.Errorf("FileNames(a/b, LabX) = %q", alone)
	}
}

// TestWriteIndex: the index links each report by the lab's real name,
// HTML-escaped, with the period and cluster.
func TestWriteIndex(t *testing.T) {
	t.Parallel()
	d := &Dataset{Cluster: "c<1>", From: day("2025-01-01"), To: day("2025-04-01"),
		Last: day("2025-04-01")}
	var b strings.Builder
	err := d.WriteIndex(&b, []IndexEntry{{"a/b", "a_b-c14cddc0.html"}, {"r&d", "r_d-dacc7c16.md"}, {"caf\u00e9", "caf_-850f7dc4.csv"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"<title>Fair-share reports: c&lt;1&gt;</title>",
		"Cluster c&lt;1&gt; · 2025-01-01 to 2025-03-31 · last snapshot 2025-04-01 00:00 UTC · 3 labs",
		`<li><a href="a_b-c14cddc0.html">a/b</a></li>`,
		`<li><a href="r_d-dacc7c16.md">r&amp;d</a></li>`,
		"<li><a href=\"caf_-850f7dc4.csv\">caf\u00e9</a></li>",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("index lacks %q:\n%s", want, b.String())
		}
	}
}
