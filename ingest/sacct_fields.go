package ingest

import (
	"strings"
)

// sacct columns fairledger uses. Columns not listed here are carried only
// for record alignment (and checked when a row needs '|' recovery).
type sacctCol uint8

const (
	colOther sacctCol = iota
	colJobID
	colJobIDRaw
	colCluster
	colUser
	colAccount
	colPartition
	colQOS
	colSubmit
	colEligible
	colStart
	colEnd
	colElapsed
	colElapsedRaw
	colSuspended
	colState
	colNNodes
	colAllocCPUS
	colAllocTRES
	colReqTRES
	colTimelimit
	colExitCode
	colJobName
	// Read only with SacctOptions.RequestColumns (sacctLayout.request),
	// as ReqTRES is (which is mapped whatever the options, as it always
	// was: see recoverPipes).
	colReqCPUS
	colReqNodes
	colPriority
	colSubmitLine
	numSacctCols
)

var sacctColNames = map[string]sacctCol{
	"jobid":      colJobID,
	"jobidraw":   colJobIDRaw,
	"cluster":    colCluster,
	"user":       colUser,
	"account":    colAccount,
	"partition":  colPartition,
	"qos":        colQOS,
	"submit":     colSubmit,
	"eligible":   colEligible,
	"start":      colStart,
	"end":        colEnd,
	"elapsed":    colElapsed,
	"elapsedraw": colElapsedRaw,
	"suspended":  colSuspended,
	"state":      colState,
	"nnodes":     colNNodes,
	"alloccpus":  colAllocCPUS,
	"alloctres":  colAllocTRES,
	"reqtres":    colReqTRES,
	"timelimit":  colTimelimit,
	"exitcode":   colExitCode,
	"jobname":    colJobName,
	"reqcpus":    colReqCPUS,
	"reqnodes":   colReqNodes,
	"priority":   colPriority,
	"submitline": colSubmitLine,
}

// isRequestCol reports whether c is mapped only for the request columns.
func isRequestCol(c sacctCol) bool {
	switch c {
	case colReqCPUS, colReqNodes, colPriority, colSubmitLine:
		return true
	}
	return false
}

// SacctRequired lists the sacct columns a file must have (JobID may be
// replaced by JobIDRaw): without one of them every job record would be
// rejected (JobID, User, Account, State), skipped as never started (Start)
// or charged wrongly (End, Partition, AllocTRES), so a file that lacks one
// is refused whole (a *FileError) before any of its rows is used. These are
// the columns a plain run needs; RunFields is the -o list to fetch.
var SacctRequired = []string{"JobID", "User", "Account", "Partition", "Start", "End", "State", "AllocTRES"}

// RunFields is the sacct -o list a run should fetch: SacctRequired and the
// optional columns a run reads (each with its fallback when absent; see
// docs/inputs.md). It is also the "fairledger" preset of SacctPresets.
var RunFields = strings.Split("JobID,JobIDRaw,Cluster,Partition,QOS,Account,User,Submit,Eligible,Start,End,Elapsed,ElapsedRaw,Suspended,State,ExitCode,NNodes,AllocCPUS,ReqTRES,AllocTRES,Timelimit,JobName", ",")

// PriorityRequired lists the columns a run with job priority (run
// --priority, check --priority) needs beyond SacctRequired, for
// SacctOptions.Require: without them every waiting job's priority would be
// computed from a value that is not the job's (its age from no Eligible,
// its size from its allocation instead of its request, its nice, hold and
// partitions as if SubmitLine were empty, its QOS factor 0).
var PriorityRequired = []string{"JobIDRaw", "QOS", "Submit", "Eligible", "Timelimit", "ReqCPUS", "ReqNodes", "ReqTRES", "SubmitLine"}

// PriorityFields is the sacct -o list a run with job priority should fetch:
// RunFields, the request columns and Priority (sacct's own record of each
// job's priority at submit, kept for comparison).
var PriorityFields = strings.Split("JobID,JobIDRaw,Cluster,Partition,QOS,Account,User,Submit,Eligible,Start,End,Elapsed,ElapsedRaw,Suspended,State,ExitCode,NNodes,AllocCPUS,ReqCPUS,ReqNodes,ReqTRES,AllocTRES,Timelimit,Priority,JobName,SubmitLine", ",")

// PriorityStates is the sacct -s list a run with job priority should
// fetch: every state. Without -s, sacct leaves out the jobs that never
// became eligible (held, or waiting on a dependency), which no column of
// the file can reveal.
const PriorityStates = "PD,R,RQ,RS,RV,S,CD,CA,F,TO,NF,PR,OOM,BF,DL"

