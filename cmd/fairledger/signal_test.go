package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"
)

// A run stopped by SIGINT or SIGTERM exits 128 + the signal's number, the
// shell's convention (130, 143), not 1 like bad input; its message names the
// signal and the stage once.
func TestInterruptExitCode(t *testing.T) {
	for _, tt := range []struct {
		sig  syscall.Signal
		code int
		name string
	}{{syscall.SIGINT, 130, "SIGINT"}, {syscall.SIGTERM, 143, "SIGTERM"}} {
		ctx, stop := signalContext(context.Background())
		if err := syscall.Kill(os.Getpid(), tt.sig); err != nil {
			t.Fatal(err)
		}
		<-ctx.Done() // canceled by the signal (the test hangs, not passes, if never)
		// What the pipeline returns when a snapshot sees the canceled context.
		cause := fmt.Errorf("decay: snapshot at 1706529600: %w", ctx.Err())
		err, dryErr := interrupted(ctx, cause, false), interrupted(ctx, cause, true)
		stop()
		var stderr, dryStderr bytes.Buffer
		if got := exitCode(err, &stderr, false); got != tt.code {
			t.Errorf("%s: exit %d, want %d", tt.name, got, tt.code)
		}
		if got := exitCode(dryErr, &dryStderr, false); got != tt.code {
			t.Errorf("%s: dry run exit %d, want %d", tt.name, got, tt.code)
		}
		want := "fairledger: run interrupted by " + tt.name + "; the history is unchanged where not yet written, " +
			"and the next run recomputes this night: decay: snapshot at 1706529600: context canceled\n"
		if stderr.String() != want {
			t.Errorf("%s: printed %q, want %q", tt.name, stderr.String(), want)
		}
		want = "fairledger: dry run interrupted by " + tt.name + "; nothing was written: decay: snapshot at 1706529600: context canceled\n"
		if dryStderr.String() != want {
			t.Errorf("%s: dry run printed %q, want %q", tt.name, dryStderr.String(), want)
		}
	}
}

// A cancellation that no signal caused, and any other error, keeps exit 1.
func TestNotInterruptedExitCode(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, err := range []error{
		interrupted(ctx, fmt.Errorf("decay: %w", context.Canceled), false),
		interrupted(context.Background(), errors.New("open history: boom"), true),
	} {
		if got := exitCode(err, &bytes.Buffer{}, false); got != 1 {
			t.Errorf("exitCode(%v) = %d, want 1", err, got)
		}
	}
}
