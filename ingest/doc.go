// Package ingest turns the files a Slurm site really has into typed data:
// sacct --parsable2 job logs into arrow.RecordBatch batches (streamed, bounded
// memory, schema from package schemas), sacctmgr association and QOS dumps
// into validated tables, and slurm.conf into a Config.
//
// ingest is the pipeline's input edge and the only math-free package that
// reads files. ReadSite reads a site's slurm.conf, association tree(s) and
// QOS dump at once, collecting every file's errors and warnings; jobs are
// read through JobSource (SacctFile for sacct -P files and pipes), the one
// interface the pipeline and check read them by, so that another input
// format is another source here and no change to the pipeline. Every input record is accounted for: it is ingested, skipped
// for a stated reason, or rejected with a ParseError naming file, line, field
// and value; Stats adds the counts up.
package ingest