// SacctPresets are named headerless field lists for files written without a
// header line (sacct -n).
var SacctPresets = map[string][]string{
	// XDMoD's shredder format: sacct -P -n -o with these 26 fields.
	"xdmod": strings.Split("JobID,JobIDRaw,Cluster,Partition,QOS,Account,Group,GID,User,UID,Submit,Eligible,Start,End,Elapsed,ExitCode,State,NNodes,NCPUS,ReqCPUS,ReqMem,ReqTRES,AllocTRES,Timelimit,NodeList,JobName", ","),
	// The columns fairledger's own generator and the sacct invocation
	// recommended in docs/inputs.md and docs/operations.md use.
	"fairledger": RunFields,
}

// fieldClass says what a column may contain, for '|' recovery: free-text
// columns may absorb stray delimiters, all others are checked against their
// syntax to find the one alignment that fits.
type fieldClass uint8

const (
	classWord     fieldClass = iota // any text without whitespace (names, node lists)
	classFreeText                   // may contain spaces and '|'
	classInt                        // digits
	classTime                       // timestamp, Unknown, None
	classDuration                   // [D-]HH:MM:SS, MM:SS.mmm, UNLIMITED, Partition_Limit, INVALID
	classJobID                      // job id syntax
	classTRES                       // name=value,...
	classExit                       // n:n
	classState                      // STATE or "CANCELLED by N"
	classAny                        // anything without '|' (unknown columns)
)

var sacctFreeText = map[string]bool{
	"jobname": true, "submitline": true, "constraints": true, "comment": true,
	"admincomment": true, "systemcomment": true, "workdir": true, "container": true,
	"extra": true, "stdin": true, "stdout": true, "stderr": true,
}

var sacctClasses = map[string]fieldClass{
	"submit": classTime, "eligible": classTime, "start": classTime, "end": classTime,
	"elapsed": classDuration, "cputime": classDuration, "totalcpu": classDuration,
	"usercpu": classDuration, "systemcpu": classDuration, "suspended": classDuration,
	"timelimit": classDuration, "reserved": classDuration, "avecpu": classDuration,
	"mincpu": classDuration, "resvcpu": classDuration, "planned": classDuration,
	"elapsedraw": classInt, "cputimeraw": classInt, "alloccpus": classInt, "allocnodes": classInt,
	"ncpus": classInt, "nnodes": classInt, "reqcpus": classInt, "ntasks": classInt,
	"gid": classInt, "uid": classInt, "associd": classInt, "dbindex": classInt, "priority": classInt,
	"qosraw": classInt, "timelimitraw": classInt, "resvcpuraw": classInt, "consumedenergyraw": classInt,
	"wckeyid": classInt, "reservationid": classInt, "plannedcpuraw": classInt,
	"jobid": classJobID, "jobidraw": classJobID, "hetjobid": classJobID,
	"alloctres": classTRES, "reqtres": classTRES,
	"exitcode": classExit, "derivedexitcode": classExit,
	"state": classState,
}

// classOf returns the syntax class of a column title.
func classOf(title string) fieldClass {
	t := strings.ToLower(title)
	if sacctFreeText[t] {
		return classFreeText
	}
	if c, ok := sacctClasses[t]; ok {
		return c
	}
	if strings.HasPrefix(t, "tres") {
		return classTRES
	}
	return classWord
}

// fits reports whether v is acceptable in a column of class c. Empty values
// fit every class: sacct prints empty fields freely.
func (c fieldClass) fits(v []byte) bool {
	if len(v) == 0 {
		return true
	}
	switch c {
	case classFreeText, classAny:
		return true
	case classWord:
		for _, ch := range v {
			if ch == ' ' || ch == '\t' || ch == '\n' {
				return false
			}
		}
		return true
	case classInt:
		_, err := parseInt(v)
		return err == nil
	case classTime:
		_, _, err := (&localClock{utc: true}).parseTime(v)
		return err == nil
	case classDuration:
		switch string(v) {
		case "UNLIMITED", "Partition_Limit", "INVALID", "NONE":
			return true
		}
		_, err := parseElapsed(v)
		return err == nil
	case classJobID:
		_, err := parseJobID(v)
		return err == nil
	case classTRES:
		for _, ch := range v {
			if ch == ' ' || ch == '\t' {
				return false
			}
		}
		for _, ch := range v {
			if ch == '=' {
				return true
			}
		}
		return false
	case classExit:
		_, i, ok := leadingInt(v)
		if !ok || i >= len(v) || v[i] != ':' {
			return false
		}
		_, err := parseInt(v[i+1:])
		return err == nil
	case classState:
		if v[0] < 'A' || v[0] > 'Z' {
			return false
		}
		for _, ch := range v {
			if !(ch >= 'A' && ch <= 'Z' || ch == '_' || ch == ' ' || ch >= '0' && ch <= '9' || ch == 'b' || ch == 'y') {
				return false
			}
		}
		return true
	}
	return true
}
