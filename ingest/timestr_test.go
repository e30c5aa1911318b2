package ingest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestTimeStrToMins(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want int64
	}{
		// docs/slurm-semantics.md §11.5, time_str2mins vectors.
		{"7-0", 10080},
		{"14-0", 20160},
		{"30", 30},
		{"1:30:00", 90},
		{"2-12", 3600},
		{"90:30", 91},
		{"0", 0},
		// Hand-computed from the forms in §2.2 (seconds round up).
		{"30-0", 30 * 1440},               // ubccr PriorityDecayHalfLife
		{"5", 5},                          // PriorityCalcPeriod default
		{"0:30", 1},                       // 30 s rounds up to 1 min
		{"0:60", 1},                       // 60 s, exact
		{"0:61", 2},                       // 61 s rounds up
		{"1:00:01", 61},                   // 3601 s -> 61 min
		{"1-2:03", 1440 + 120 + 3},        // days-hr:min
		{"1-2:03:04", 1440 + 120 + 3 + 1}, // days-hr:min:sec, 4 s rounds up
		{"0-48", 48 * 60},                 // hours are not range-checked
		{"1-", 1440},                      // "days-" alone, as Slurm's sscanf reads it
		{"007", 7},                        // leading zeros
		{"24855-3:14:07", 35791395},       // 2147483647 s (largest C int) = 35791394 min + 7 s
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.in), func(t *testing.T) {
			got, err := TimeStrToMins(tt.in)
			if err != nil || got != tt.want {
				t.Errorf("TimeStrToMins(%q) = %v, %v, want %v, nil", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestTimeStrToMinsUnlimited(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"INFINITE", "infinite", "UNLIMITED", "Unlimited", "-1"} {
		t.Run(fmt.Sprintf("%q", in), func(t *testing.T) {
			got, err := TimeStrToMins(in)
			if !errors.Is(err, ErrUnlimited) || got != 0 {
				t.Errorf("TimeStrToMins(%q) = %v, %v, want 0, ErrUnlimited", in, got, err)
			}
		})
	}
}

func TestTimeStrToMinsErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		wantErr string
	}{
		{"", "empty"},
		{"-5", "negative"},
		{"-1-0", "negative"},
		{"abc", "not a Slurm time string"},
		{"7d", "not a Slurm time string"},
		{" 7-0", "not a Slurm time string"},
		{"1.5", "not a Slurm time string"},
		{"+5", "not a Slurm time string"},
		{"1:2:3:4", "not a Slurm time string"},
		{"1-2-3", "not a Slurm time string"},
		{"1:2-3", "not a Slurm time string"}, // day part after a colon
		{":30", "not a Slurm time string"},
		{"30:", "not a Slurm time string"},
		{"1::2", "not a Slurm time string"},
		{"1-2:", "not a Slurm time string"},
		{"1-:30", "not a Slurm time string"},
		{"24856-0", "out of range"},  // 24856 days > 2^31-1 s
		{"35791395", "out of range"}, // minutes * 60 > 2^31-1
		{"99999999999999999999", "out of range"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.in), func(t *testing.T) {
			got, err := TimeStrToMins(tt.in)
			if err == nil || errors.Is(err, ErrUnlimited) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("TimeStrToMins(%q) = %v, %v, want error containing %q", tt.in, got, err, tt.wantErr)
			}
		})
	}
}

// BenchmarkTimeStrToMins measures one conversion per form.
// Reproduce: go test -run '^$' -bench BenchmarkTimeStrToMins ./ingest/
func BenchmarkTimeStrToMins(b *testing.B) {
	in := []string{"7-0", "14-0", "30", "1:30:00", "2-12", "90:30", "1-2:03:04"}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		for _, s := range in {
			if _, err := TimeStrToMins(s); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(in)), "ns/string")
}
