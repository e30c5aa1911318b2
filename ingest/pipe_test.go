package ingest

import (
	"errors"
	"github.com/apache/arrow-go/v18/arrow"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

// TestSacctPipeStalls checks that a named pipe whose writer stops writing
// (or that no writer ever opens) fails after SacctOptions.PipeTimeout
// without data, naming the file and the time waited, instead of hanging
// the run for ever.
func TestSacctPipeStalls(t *testing.T) {
	t.Parallel()
	const wait = 300 * time.Millisecond
	dir := t.TempDir()

	// A writer that writes the header and one row, then stalls, its end
	// kept open.
	stalled := mkfifo(t, dir, "stalled.psv")
	go func() {
		w, err := os.OpenFile(stalled, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		io.WriteString(w, hdr+boundsDone+"\n")
		time.Sleep(10 * wait) // longer than the bound below: the read must fail first
		w.Close()
	}()
	start := time.Now()
	_, err := ReadSacct(stalled, SacctOptions{PipeTimeout: wait}, func(arrow.RecordBatch) error { return nil })
	want := "sacct file " + stalled + ": the named pipe gave no data for 300ms (its writer stalled?): see --input-timeout"
	if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("stalled writer: error = %v, want it to contain %q", err, want)
	}
	if d := time.Since(start); d > 8*wait {
		t.Errorf("stalled writer: failed after %v, want about %v", d, wait)
	}

	// No writer ever opens the pipe.
	lonely := mkfifo(t, dir, "lonely.psv")
	_, err = ReadSacct(lonely, SacctOptions{PipeTimeout: wait}, func(arrow.RecordBatch) error { return nil })
	want = "sacct file " + lonely + ": no writer opened the named pipe in 300ms (did the sacct feeding it start?): see --input-timeout"
	if err == nil || err.Error() != want {
		t.Errorf("no writer: error = %v, want %q", err, want)
	}

	// A writer that writes slowly but never stalls is read to the end,
	// although the whole writing takes longer than the timeout: the
	// timeout bounds each gap, not the read. Each gap is a tenth of the
	// timeout, so that a loaded machine (CI runs the packages' tests side
	// by side) does not stretch one past it.
	const slowWait = 2 * time.Second
	slow := mkfifo(t, dir, "slow.psv")
	text := hdr + strings.Repeat(boundsDone+"\n", 14)
	go func() {
		w, err := os.OpenFile(slow, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer w.Close()
		for _, line := range strings.SplitAfter(text, "\n") {
			io.WriteString(w, line)
			time.Sleep(slowWait / 10)
		}
	}()
	start = time.Now()
	st, err := ReadSacct(slow, SacctOptions{PipeTimeout: slowWait}, func(arrow.RecordBatch) error { return nil })
	if err != nil || st.Read != int64(strings.Count(text, "\n")-1) {
		t.Errorf("slow writer: read %d rows, error %v; want %d rows, no error", st.Read, err, strings.Count(text, "\n")-1)
	}
	if d := time.Since(start); d <= slowWait {
		t.Errorf("slow writer: read in %v, want longer than the timeout %v (the test no longer tests a read longer than it)", d, slowWait)
	}
}
