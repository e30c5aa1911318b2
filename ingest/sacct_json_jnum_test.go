package ingest

import (
	"encoding/json"
	"testing"
)

// TestJnumFast: the numbers sacct prints are read without reflection to
// what data_parser means by them, and anything else is left to the slow
// path, which reads it as before.
func TestJnumFast(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want jnum
		fast bool
	}{
		{`0`, jnum{set: true}, true},
		{`1795168805`, jnum{n: 1795168805, set: true}, true},
		{`-2`, jnum{n: -2, set: true}, true},
		{`{"set": true, "infinite": false, "number": 120}`, jnum{n: 120, set: true}, true},
		{"{\n  \"set\" : false,\n  \"infinite\": false,\n  \"number\": 0\n}", jnum{}, true},
		{`{"set": true, "infinite": true, "number": 0}`, jnum{inf: true}, true},
		{`{"number": 7}`, jnum{n: 7, set: true}, true},
		{`{}`, jnum{set: true}, true},
		{`{"number": 1, "number": 2}`, jnum{n: 2, set: true}, true},
		// Left to the slow path.
		{`null`, jnum{}, false},
		{`1e3`, jnum{n: 1000, set: true}, false},
		{`12345678901234567890`, jnum{}, false},
		{`{"SET": false, "number": 3}`, jnum{n: 3}, false},
		{`{"set": null, "number": 3}`, jnum{n: 3, set: true}, false},
		{`{"number": "4"}`, jnum{n: 4, set: true}, false},
		{`{"se\u0074": false, "number": 3}`, jnum{n: 3}, false},
		{`{"set": true, "x": {"number": 9}, "number": 3}`, jnum{n: 3, set: true}, false},
	} {
		var f jnum
		if got := f.fast([]byte(c.in)); got != c.fast {
			t.Errorf("fast(%s) = %v, want %v", c.in, got, c.fast)
		}
		var u jnum
		if err := u.UnmarshalJSON([]byte(c.in)); err != nil && c.want != (jnum{}) {
			t.Errorf("UnmarshalJSON(%s): %v", c.in, err)
		}
		if u != c.want {
			t.Errorf("UnmarshalJSON(%s) = %+v, want %+v", c.in, u, c.want)
		}
		var s jnum
		s.slow([]byte(c.in))
		if c.fast && f != s {
			t.Errorf("fast(%s) = %+v, slow %+v", c.in, f, s)
		}
	}
}

// FuzzJnumFast: whatever JSON value the decoder hands over, the fast path
// either refuses it or reads it as the slow path does.
//
//	go test ./ingest -run '^$' -fuzz '^FuzzJnumFast$' -fuzztime 30s
func FuzzJnumFast(f *testing.F) {
	for _, s := range []string{`0`, `-12`, `{"set": true, "infinite": false, "number": 60}`, `{"set":false}`, `{"number":1,"set":true}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		var x, y jnum
		if !x.fast(b) {
			return
		}
		if err := y.slow(b); err != nil || x != y {
			t.Fatalf("fast(%s) = %+v, slow %+v, %v", b, x, y, err)
		}
	})
}
