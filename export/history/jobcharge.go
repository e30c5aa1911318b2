package history

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/fairledger/fairledger/export/record"
	"github.com/fairledger/fairledger/schemas"
)

// EachJobCharge calls fn with the jobs of cluster's month, a few thousand
// at a time (the slice is reused: fn keeps what it needs), reading only
// the columns record.JobCharge has. Each segment is checked against the
// manifest first, as every read of the history checks it, and its rows
// counted against it.
func (v *View) EachJobCharge(cluster string, month time.Time, fn func([]record.JobCharge) error) error {
	if err := validCluster(cluster); err != nil {
		return fmt.Errorf("read job charges: %w", err)
	}
	mk := schemas.MonthKey(month)
	for _, p := range v.Files(schemas.TableJobs, cluster) {
		if p.Month != mk {
			continue
		}
		if err := eachJobCharge(v.Path(p), p, fn); err != nil {
			return err
		}
	}
	return nil
}

func eachJobCharge(file string, p Partition, fn func([]record.JobCharge) error) error {
	f, pf, err := openVerified(file, p)
	if err != nil {
		return err
	}
	defer f.Close()
	var n int64
	var fnErr error
	err = func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("malformed Parquet: %v", r)
			}
		}()
		r := parquet.NewGenericReader[record.JobCharge](pf)
		defer r.Close()
		buf := make([]record.JobCharge, 4096)
		for {
			clear(buf)
			k, err := r.Read(buf)
			n += int64(k)
			if k > 0 {
				if fnErr = fn(buf[:k]); fnErr != nil {
					return nil
				}
			}
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
		}
	}()
	switch {
	case fnErr != nil:
		return fnErr
	case err != nil:
		return &CorruptError{Path: p.Path, Problem: "not readable Parquet: " + err.Error()}
	case n != p.Rows:
		return &CorruptError{Path: p.Path, Problem: fmt.Sprintf("%d rows, the manifest says %d", n, p.Rows)}
	}
	return nil
}
