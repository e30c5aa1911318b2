// Package release names the Slurm release series fairledger reproduces
// (run --slurm-version: 22.05 … 26.05) and lists, in one table (Rules),
// every rule of what fairledger computes or prints that depends on the
// series.
//
// Place in the pipeline: beside every stage. ingest, billing, fairshare,
// priority, pipeline, nightly and the CLI import it for the type Series;
// each rule itself sits in the package whose code it changes, as a Series
// value named in Rules, and docs/slurm-versions.md lists the same rules
// (internal/repotest checks that the document, the table and the code
// agree).
//
// The package is pure: it imports nothing but the standard library, touches
// no files and holds no mutable state.
package release
