package decay

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"time"
)

// NoReset is the NextReset of a State whose reset period has no boundary.
const NoReset int64 = math.MaxInt64

// State is where a run of the engine stops and the next one resumes: the
// equivalent of slurmctld's usage at its last decay tick plus its
// priority_last_decay_ran file.
type State struct {
	// Tick is the time of the last processed tick (Unix seconds, on the
	// grid OriginUnix + k·CalcPeriodSec).
	Tick int64
	// CalcPeriodSec and OriginUnix are the grid the state was computed on;
	// Advance refuses to continue on another grid.
	CalcPeriodSec int64
	// OriginUnix is the grid's phase (see CalcPeriodSec).
	OriginUnix int64
	// Reset is the reset period NextReset was computed for.
	Reset ResetPeriod
	// LastReset is Slurm's last_reset R: the boundary of the last reset
	// applied, or the state's creation tick if none was.
	LastReset int64
	// NextReset is the next reset boundary (Unix seconds), or NoReset.
	NextReset int64
	// Usage is usage_raw of every association at Tick: its own jobs' and
	// all its descendants' decayed usage, indexed like the parent slice.
	Usage []float64
}

// NewState returns the empty state of nAssoc associations at the last grid
// tick at or before startUnix, with no usage, as if slurmctld's decay
// thread had started there (its last reset is that tick).
func NewState(p Params, nAssoc int, startUnix int64) (*State, error) {
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("new decay state: %w", err)
	}
	if nAssoc < 0 {
		return nil, fmt.Errorf("new decay state: %d associations", nAssoc)
	}
	period, _ := ParseResetPeriod(p.ResetPeriod)
	P := p.calcPeriod()
	k, ok := tickIndexFloor(startUnix-p.OriginUnix, P)
	if !ok {
		return nil, fmt.Errorf("new decay state: start %d is too far from origin %d", startUnix, p.OriginUnix)
	}
	t := p.OriginUnix + k*P
	return &State{
		Tick:          t,
		CalcPeriodSec: P,
		OriginUnix:    p.OriginUnix,
		Reset:         period,
		LastReset:     t,
		NextReset:     nextResetUnix(period, t, t, p.location()),
		Usage:         make([]float64, nAssoc),
	}, nil
}

// nextResetUnix is NextReset in Unix seconds, NoReset when there is none.
func nextResetUnix(period ResetPeriod, last, now int64, loc *time.Location) int64 {
	if !period.periodic() {
		return NoReset
	}
	return NextReset(period, time.Unix(last, 0), time.Unix(now, 0), loc).Unix()
}

// Clone returns a deep copy of s.
func (s *State) Clone() *State {
	c := *s
	c.Usage = append([]float64(nil), s.Usage...)
	return &c
}

const (
	stateMagic   = "FLDS"
	stateVersion = 1
	stateHeader  = 52
	maxStateN    = 1 << 28
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// MarshalBinary encodes s, implementing encoding.BinaryMarshaler. The
// layout is little-endian, version 1:
//
//	0  [4]byte "FLDS"
//	4  uint16  version
//	6  uint8   reset period
//	7  uint8   reserved, 0
//	8  int64   Tick
//	16 int64   CalcPeriodSec
//	24 int64   OriginUnix
//	32 int64   LastReset
//	40 int64   NextReset
//	48 uint32  number of associations n
//	52 n × float64 Usage (IEEE 754 bits)
//	.. uint32  CRC-32C (Castagnoli) of all preceding bytes
func (s *State) MarshalBinary() ([]byte, error) {
	if len(s.Usage) > maxStateN {
		return nil, fmt.Errorf("marshal decay state: %d associations is too many", len(s.Usage))
	}
	b := make([]byte, 0, stateHeader+8*len(s.Usage)+4)
	b = append(b, stateMagic...)
	b = binary.LittleEndian.AppendUint16(b, stateVersion)
	b = append(b, byte(s.Reset), 0)
	for _, v := range [...]int64{s.Tick, s.CalcPeriodSec, s.OriginUnix, s.LastReset, s.NextReset} {
		b = binary.LittleEndian.AppendUint64(b, uint64(v))
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(s.Usage)))
	for _, u := range s.Usage {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(u))
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, crcTable)), nil
}

// ErrStateChecksum is returned by UnmarshalBinary when the checksum does not
// match: the blob was truncated or altered.
var ErrStateChecksum = errors.New("decay state checksum mismatch")

// UnmarshalBinary decodes a blob written by MarshalBinary, replacing s; it
// implements encoding.BinaryUnmarshaler.
func (s *State) UnmarshalBinary(b []byte) error {
	if len(b) < stateHeader+4 || string(b[:4]) != stateMagic {
		return errors.New("unmarshal decay state: not a decay state")
	}
	if v := binary.LittleEndian.Uint16(b[4:]); v != stateVersion {
		return fmt.Errorf("unmarshal decay state: version %d, want %d", v, stateVersion)
	}
	n := binary.LittleEndian.Uint32(b[48:])
	if n > maxStateN || len(b) != stateHeader+8*int(n)+4 {
		return fmt.Errorf("unmarshal decay state: %d bytes for %d associations, want %d", len(b), n, stateHeader+8*int(n)+4)
	}
	body := b[:len(b)-4]
	if crc32.Checksum(body, crcTable) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return fmt.Errorf("unmarshal decay state: %w", ErrStateChecksum)
	}
	r := ResetPeriod(b[6])
	if int(r) >= len(resetNames) {
		return fmt.Errorf("unmarshal decay state: unknown reset period %d", b[6])
	}
	i64 := func(off int) int64 { return int64(binary.LittleEndian.Uint64(b[off:])) }
	t := State{
		Tick:          i64(8),
		CalcPeriodSec: i64(16),
		OriginUnix:    i64(24),
		Reset:         r,
		LastReset:     i64(32),
		NextReset:     i64(40),
		Usage:         make([]float64, n),
	}
	if t.CalcPeriodSec <= 0 || t.CalcPeriodSec > maxCalcPeriodSec {
		return fmt.Errorf("unmarshal decay state: calc period %d s", t.CalcPeriodSec)
	}
	for i := range t.Usage {
		u := math.Float64frombits(binary.LittleEndian.Uint64(b[stateHeader+8*i:]))
		if math.IsNaN(u) || math.IsInf(u, 0) {
			return fmt.Errorf("unmarshal decay state: association %d usage %v", i, u)
		}
		t.Usage[i] = u
	}
	*s = t
	return nil
}
