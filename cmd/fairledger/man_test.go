package main

import (
	"bytes"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// TestManPage: `fairledger man` prints a roff page whose COMMANDS section has
// one subsection per command of the app (the hidden man command aside), each
// naming every flag of its command; the global flags and the exit codes are
// there too, and the page is plain ASCII.
func TestManPage(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	if code := run([]string{"fairledger", "man"}, &out, &errb); code != exitOK {
		t.Fatalf("fairledger man: exit %d, stderr %q", code, errb.String())
	}
	page := out.String()
	if !strings.HasPrefix(page, ".nh\n.TH FAIRLEDGER 1 ") {
		t.Errorf("the page starts %q, want .nh then .TH FAIRLEDGER 1", page[:min(len(page), 40)])
	}
	for i, r := range page {
		if r >= 0x80 {
			t.Errorf("byte %d: %q is not ASCII (write it as \\[uXXXX])", i, r)
			break
		}
	}
	// Cut the page at its .SH and .SS lines.
	sections := map[string]string{}
	var order []string
	name := ""
	for _, line := range strings.Split(page, "\n") {
		if h, ok := strings.CutPrefix(line, ".SH "); ok {
			name = h
			order = append(order, name)
			sections[name] = ""
			continue
		}
		if h, ok := strings.CutPrefix(line, ".SS "); ok {
			name = "command " + h
			order = append(order, name)
			sections[name] = ""
			continue
		}
		sections[name] += line + "\n"
	}
	app := newApp(io.Discard, io.Discard)
	for _, want := range []string{"NAME", "SYNOPSIS", "DESCRIPTION", "GLOBAL OPTIONS", "COMMANDS", "EXIT STATUS", "FILES", "SEE ALSO"} {
		if _, ok := sections[want]; !ok {
			t.Errorf("no section %s (sections: %q)", want, order)
		}
	}
	for _, f := range app.Flags {
		if !strings.Contains(sections["GLOBAL OPTIONS"], `\fB--`+f.Names()[0]+`\fP`) {
			t.Errorf("GLOBAL OPTIONS does not name --%s", f.Names()[0])
		}
	}
	for _, code := range []string{"0", "1", "2", "3", "130, 143"} {
		if !strings.Contains(sections["EXIT STATUS"], `\fB`+code+`\fP`) {
			t.Errorf("EXIT STATUS does not list exit %s", code)
		}
	}
	n := 0
	for _, c := range app.Commands {
		body, ok := sections["command "+c.Name]
		if c.Hidden {
			if ok {
				t.Errorf("the hidden command %s has a section", c.Name)
			}
			continue
		}
		n++
		if !ok {
			t.Errorf("no section for the command %s (sections: %q)", c.Name, order)
			continue
		}
		if !strings.Contains(body, `\fBfairledger `+c.Name+`\fP`) {
			t.Errorf("section %s has no usage line \\fBfairledger %s\\fP", c.Name, c.Name)
		}
		for _, f := range c.Flags {
			for _, fn := range f.Names() {
				dash := "--"
				if len(fn) == 1 {
					dash = "-"
				}
				if !strings.Contains(body, `\fB`+dash+fn+`\fP`) {
					t.Errorf("section %s does not name its flag %s%s", c.Name, dash, fn)
				}
			}
		}
	}
	if n < 10 {
		t.Errorf("%d commands checked; the app has more than ten", n)
	}
}

// TestManPageGroff: groff, where it is installed, formats the page without
// a warning (-ww: every warning), so man shows it as written.
func TestManPageGroff(t *testing.T) {
	t.Parallel()
	groff, err := exec.LookPath("groff")
	if err != nil {
		t.Skip("groff is not installed")
	}
	var out, errb bytes.Buffer
	if code := run([]string{"fairledger", "man"}, &out, &errb); code != exitOK {
		t.Fatalf("fairledger man: exit %d, stderr %q", code, errb.String())
	}
	cmd := exec.Command(groff, "-man", "-Tutf8", "-ww", "-z")
	cmd.Stdin = &out
	msg, err := cmd.CombinedOutput()
	if err != nil || len(msg) > 0 {
		t.Errorf("groff -man -ww: %v\n%s", err, msg)
	}
}
