package queue

import (
	"github.com/fairledger/fairledger/decay"
	"github.com/fairledger/fairledger/fairshare"
	"github.com/fairledger/fairledger/priority"
	"maps"
)

// Writer computes the priority table's rows at each fair-share
// snapshot: the jobs waiting then, with their factors as of the snapshot's
// tick and their users' FairShare of the snapshot.
type Writer struct {
	Model *Model
	Jobs  []Job

	queue     *Queue // built at the first snapshot
	pending   []Pending
	rows      []priority.Row
	treeUsers []map[AssocKey]int // per tree of the run's model: user association → node
	// Out holds the month's rows.
	Out Rows
	// Other holds the submit and start rows of months without a snapshot
	// of the run, by month start (Unix seconds).
	Other map[int64]*Rows

	// The submit and start rows (events.go).
	Sched  *decay.Schedule   // the decay ticks
	Lo, To int64             // the window: events in (Lo, To]
	FS     FairShare         // the FairShare in force
	epoch  int               // counts the changes of FS
	events []Event           // built at the first emit
	evNext int               // events[evNext:] are not yet made
	rk     *ranker           // the starts' ranks
	cp     priority.Computer // the rows' scratch space
	// dump is the association dump in force (the model's tree number);
	// DumpAt gives it at a time.
	dump   int
	DumpAt func(t int64) int
	// PendingOnly leaves out the submit and start rows: a moment (one
	// instant's replay) lists the queue of one snapshot.
	PendingOnly bool
}

// Add appends the rows of the snapshot at time at, whose usage is the
// tick's, from the snapshot's fair-share result r over tree number ti.
func (p *Writer) Add(at, tick int64, ti int, tree *fairshare.Tree, r *fairshare.Result) {
	if p.treeUsers == nil {
		p.treeUsers = make([]map[AssocKey]int, ti+1)
	}
	for len(p.treeUsers) <= ti {
		p.treeUsers = append(p.treeUsers, nil)
	}
	users := p.treeUsers[ti]
	if users == nil {
		users = userNodes(tree)
		p.treeUsers[ti] = users
	}
	if p.queue == nil {
		p.queue = p.newQueue()
	}
	p.SetFairShare(at, true, users, r.FairShare)
	p.UseDump(ti)
	p.pending = p.queue.At(p.pending[:0], at, tick)
	for i := range p.pending {
		j := &p.pending[i]
		j.Job.FairShare = p.FS.of(p.Model.assocKey(&j.Job))
		p.rows = p.cp.AppendRows(&p.Model.Params, p.rows[:0], p.Model.clusterOf(p.dump), []priority.Job{j.Job}, j.At)
		for k := range p.rows {
			p.Out.add(p.Model.newRow(at, evPending, j, j.who, &p.rows[k], at), p.rows[k].Weighted.TRES)
		}
	}
}

// userNodes maps each user association of tree, per-partition ones each
// under its partition, to its node: sprio's FAIRSHARE is the job's own
// association's (Model.assocKey).
func userNodes(tree *fairshare.Tree) map[AssocKey]int {
	users := map[AssocKey]int{}
	for i := 0; i < tree.Len(); i++ {
		if k := (AssocKey{Account: tree.Account[i], User: tree.User[i], Partition: tree.Partition[i]}); tree.User[i] != "" {
			if _, ok := users[k]; !ok {
				users[k] = i
			}
		}
	}
	return users
}

// StartQueue builds the queue of the snapshots now, with firstEligible
// (array job id → the earliest eligible time of its tasks) over what the
// jobs give: a moment seed holds only the tasks that may wait in its span,
// and an array's pending remainder waits from the earliest of them all.
func (p *Writer) StartQueue(firstEligible map[uint32]int64) {
	p.queue = p.newQueue()
	maps.Copy(p.queue.firstEligible, firstEligible)
}

// newQueue is the queue of p's jobs with the model's array throttles and
// flags.
func (p *Writer) newQueue() *Queue {
	q := New(p.Jobs)
	q.Model = p.Model
	q.fromModel()
	return q
}
