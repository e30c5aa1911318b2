package ingest

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Bounds of hostlist expansion: Slurm refuses a range of more than 64K
// hosts (MAX_RANGE in src/common/hostlist.c); maxHostlistHosts bounds a
// whole expression, so that a typing slip cannot fill memory.
const (
	maxHostlistRange = 64 * 1024
	maxHostlistHosts = 1 << 20
)

// ExpandHostlist returns the host names of a Slurm hostlist expression, in
// the order Slurm lists them: "node[01-03,07]" is node01, node02, node03,
// node07. It reads the syntax of src/common/hostlist.c
// (_hostlist_create_bracketed) for one-dimensional clusters:
//
//   - hosts are separated by ',', ' ' or '\t' outside brackets;
//   - a bracket holds comma-separated numbers and lo-hi ranges; a number is
//     padded with zeros to the width of its range's lo ("[08-10]" is 08,
//     09, 10; "[8-10]" is 8, 9, 10);
//   - text may follow the last bracket ("node[1-2]-ib", as Slurm reads it
//     since 23.02), and a name may hold several brackets, each expanded in
//     turn with the last one varying fastest ("r[1-2]n[1-2]" is r1n1, r1n2,
//     r2n1, r2n2).
//
// A malformed bracket (no closing ']', an empty item, a range that is not
// lo-hi with lo <= hi, a sign or a space inside), a range of more than
// 65536 hosts and an expression of more than 2^20 hosts are errors. An
// empty expression has no hosts.
func ExpandHostlist(expr string) ([]string, error) {
	var out []string
	for _, tok := range hostlistTokens(expr) {
		var err error
		if out, err = appendHosts(out, tok); err != nil {
			return nil, fmt.Errorf("%q: %w", tok, err)
		}
	}
	return out, nil
}

// hostlistTokens splits a hostlist expression at separators (',', ' ',
// '\t') that are outside brackets.
func hostlistTokens(s string) []string {
	var toks []string
	depth, start := 0, -1
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '[':
			depth++
		case c == ']' && depth > 0:
			depth--
		case depth == 0 && (c == ',' || c == ' ' || c == '\t'):
			if start >= 0 {
				toks = append(toks, s[start:i])
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		toks = append(toks, s[start:])
	}
	return toks
}

// hostRange is one item of a bracket: lo to hi, printed width digits wide.
type hostRange struct {
	lo, hi uint64
	width  int
}

// appendHosts appends the hosts of one token to out.
func appendHosts(out []string, tok string) ([]string, error) {
	open := strings.LastIndexByte(tok, '[')
	if open < 0 {
		if strings.IndexByte(tok, ']') >= 0 {
			return nil, errors.New("']' without '['")
		}
		return append(out, tok), nil
	}
	end := strings.IndexByte(tok[open:], ']')
	if end < 0 {
		return nil, errors.New("'[' without ']'")
	}
	end += open
	prefix, inner, suffix := tok[:open], tok[open+1:end], tok[end+1:]
	if strings.IndexByte(suffix, ']') >= 0 {
		return nil, errors.New("']' without '['")
	}
	ranges, n, err := parseHostRanges(inner)
	if err != nil {
		return nil, err
	}
	// The prefix's own brackets, expanded first: they vary slowest.
	prefixes := []string{prefix}
	if strings.IndexByte(prefix, '[') >= 0 || strings.IndexByte(prefix, ']') >= 0 {
		if prefixes, err = appendHosts(nil, prefix); err != nil {
			return nil, err
		}
	}
	if total := uint64(len(out)) + uint64(len(prefixes))*n; total > maxHostlistHosts {
		return nil, fmt.Errorf("more than %d hosts", maxHostlistHosts)
	}
	var b []byte
	for _, p := range prefixes {
		for _, r := range ranges {
			for v := r.lo; ; v++ {
				b = append(b[:0], p...)
				num := strconv.AppendUint(nil, v, 10)
				for pad := r.width - len(num); pad > 0; pad-- {
					b = append(b, '0')
				}
				b = append(b, num...)
				b = append(b, suffix...)
				out = append(out, string(b))
				if v == r.hi { // not v <= hi: hi may be the largest uint64
					break
				}
			}
		}
	}
	return out, nil
}

// parseHostRanges parses the inside of a bracket ("01-03,07") and returns
// its ranges and how many hosts they hold.
func parseHostRanges(s string) ([]hostRange, uint64, error) {
	var out []hostRange
	var n uint64
	for _, item := range strings.Split(s, ",") {
		loS, hiS, isRange := strings.Cut(item, "-")
		if !allDigits(loS) || isRange && !allDigits(hiS) {
			return nil, 0, fmt.Errorf("bad range %q (want n or lo-hi)", item)
		}
		lo, err1 := strconv.ParseUint(loS, 10, 64)
		hi := lo
		var err2 error
		if isRange {
			hi, err2 = strconv.ParseUint(hiS, 10, 64)
		}
		switch {
		case err1 != nil || err2 != nil:
			return nil, 0, fmt.Errorf("bad range %q: number too large", item)
		case lo > hi:
			return nil, 0, fmt.Errorf("bad range %q: %d > %d", item, lo, hi)
		case hi-lo >= maxHostlistRange:
			return nil, 0, fmt.Errorf("range %q holds more than %d hosts", item, maxHostlistRange)
		}
		out = append(out, hostRange{lo: lo, hi: hi, width: len(loS)})
		n += hi - lo + 1
	}
	return out, n, nil
}
