package decay

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/fairledger/fairledger/schemas"
)

// Reasons under which AppendJobs counts a row in ResolveStats.ByReason.
// ReasonUserToAccount rows are charged (appended); all others are not.
const (
	// ReasonUserToAccount: the job's user has no association under its
	// account (for its partition or without one) — typically a deleted
	// user association — so the job is charged to the account's
	// association, as slurmctld keeps such usage in the account
	// (docs/slurm-semantics.md §4.4). Charged.
	ReasonUserToAccount = "user not in association tree: charged to account"
	// ReasonUnknownAccount: the job's account is not in the tree; the job
	// is not charged and the account is listed in
	// ResolveStats.UnknownAccounts. Not charged.
	ReasonUnknownAccount = "account not in association tree"
	// ReasonNoAccount: the job's account is null or empty, so it has no
	// association (Slurm skips such jobs, §2.6). Not charged.
	ReasonNoAccount = "no account"
	// ReasonOtherCluster: the job ran on another cluster than the
	// resolver's (or its cluster is null). Not charged.
	ReasonOtherCluster = "job of another cluster"
	// ReasonNoStart: the job has no start time (it never ran). Not charged.
	ReasonNoStart = "no start time"
)

// ResolveStats account for every row given to AppendJobs:
// Rows == Charged + NotCharged(), where NotCharged sums the reasons other
// than ReasonUserToAccount (whose rows are included in Charged). Like
// billing.Stats, the counts are a map field and Reasons() lists its keys in
// order.
type ResolveStats struct {
	// Rows is the number of rows read.
	Rows int64
	// Charged is the number of rows appended to the jobs.
	Charged int64
	// ByReason counts rows per reason (the Reason* constants); nil when
	// there are none. Only ReasonUserToAccount rows are charged.
	ByReason map[string]int64
	// UnknownAccounts are the distinct accounts of ReasonUnknownAccount
	// rows, sorted.
	UnknownAccounts []string
	// OtherClusters are the distinct clusters of ReasonOtherCluster rows,
	// sorted ("" for a null or empty cluster).
	OtherClusters []string
}

