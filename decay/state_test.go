package decay

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"testing"
)

// NewState rounds the start down to the grid and computes the first reset
// boundary from it: origin 100, P 300, start 1299 → tick 1000 (= 100 + 3·300;
// the next, 1300, is after the start); DAILY in UTC → midnight(1000) + 86400 =
// 86400.
func TestNewState(t *testing.T) {
	t.Parallel()
	p := Params{CalcPeriodSec: 300, OriginUnix: 100, ResetPeriod: "daily"}
	st, err := NewState(p, 3, 1299)
	if err != nil {
		t.Fatal(err)
	}
	want := State{Tick: 1000, CalcPeriodSec: 300, OriginUnix: 100, Reset: ResetDaily, LastReset: 1000, NextReset: 86400}
	if st.Tick != want.Tick || st.CalcPeriodSec != want.CalcPeriodSec || st.OriginUnix != want.OriginUnix ||
		st.Reset != want.Reset || st.LastReset != want.LastReset || st.NextReset != want.NextReset || len(st.Usage) != 3 {
		t.Errorf("NewState = %+v, want %+v with 3 zero usages", *st, want)
	}
	// Before the origin the grid extends backwards: start −1 → tick −200.
	st, err = NewState(p, 0, -1)
	if err != nil || st.Tick != -200 || st.NextReset != 0 {
		t.Errorf("NewState(start −1) = tick %d, next reset %d, %v; want −200, 0 (midnight 1970-01-01), nil", st.Tick, st.NextReset, err)
	}
	p.ResetPeriod = "NONE"
	if st, _ := NewState(p, 0, 0); st.NextReset != NoReset {
		t.Errorf("NewState(NONE).NextReset = %d, want NoReset", st.NextReset)
	}
	if _, err := NewState(Params{CalcPeriodSec: -1}, 1, 0); err == nil {
		t.Errorf("NewState(bad params) = nil error, want an error")
	}
}

func TestStateRoundTrip(t *testing.T) {
	t.Parallel()
	st := &State{Tick: 1800, CalcPeriodSec: 300, OriginUnix: 0, Reset: ResetWeekly, LastReset: -5, NextReset: NoReset,
		Usage: []float64{0, 1, math.SmallestNonzeroFloat64, 1e300, 0.1}}
	b, err := st.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	// Layout: 52-byte header, 8 bytes per association, 4-byte checksum.
	if len(b) != 52+8*5+4 || string(b[:4]) != "FLDS" || binary.LittleEndian.Uint16(b[4:]) != 1 {
		t.Errorf("MarshalBinary: %d bytes, magic %q, version %d; want 96, FLDS, 1", len(b), b[:4], binary.LittleEndian.Uint16(b[4:]))
	}
	var got State
	if err := got.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if got.Tick != st.Tick || got.CalcPeriodSec != st.CalcPeriodSec || got.Reset != st.Reset ||
		got.LastReset != st.LastReset || got.NextReset != st.NextReset || !slices.Equal(got.Usage, st.Usage) {
		t.Errorf("UnmarshalBinary(MarshalBinary(%+v)) = %+v", *st, got)
	}
}

func TestStateUnmarshalErrors(t *testing.T) {
	t.Parallel()
	st := &State{Tick: 300, CalcPeriodSec: 300, NextReset: NoReset, Usage: []float64{1, 2}}
	good, _ := st.MarshalBinary()
	flip := func(i int) []byte { b := slices.Clone(good); b[i] ^= 1; return b }
	tests := []struct {
		name     string
		b        []byte
		checksum bool
	}{
		{"empty", nil, false},
		{"magic", append([]byte("XXXX"), good[4:]...), false},
		{"truncated", good[:len(good)-1], false},
		{"flipped usage bit", flip(60), true},
		{"flipped tick bit", flip(8), true},
		{"flipped checksum", flip(len(good) - 1), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s State
			err := s.UnmarshalBinary(tt.b)
			if err == nil || errors.Is(err, ErrStateChecksum) != tt.checksum {
				t.Errorf("UnmarshalBinary(%s) = %v, want an error (checksum: %v)", tt.name, err, tt.checksum)
			}
		})
	}
	// A future version is refused even with a valid checksum.
	v2 := slices.Clone(good[:len(good)-4])
	binary.LittleEndian.PutUint16(v2[4:], 2)
	v2 = binary.LittleEndian.AppendUint32(v2, crcOf(v2))
	var s State
	if err := s.UnmarshalBinary(v2); err == nil {
		t.Errorf("UnmarshalBinary(version 2) = nil, want an error")
	}
	// A negative usage is a usage (negative TRESBillingWeights charge
	// negative billing, as Slurm does): it is read back. An infinite or
	// NaN one is refused even with a valid checksum.
	for _, u := range []float64{-1, math.Inf(1), math.Inf(-1), math.NaN()} {
		b := slices.Clone(good[:len(good)-4])
		binary.LittleEndian.PutUint64(b[52:], math.Float64bits(u))
		b = binary.LittleEndian.AppendUint32(b, crcOf(b))
		err := s.UnmarshalBinary(b)
		switch {
		case u == -1 && (err != nil || s.Usage[0] != -1):
			t.Errorf("UnmarshalBinary(usage -1) = %v, usage %v; want nil, -1", err, s.Usage)
		case u != -1 && err == nil:
			t.Errorf("UnmarshalBinary(usage %v) = nil, want an error", u)
		}
	}
}

func crcOf(b []byte) uint32 {
	// Independent of the package's table: CRC-32C by the bitwise definition
	// (reflected polynomial 0x82F63B78).
	crc := ^uint32(0)
	for _, x := range b {
		crc ^= uint32(x)
		for range 8 {
			if crc&1 != 0 {
				crc = crc>>1 ^ 0x82F63B78
			} else {
				crc >>= 1
			}
		}
	}
	return ^crc
}

// Changing the reset period between runs recomputes the boundary from the
// last reset, as slurmctld does on reconfigure: last reset 700, now MONTHLY
// in UTC → 1970-02-01 00:00 = 2678400.
func TestResetPeriodChange(t *testing.T) {
	t.Parallel()
	p := Params{CalcPeriodSec: 300}
	st := mustState(t, p, 1, 700)
	p.ResetPeriod = "MONTHLY"
	runWindow(t, p, st, []int32{-1}, nil, 900)
	if st.Reset != ResetMonthly || st.NextReset != 2678400 {
		t.Errorf("after switching to MONTHLY: reset %v, next %d; want MONTHLY, 2678400", st.Reset, st.NextReset)
	}
}
