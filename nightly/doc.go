// Package nightly is the nightly job of `fairledger nightly`: it reads the
// site's configuration file, asks the history where each cluster's last
// night ended, fetches exactly the inputs the next night needs from Slurm's
// own clients (sacct in chunks, sacctmgr's association and QOS dumps) into a
// spool, and says which files and flags the run gets.
//
// Its place in the pipeline: before ingest. It touches files (the spool)
// and runs programs (sacct, sacctmgr) through a Runner, which tests replace;
// the planning of a night (Plan) and of the spool's pruning (Prunable) are
// pure functions of their arguments. The run itself is pipeline.Run, started
// by the command with the arguments Night.RunArgs gives.
package nightly
