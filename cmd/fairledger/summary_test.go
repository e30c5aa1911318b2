package main

import (
	"strings"
	"testing"

	"github.com/fairledger/fairledger/pipeline"
)

// The summary line names dropped duplicates only when there are some.
func TestSummaryLineDuplicates(t *testing.T) {
	s := &pipeline.Summary{RunID: "r", Cluster: "c"}
	if line := summaryLine(s); strings.Contains(line, "duplicates") {
		t.Errorf("no duplicates, yet: %s", line)
	}
	s.Duplicates = 3
	if line := summaryLine(s); !strings.Contains(line, "; duplicates dropped 3 ") {
		t.Errorf("3 duplicates, not named: %s", line)
	}
}
