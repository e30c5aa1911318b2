package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/cpuguy83/go-md2man/v2/md2man"
	"github.com/urfave/cli/v2"
)

// manCommand prints the manual page fairledger(1), generated from the app's
// commands and flags; the package build gzips it into
// /usr/share/man/man1/fairledger.1.gz. Hidden: it is for packagers.
func manCommand(stdout io.Writer) *cli.Command {
	return &cli.Command{
		Name:      "man",
		Usage:     "print the manual page fairledger(1) in roff, generated from the commands and flags",
		Hidden:    true,
		ArgsUsage: " ",
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			_, err := io.WriteString(stdout, manPage(c.App))
			return err
		},
	}
}

// manPage renders the manual page of app in roff: the Markdown of
// manMarkdown through go-md2man (what urfave/cli's ToMan uses too; its own
// template leaves out the descriptions, the arguments and the exit codes).
// Every character outside ASCII (–, ≥, →) is written as groff's \[uXXXX],
// so the page reads the same whatever encoding man assumes.
func manPage(app *cli.App) string {
	roff := md2man.Render([]byte(manMarkdown(app)))
	var b strings.Builder
	for _, r := range string(roff) {
		if r < 0x80 {
			b.WriteRune(r)
		} else {
			fmt.Fprintf(&b, "\\[u%04X]", r)
		}
	}
	return b.String()
}

// manMarkdown writes the manual page as go-md2man's Markdown: the title
// block (name, section 1, no date so that a build is reproducible, the
// version), NAME, SYNOPSIS, the global options, one subsection per visible
// command (its usage line, description and flags sorted by name), the exit
// codes, the files of the packaged install and where the rest is documented.
func manMarkdown(app *cli.App) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%% %s 1 \"\" %q \"User Commands\"\n\n", strings.ToUpper(app.Name), app.Name+" "+app.Version)
	fmt.Fprintf(&b, "# NAME\n\n%s - %s\n\n", app.Name, manEscape(app.Usage))
	fmt.Fprintf(&b, "# SYNOPSIS\n\n**%s** [*global options*] *command* [*command options*] [*arguments*]\n\n", app.Name)
	b.WriteString("# DESCRIPTION\n\n")
	fmt.Fprintf(&b, "%s.\n\n", manEscape(capitalize(app.Usage)))
	fmt.Fprintf(&b, "Commands:")
	for i, c := range visibleCommands(app) {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, " **%s**", c.Name)
	}
	b.WriteString(". Global options go before the command. " +
		"**fairledger** *command* **--help** prints the same as this page for one command.\n\n")
	b.WriteString("# GLOBAL OPTIONS\n\n")
	manFlags(&b, app.Flags)
	b.WriteString("# COMMANDS\n\n")
	for _, c := range visibleCommands(app) {
		fmt.Fprintf(&b, "### %s\n\n%s.\n\n", c.Name, manEscape(capitalize(c.Usage)))
		args := strings.TrimSpace(c.ArgsUsage)
		if args != "" {
			args = " " + manEscape(args)
		}
		fmt.Fprintf(&b, "**%s %s** [*options*]%s\n\n", app.Name, c.Name, args)
		if d := strings.TrimSpace(c.Description); d != "" {
			b.WriteString(manEscape(strings.Join(strings.Fields(d), " ")) + "\n\n")
		}
		manFlags(&b, c.Flags)
	}
	b.WriteString("# EXIT STATUS\n\n")
	for _, line := range strings.Split(strings.TrimPrefix(exitCodesHelp, "EXIT CODES:\n"), "\n") {
		code, meaning, _ := strings.Cut(strings.TrimSpace(line), "  ")
		fmt.Fprintf(&b, "**%s**\n: %s\n\n", manEscape(code), manEscape(strings.TrimSpace(meaning)))
	}
	b.WriteString("# FILES\n\n" +
		"*/etc/fairledger/fairledger.toml*\n: the configuration of **fairledger nightly** " +
		"(**--config** or **$FAIRLEDGER_CONFIG** name another)\n\n" +
		"*/var/lib/fairledger/history*\n: the history, in the example configuration\n\n" +
		"*/usr/lib/systemd/system/fairledger-nightly.timer*\n: runs **fairledger nightly** every night " +
		"once enabled\n\n" +
		"*/usr/share/doc/fairledger*\n: the documentation: operations.md, sql.md, sshare.md, sprio.md " +
		"and the rest\n\n")
	b.WriteString("# SEE ALSO\n\n**sacct**(1), **sacctmgr**(1), **sshare**(1), **sprio**(1), **slurm.conf**(5)\n")
	return b.String()
}

// visibleCommands is app's commands without the hidden ones, in app order.
func visibleCommands(app *cli.App) []*cli.Command {
	var cs []*cli.Command
	for _, c := range app.Commands {
		if !c.Hidden {
			cs = append(cs, c)
		}
	}
	return cs
}

// manFlags writes one definition per flag, sorted by name: the flag and its
// aliases with the default as --help shows it, then its usage.
func manFlags(b *strings.Builder, flags []cli.Flag) {
	sorted := append([]cli.Flag(nil), flags...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Names()[0] < sorted[j].Names()[0] })
	for _, f := range sorted {
		var names []string
		for _, n := range f.Names() {
			if len(n) == 1 {
				names = append(names, "**-"+n+"**")
			} else {
				names = append(names, "**--"+n+"**")
			}
		}
		term, usage := strings.Join(names, ", "), ""
		if d, ok := f.(cli.DocGenerationFlag); ok {
			if d.TakesValue() {
				def := d.GetDefaultText()
				if def == `""` {
					def = ""
				}
				term += " *value*"
				if def != "" {
					usage = " (default: " + manEscape(def) + ")"
				}
			}
			usage = manEscape(strings.Join(strings.Fields(d.GetUsage()), " ")) + usage
		}
		fmt.Fprintf(b, "%s\n: %s\n\n", term, usage)
	}
}

// manEscape escapes the characters Markdown would read as emphasis, links,
// HTML or an escape in a text from the CLI (`PriorityWeight*`, `<path>`);
// backquotes stay, so `fairledger run` prints as code.
func manEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\*_[]<>`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// capitalize upper-cases a usage line's first letter for a sentence.
func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
