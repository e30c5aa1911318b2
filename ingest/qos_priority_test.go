package ingest

import (
	"strings"
	"testing"
)

func TestParseQOSPriority(t *testing.T) {
	t.Parallel()
	dump := "Name|UsageFactor|Flags|Priority\n" +
		"normal|1.000000||0\n" +
		"high|1.000000||500\n" +
		"mid|1.000000||100\n" +
		"cleared|1.000000||\n"
	tab, st, err := ParseQOS("qos.psv", strings.NewReader(dump))
	if err != nil || st.Ingested != 4 || !tab.HasPriority {
		t.Fatalf("ParseQOS: %v, stats %s, HasPriority %v", err, st.String(), tab.HasPriority)
	}
	for _, tt := range []struct {
		name string
		want int64
		ok   bool
	}{
		{"normal", 0, true},
		{"high", 500, true},
		{"HIGH", 500, true}, // matched without regard to case, as slurmctld does
		{"mid", 100, true},
		{"cleared", 0, true},
		{"nope", 0, false},
	} {
		if got, ok := tab.Priority(tt.name); got != tt.want || ok != tt.ok {
			t.Errorf("Priority(%q) = %d, %v; want %d, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

func TestParseQOSWithoutPriority(t *testing.T) {
	t.Parallel()
	tab, _, err := ParseQOS("qos.psv", strings.NewReader("Name|UsageFactor|Flags\nnormal|1|\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := tab.Priority("normal"); tab.HasPriority || ok || p != 0 {
		t.Errorf("HasPriority %v, Priority(normal) = %d, %v; want false, 0, false", tab.HasPriority, p, ok)
	}
}

func TestParseQOSPriorityErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ value, want string }{
		{"-5", `ingest qos.psv:2: Priority="-5": not a non-negative integer`},
		{"high", `ingest qos.psv:2: Priority="high": not a non-negative integer`},
		{"4294967294", `ingest qos.psv:2: Priority="4294967294": out of range (max 4294967293)`},
	} {
		t.Run(tt.value, func(t *testing.T) {
			_, st, err := ParseQOS("qos.psv", strings.NewReader("Name|UsageFactor|Priority\nx|1|"+tt.value+"\n"))
			if err == nil || err.Error() != tt.want || st.Rejected != 1 || !st.Balanced() {
				t.Errorf("error = %v, stats %s; want %s", err, st.String(), tt.want)
			}
		})
	}
}
