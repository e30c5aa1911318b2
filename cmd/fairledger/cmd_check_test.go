package main

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/fairledger/fairledger/ingest"
)

func TestCapErrors(t *testing.T) {
	pe := func(file string, line int) error {
		return &ingest.ParseError{File: file, Line: line, Err: errors.New("bad")}
	}
	var many []error
	for i := 1; i <= 13; i++ {
		many = append(many, pe("a.conf", i))
	}
	tests := []struct {
		name string
		err  error
		want []string
	}{
		{"a few errors are all listed", errors.Join(pe("a.conf", 1), pe("a.conf", 2)),
			[]string{"ingest a.conf:1: bad", "ingest a.conf:2: bad"}},
		{"ten and three more", errors.Join(many...),
			[]string{"ingest a.conf:1: bad", "ingest a.conf:2: bad", "ingest a.conf:3: bad", "ingest a.conf:4: bad",
				"ingest a.conf:5: bad", "ingest a.conf:6: bad", "ingest a.conf:7: bad", "ingest a.conf:8: bad",
				"ingest a.conf:9: bad", "ingest a.conf:10: bad", "ingest a.conf: 3 more error(s) not shown"}},
		{"a reader's own count is added; each file capped alone, nested joins flattened",
			errors.Join(errors.Join(append(many, &ingest.MoreErrors{File: "a.conf", N: 500})...),
				errors.Join(pe("b.psv", 4)), fmt.Errorf("read association dir d: %w", errors.New("boom"))),
			[]string{"ingest a.conf:1: bad", "ingest a.conf:2: bad", "ingest a.conf:3: bad", "ingest a.conf:4: bad",
				"ingest a.conf:5: bad", "ingest a.conf:6: bad", "ingest a.conf:7: bad", "ingest a.conf:8: bad",
				"ingest a.conf:9: bad", "ingest a.conf:10: bad", "ingest a.conf: 503 more error(s) not shown",
				"ingest b.psv:4: bad", "read association dir d: boom"}},
		{"a single error", pe("c.psv", 0), []string{"ingest c.psv: bad"}},
	}
	for _, tt := range tests {
		got := strings.Split(capErrors(tt.err).Error(), "\n")
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got\n%s\nwant\n%s", tt.name, strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
		}
	}
}
