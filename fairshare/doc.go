// Package fairshare computes Slurm's fair-share values for every association
// of one cluster: the Fair Tree factor (Slurm's default), the classic factor
// (PriorityFlags=NO_FAIR_TREE) and the depth-oblivious factor
// (PriorityFlags=DEPTH_OBLIVIOUS), and formats them the way sshare prints
// them (-a -l, -P/-p or its fixed-width columns).
//
// Place in the pipeline: ingest parses `sacctmgr show assoc` into plain rows
// (Associations.Nodes gives the []Node) and a Tree is built once per
// association snapshot. When the tree changes over time (dated dumps), a
// Universe is the union of all snapshots' associations: decay charges each
// universe association's own usage, and a Projection credits it to each
// snapshot's tree — the usage of an association missing from a snapshot
// stays with its nearest surviving ancestor (its account). decay produces the raw (decayed, descendant-inclusive) usage of
// every association per calc period; this package turns each usage snapshot
// into a Result (NormShares, NormUsage, EffectvUsage, LevelFS, FairShare), which
// export writes out. The semantics follow docs/slurm-semantics.md §4, §5,
// §6, §7 and §8; the formulas are quoted on each function.
//
// The package is pure computation: it reads no files, does no logging and
// imports neither os nor Arrow. The only I/O is WriteSshare, which formats to
// an io.Writer supplied by the caller.
//
// Data layout: a Tree is a struct of slices indexed by tree position. Positions
// are in sshare row order (the association list sorted byte-wise by lineage),
// which is a depth-first pre-order, so every parent comes before its children
// and each algorithm is one or two passes over arrays. Results are written into
// caller-owned buffers that are reused across snapshots; once they have grown to
// the tree's size the algorithms allocate nothing.
//
// Blank cells: sshare prints some cells blank. A Result marks them with NaN
// (root NormUsage, root LevelFS, root FairShare, account FairShare under Fair
// Tree, LevelFS of FairShare=parent rows); +Inf is a real LevelFS value that
// sshare prints as "inf". Use IsBlank to test.
package fairshare
