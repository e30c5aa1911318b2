package ingest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// DatedAssociations is one dump of a site's association tree and the time
// from which it is in force.
type DatedAssociations struct {
	// Effective is 00:00 of the date in the file name, in the site's zone.
	Effective time.Time
	// Assoc is the validated tree read from the file.
	Assoc *Associations
}

// ReadAssocDir reads a directory of dated association dumps
// (assoc-2025-03-01.psv, assoc-20250615.txt, ...): each file's date is the
// first YYYY-MM-DD (or, failing that, the first 8-digit YYYYMMDD) in its
// name, taken as 00:00 in loc. Each file is a `sacctmgr -P show assoc` dump
// or a sacctmgr script (see ReadAssocFile). Dot-files and subdirectories
// without a date in their name are ignored.
//
// A file without a date, an impossible date, two files with the same date or
// a subdirectory named like a dated dump (its tree would be missing without
// a word: the dumps must be files of dir itself) is an error naming them,
// and nothing is returned. Otherwise the
// result is sorted by Effective, stats holds one entry per dated file in the
// same order, and the files' own errors are joined; a file that could not
// be parsed at all is left out of the result (its error says why).
func ReadAssocDir(dir string, loc *time.Location) ([]DatedAssociations, []Stats, error) {
	if loc == nil {
		return nil, nil, fmt.Errorf("read association dir %s: no time zone given", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("read association dir: %w", err)
	}
	type dated struct {
		name string
		eff  time.Time
	}
	var (
		files []dated
		errs  []error
	)
	for _, e := range entries { // os.ReadDir sorts by name
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if e.IsDir() {
			if _, _, _, ok := assocFileDate(e.Name()); ok {
				errs = append(errs, newParseError(e.Name(), 0, "", "",
					"a directory named like a dated dump: the dumps must be files of the directory itself (move it out, or rename it without the date)"))
			}
			continue
		}
		y, m, d, ok := assocFileDate(e.Name())
		if !ok {
			errs = append(errs, newParseError(e.Name(), 0, "", "",
				"no date in the file name (want YYYY-MM-DD or YYYYMMDD, e.g. assoc-2025-03-01.psv)"))
			continue
		}
		eff := time.Date(y, time.Month(m), d, 0, 0, 0, 0, loc)
		if eff.Year() != y || int(eff.Month()) != m || eff.Day() != d {
			errs = append(errs, newParseError(e.Name(), 0, "", "",
				fmt.Sprintf("impossible date %04d-%02d-%02d in the file name", y, m, d)))
			continue
		}
		files = append(files, dated{e.Name(), eff})
	}
	sort.SliceStable(files, func(i, j int) bool { return files[i].eff.Before(files[j].eff) })
	for i := 1; i < len(files); i++ {
		if files[i].eff.Equal(files[i-1].eff) {
			errs = append(errs, newParseError(files[i].name, 0, "", "",
				fmt.Sprintf("same date as %s (%s)", files[i-1].name, files[i].eff.Format(time.DateOnly))))
		}
	}
	if len(errs) > 0 {
		return nil, nil, fmt.Errorf("read association dir %s: %w", dir, errors.Join(errs...))
	}
	if len(files) == 0 {
		return nil, nil, fmt.Errorf("read association dir %s: no association dumps", dir)
	}
	out := make([]DatedAssociations, 0, len(files))
	stats := make([]Stats, 0, len(files))
	for _, f := range files {
		a, st, err := ReadAssocFile(filepath.Join(dir, f.name))
		stats = append(stats, st)
		if err != nil {
			errs = append(errs, err)
		}
		if a != nil {
			out = append(out, DatedAssociations{Effective: f.eff, Assoc: a})
		}
	}
	return out, stats, errors.Join(errs...)
}

// AssocAt returns the newest dump in force at t: the last one whose
// Effective is at or before t. d must be sorted by Effective (as
// ReadAssocDir returns it). Before the first dump it returns false.
func AssocAt(d []DatedAssociations, t time.Time) (*Associations, bool) {
	i := sort.Search(len(d), func(i int) bool { return d[i].Effective.After(t) })
	if i == 0 {
		return nil, false
	}
	return d[i-1].Assoc, true
}

// assocFileDate finds the date in a file name: the first YYYY-MM-DD, else
// the first run of exactly 8 digits read as YYYYMMDD. It does not check that
// the date exists.
func assocFileDate(name string) (y, m, d int, ok bool) {
	digits := func(s string) (int, bool) {
		n := 0
		for i := 0; i < len(s); i++ {
			if s[i] < '0' || s[i] > '9' {
				return 0, false
			}
			n = n*10 + int(s[i]-'0')
		}
		return n, true
	}
	isDigit := func(i int) bool { return i >= 0 && i < len(name) && name[i] >= '0' && name[i] <= '9' }
	for i := 0; i+10 <= len(name); i++ {
		if isDigit(i-1) || isDigit(i+10) || name[i+4] != '-' || name[i+7] != '-' {
			continue
		}
		yy, ok1 := digits(name[i : i+4])
		mm, ok2 := digits(name[i+5 : i+7])
		dd, ok3 := digits(name[i+8 : i+10])
		if ok1 && ok2 && ok3 {
			return yy, mm, dd, true
		}
	}
	for i := 0; i+8 <= len(name); i++ {
		if isDigit(i-1) || isDigit(i+8) {
			continue
		}
		if v, ok := digits(name[i : i+8]); ok {
			return v / 10000, v / 100 % 100, v % 100, true
		}
	}
	return 0, 0, 0, false
}
