package record

import "time"

func ptr[T any](v T) *T { return &v }

// ts is a UTC time with microseconds, the precision the files keep.
func ts(s string, micros int) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.UTC().Add(time.Duration(micros) * time.Microsecond)
}
