// Package spill keeps a run's job records on disk until the jobs table
// takes them: one file per month of start, in a compact private encoding
// (varints; names and TRES sets as the run's record.JobDict indexes) that
// the same process writes and reads, so that the run's memory does not
// grow with the number of jobs in its input.
//
// A month is taken whole by Jobs.Read, which removes it, or in chunks of
// at most n records by Jobs.Scan, which leaves it so that it can be
// scanned again, and which reads the file through a window of a fixed
// size (1 MiB) rather than the whole file; Jobs.Drop removes a month
// unread. For a month too large to sort in memory the pipeline sorts its
// chunks and writes each as a sorted run (Jobs.WriteRun), a file in the
// same encoding that a RunReader reads back once, a record at a time
// through such a window, for a k-way merge; the reader's Close removes
// the run.
//
// It reads and writes files: a directory created in the history (the
// output's disk), removed with its months and runs when the run ends,
// and the directories of killed runs removed by RemoveStale. Package
// pipeline is its one user.
package spill
