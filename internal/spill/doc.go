// Package spill keeps a run's job records on disk until the jobs table
// takes them: one file per month of start, in a compact private encoding
// (varints; names and TRES sets as the run's record.JobDict indexes) that
// the same process writes and reads once, so that the run's memory does
// not grow with the number of jobs in its input.
//
// It reads and writes files: a directory created in the history (the
// output's disk), removed when the run ends, and the directories of
// killed runs removed by RemoveStale. Package pipeline is its one user.
package spill
