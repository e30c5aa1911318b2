// Package synth writes a deterministic synthetic Slurm cluster in the real
// file formats: slurm.conf (partitions with TRESBillingWeights), a sacctmgr
// association dump, a sacctmgr QOS dump and a `sacct -a -D -P` job log.
//
// synth sits beside the pipeline rather than in it: its output is the input
// of ingest, so the demo, round-trip tests of billing and decay, and the
// benchmarks all run on files nobody had to hand-write. All randomness comes
// from math/rand/v2 PCG streams seeded by Options.Seed, so the same Options
// always produce byte-identical files. WriteSacct streams: memory does not
// grow with the number of jobs.
//
// The Write* methods only write to the io.Writer they are given; WriteDir and
// Cached (which writes a cluster once and reuses it) are the functions that
// create files.
//
// The Slurm behaviour reproduced (billing= truncation, AllocTRES order and
// memory units, JobID forms, Unknown/None times, `CANCELLED by <uid>`,
// requeued runs, association lineage) follows docs/slurm-semantics.md §3, §10 and
// §4.4; Billable is the reference billing computation other packages' tests
// compare against.
package synth