// Reasons returns the reasons present in ByReason, sorted, for
// deterministic reporting.
func (s ResolveStats) Reasons() []string {
	out := make([]string, 0, len(s.ByReason))
	for r := range s.ByReason {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

// NotCharged returns the number of rows not appended: the sum of every
// reason except ReasonUserToAccount.
func (s ResolveStats) NotCharged() int64 {
	var n int64
	for r, c := range s.ByReason {
		if r != ReasonUserToAccount {
			n += c
		}
	}
	return n
}

// add counts n rows under reason.
func (s *ResolveStats) add(reason string, n int64) {
	if n == 0 {
		return
	}
	if s.ByReason == nil {
		s.ByReason = make(map[string]int64)
	}
	s.ByReason[reason] += n
}

// dictCol is one dictionary<int32, utf8> column of a batch.
type dictCol struct {
	d     *array.Dictionary
	codes []int32
	names *array.String
	nulls bool
}

// code returns row i's dictionary code, or −1 for a null row.
func (c dictCol) code(i int) int32 {
	if c.nulls && c.d.IsNull(i) {
		return -1
	}
	return c.codes[i]
}

// AppendJobs appends the rows of one jobs batch (schemas.Jobs followed by
// schemas.BillingFields) to dst as Start, End (Running when end is null),
// Rate = billing × usage_factor and the Assoc the Resolver picks, and adds
// the batch's counts to st. Rows are not appended, and counted, when they
// are of another cluster, have no start time, or have no or an unknown
// account; rows whose user has no association under the account are
// charged to the account (see the Reason constants).
//
// The account, user and partition dictionaries are mapped to association
// data once per batch, so the per-row work is slice lookups. AppendJobs
// fails, leaving dst and st unchanged, when a column is missing or has the
// wrong type, a dictionary code is out of range, or billing or
// usage_factor hold nulls.
func (r *Resolver) AppendJobs(rec arrow.RecordBatch, dst *Jobs, st *ResolveStats) error {
	return r.AppendJobsMarked(rec, dst, st, nil)
}

// AppendJobsMarked is AppendJobs that also reports which rows it appended:
// charged[i] is set to whether row i was appended (so the k-th true entry
// is the k-th job appended). charged is nil, or has one entry per row of
// rec; it is left unchanged when AppendJobsMarked fails.
func (r *Resolver) AppendJobsMarked(rec arrow.RecordBatch, dst *Jobs, st *ResolveStats, charged []bool) error {
	if charged != nil && len(charged) != int(rec.NumRows()) {
		return fmt.Errorf("append jobs: %d charged marks for %d rows", len(charged), rec.NumRows())
	}
	cluster, err := dictColumn(rec, schemas.ColCluster)
	if err != nil {
		return err
	}
	account, err := dictColumn(rec, schemas.ColAccount)
	if err != nil {
		return err
	}
	user, err := dictColumn(rec, schemas.ColUser)
	if err != nil {
		return err
	}
	partition, err := dictColumn(rec, schemas.ColPartition)
	if err != nil {
		return err
	}
	start, err := timestampColumn(rec, schemas.ColStart)
	if err != nil {
		return err
	}
	end, err := timestampColumn(rec, schemas.ColEnd)
	if err != nil {
		return err
	}
	billing, err := float64Column(rec, schemas.ColBilling)
	if err != nil {
		return err
	}
	factor, err := float64Column(rec, schemas.ColUsageFactor)
	if err != nil {
		return err
	}

	// Map each dictionary once; entry 0 of each table stands for a null
	// row, entry code+1 for dictionary code.
	clusterOK := make([]bool, cluster.names.Len()+1)
	for k := range cluster.names.Len() {
		clusterOK[k+1] = cluster.names.IsValid(k) && cluster.names.Value(k) == r.cluster
	}
	const noAccount, unknownAccount = -1, -2
	accountOf := make([]int32, account.names.Len()+1)
	accountOf[0] = noAccount
	for k := range account.names.Len() {
		name := account.names.Value(k)
		switch id, ok := r.accountID[name]; {
		case account.names.IsNull(k) || name == "":
			accountOf[k+1] = noAccount
		case ok:
			accountOf[k+1] = id
		default:
			accountOf[k+1] = unknownAccount
		}
	}
	userOf := make([]int32, user.names.Len()+1)
	userOf[0] = -1
	for k := range user.names.Len() {
		id, ok := r.userID[user.names.Value(k)]
		if !ok || user.names.IsNull(k) {
			id = -1
		}
		userOf[k+1] = id
	}
	partOf := make([]int32, partition.names.Len()+1) // 0: no per-partition association
	for k := range partition.names.Len() {
		if partition.names.IsValid(k) {
			partOf[k+1] = r.partID[partition.names.Value(k)]
		}
	}

	n := int(rec.NumRows())
	startV, endV := start.TimestampValues(), end.TimestampValues()
	billingV, factorV := billing.Float64Values(), factor.Float64Values()
	startNulls, endNulls := start.NullN() > 0, end.NullN() > 0
	unknownSeen := make([]bool, account.names.Len())
	otherSeen := make([]bool, cluster.names.Len()+1) // by code+1; 0: null
	var other, noStart, none, unknown, toAccount int64
	dst.Start = slices.Grow(dst.Start, n)
	dst.End = slices.Grow(dst.End, n)
	dst.Rate = slices.Grow(dst.Rate, n)
	dst.Assoc = slices.Grow(dst.Assoc, n)
	clear(charged)
	for i := range n {
		if c := cluster.code(i) + 1; !clusterOK[c] {
			other++
			otherSeen[c] = true
			continue
		}
		if startNulls && start.IsNull(i) {
			noStart++
			continue
		}
		ac := account.code(i)
		a := accountOf[ac+1]
		if a < 0 {
			if a == noAccount {
				none++
			} else {
				unknown++
				unknownSeen[ac] = true
			}
			continue
		}
		assoc := r.find(userOf[user.code(i)+1], a, partOf[partition.code(i)+1])
		if assoc < 0 {
			assoc = r.accountAssoc[a]
			toAccount++
		}
		e := Running
		if !endNulls || end.IsValid(i) {
			e = int64(endV[i])
		}
		dst.Start = append(dst.Start, int64(startV[i]))
		dst.End = append(dst.End, e)
		dst.Rate = append(dst.Rate, billingV[i]*factorV[i])
		dst.Assoc = append(dst.Assoc, assoc)
		if charged != nil {
			charged[i] = true
		}
	}

	st.Rows += int64(n)
	st.Charged += int64(n) - other - noStart - none - unknown
	st.add(ReasonOtherCluster, other)
	st.add(ReasonNoStart, noStart)
	st.add(ReasonNoAccount, none)
	st.add(ReasonUnknownAccount, unknown)
	st.add(ReasonUserToAccount, toAccount)
	for k, seen := range unknownSeen {
		if !seen {
			continue
		}
		name := account.names.Value(k) // a view into the batch's buffer
		if at, found := slices.BinarySearch(st.UnknownAccounts, name); !found {
			st.UnknownAccounts = slices.Insert(st.UnknownAccounts, at, strings.Clone(name))
		}
	}
	for c, seen := range otherSeen {
		if !seen {
			continue
		}
		name := ""
		if c > 0 && cluster.names.IsValid(c-1) {
			name = cluster.names.Value(c - 1) // a view into the batch's buffer
		}
		if at, found := slices.BinarySearch(st.OtherClusters, name); !found {
			st.OtherClusters = slices.Insert(st.OtherClusters, at, strings.Clone(name))
		}
	}
	return nil
}

// dictColumn returns the named dictionary<int32, utf8> column of rec,
// checking every non-null code against the dictionary.
func dictColumn(rec arrow.RecordBatch, name string) (dictCol, error) {
	d, codes, names, err := schemas.DictStringColumn(rec, name)
	if err != nil {
		return dictCol{}, fmt.Errorf("append jobs: %w", err)
	}
	c := dictCol{d: d, codes: codes, names: names, nulls: d.NullN() > 0}
	m := int32(names.Len())
	for row, k := range c.codes {
		if (k < 0 || k >= m) && !(c.nulls && d.IsNull(row)) {
			return dictCol{}, fmt.Errorf("append jobs: column %q row %d: dictionary code %d out of range [0, %d)", name, row, k, m)
		}
	}
	return c, nil
}

// timestampColumn returns the named timestamp[s] column of rec.
func timestampColumn(rec arrow.RecordBatch, name string) (*array.Timestamp, error) {
	const want = "timestamp[s]"
	a, err := schemas.RecordColumn[*array.Timestamp](rec, name, want)
	if err == nil && a.DataType().(*arrow.TimestampType).Unit != arrow.Second {
		err = fmt.Errorf("column %q is %s, want %s", name, a.DataType(), want)
	}
	if err != nil {
		return nil, fmt.Errorf("append jobs: %w", err)
	}
	return a, nil
}

// float64Column returns the named float64 column of rec, which must have
// no nulls.
func float64Column(rec arrow.RecordBatch, name string) (*array.Float64, error) {
	a, err := schemas.RecordColumn[*array.Float64](rec, name, "float64")
	if err != nil {
		return nil, fmt.Errorf("append jobs: %w", err)
	}
	if a.NullN() > 0 {
		return nil, fmt.Errorf("append jobs: column %q: %d null values", name, a.NullN())
	}
	return a, nil
}
