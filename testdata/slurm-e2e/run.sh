#!/usr/bin/env bash
# run.sh [RELEASE]: run real Slurm clusters of one release on this machine,
# capture what they print, and compare fairledger with them cell by cell.
# `make slurm-e2e` calls it once per release; docs/slurm-e2e.md describes it.
#
# RELEASE is 22.05 (the default: Debian 12's slurm-wlm, installed on the
# host), 24.11 (Debian trixie's) or 26.05 (Debian sid's); the two newer ones
# run in a chroot tree that root.sh builds with debootstrap and caches.
#
# Three scenarios run side by side, each a complete cluster of its own (munged,
# MariaDB, slurmdbd, slurmctld, slurmd, all started here, no systemd, every file
# in a scratch directory):
#   decay    PriorityDecayHalfLife=0-0:15
#   nodecay  PriorityDecayHalfLife=0
#   prio     PriorityDecayHalfLife=0-0:15, every job-priority weight non-zero,
#            a saturated node: most jobs wait, `sprio -l` is captured too
# decay and nodecay run the same jobs; each scenario runs for
# FAIRLEDGER_SLURM_MINUTES (≥ 3) minutes, capturing `sshare -a -l -P` every
# minute, then export sacct, sacctmgr, slurm.conf and the slurmctld log into the
# capture directory, stop exactly the processes started here and run the Go
# tests TestSlurmE2E and TestSprioE2E on the capture.
#
# Environment:
#   FAIRLEDGER_REQUIRE_SLURM=1  fail (instead of skipping) without root or apt-get
#   FAIRLEDGER_SLURM_KEEP=DIR   keep the capture directory as DIR/RELEASE (must not exist)
#   FAIRLEDGER_SLURM_ROOTS=DIR  where the chroot trees are cached
#                               (default /var/cache/fairledger/slurm-e2e)
#   FAIRLEDGER_DEBIAN_MIRROR=URL  the mirror debootstrap reads
#   FAIRLEDGER_SLURM_EXACT=1    the comparison requires every cell to be equal
#   FAIRLEDGER_SLURM_MINUTES=N  minutes of jobs (default 4, at least 3)
#   GO                          the go command (default go)
set -euo pipefail

say() { printf 'slurm-e2e: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

t_begin=$(now)
# The daemons and their logs in UTC: the captures read the same on any machine.
export TZ=UTC
repo=$(cd "$(dirname "$0")/../.." && pwd)
release=${1:-22.05}
GO=${GO:-go}
minutes=${FAIRLEDGER_SLURM_MINUTES:-4}
[[ $minutes =~ ^[0-9]+$ ]] && ((minutes >= 3)) || die "FAIRLEDGER_SLURM_MINUTES=$minutes: want a whole number ≥ 3"

skip() {
	if [[ ${FAIRLEDGER_REQUIRE_SLURM:-} == 1 ]]; then
		die "$* (FAIRLEDGER_REQUIRE_SLURM=1)"
	fi
	say "skipped: $* (set FAIRLEDGER_REQUIRE_SLURM=1 to fail instead)"
	exit 0
}
# shellcheck source=root.sh
. "$repo/testdata/slurm-e2e/root.sh"
suite=$(release_suite "$release") || die "release $release: want 22.05, 24.11 or 26.05"
[[ $(id -u) == 0 ]] || skip "needs root to install Slurm and start its daemons"
command -v apt-get >/dev/null || skip "needs apt-get (Debian 12) to install Slurm"
keep=
if [[ -n ${FAIRLEDGER_SLURM_KEEP:-} ]]; then
	keep=$FAIRLEDGER_SLURM_KEEP/$release
	[[ -e $keep ]] && die "$keep already exists (FAIRLEDGER_SLURM_KEEP=$FAIRLEDGER_SLURM_KEEP)"
fi

# ---- install -----------------------------------------------------------------
# 22.05: the host's packages. 24.11, 26.05: a chroot tree (root.sh); every
# Slurm, munge and MariaDB command then runs in it, through the functions
# below, and the daemons through start's "${in_root[@]}".
in_root=()
root=
packages=(slurm-wlm slurmctld slurmd slurm-client slurmdbd munge mariadb-server)
missing=()
if [[ $suite == host ]]; then
	for p in "${packages[@]}"; do
		dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
fi
t0=$(now)
if [[ $suite != host ]]; then
	root=$(root_build "$suite")
	in_root=(chroot "$root")
	for c in mungekey munged mariadb-install-db mariadbd mariadb slurmdbd slurmctld slurmd sacctmgr sacct sbatch \
		scancel squeue sinfo sshare sprio scontrol useradd; do
		# shellcheck disable=SC2139 # expanded here, on purpose
		eval "$c() { chroot \"\$root\" $c \"\$@\"; }"
	done
fi
if ((${#missing[@]})); then
	say "installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	# The packages' own services (munged, mariadb, slurmctld, ...) must not
	# start: a policy-rc.d refusing them while apt-get runs, unless there is one.
	policy=
	if [[ ! -e /usr/sbin/policy-rc.d ]]; then
		policy=/usr/sbin/policy-rc.d
		printf '#!/bin/sh\n# written by fairledger slurm-e2e for its apt-get install: no service starts\nexit 101\n' >"$policy"
		chmod 755 "$policy"
		trap 'rm -f "$policy"' EXIT
	fi
	if ! apt-get install -y -q --no-install-recommends "${missing[@]}" >/tmp/slurm-e2e-apt.$$.log 2>&1; then
		apt-get update -q >>/tmp/slurm-e2e-apt.$$.log 2>&1 || true
		apt-get install -y -q --no-install-recommends "${missing[@]}" >>/tmp/slurm-e2e-apt.$$.log 2>&1 ||
			{ tail -n 20 /tmp/slurm-e2e-apt.$$.log >&2; rm -f /tmp/slurm-e2e-apt.$$.log; skip "apt-get install ${missing[*]} failed"; }
	fi
	rm -f /tmp/slurm-e2e-apt.$$.log
	if [[ -n $policy ]]; then
		rm -f "$policy"
		trap - EXIT
	fi
fi
t_install=$(secs "$t0" "$(now)")
version=$(slurmctld -V | awk '{print $2}')
[[ $version == "$release".* ]] || die "slurmctld is $version, not $release"

# ---- scratch, capture, cleanup ------------------------------------------------
work=$(mktemp -d /tmp/slurm-e2e.XXXXXX)
chmod 755 "$work"                     # the jobs run as the test users and write under it
scr=$work/cluster                     # everything the daemons touch
mkdir -m 755 "$scr"
capture=${keep:-$work/capture}
mkdir -p "$capture"
capture=$(cd "$capture" && pwd)
users=(fl_alice fl_bob fl_carol fl_dave fl_eve)
created_users=()
scenarios=(decay nodecay prio)
declare -A halflife=([decay]=0-0:15 [nodecay]=0 [prio]=0-0:15)
# Without decay slurmctld refuses to start unless usage is reset some time
# ("the priority plugin will result in rolling over"): once a year.
declare -A reset=([decay]=NONE [nodecay]=YEARLY [prio]=NONE)

# pids.txt of each scenario: "PID NAME" per daemon started, in start order.
stop_pid() { # PID NAME: SIGTERM, then SIGKILL after 20 s
	local pid=$1 name=$2 i
	kill -0 "$pid" 2>/dev/null || return 0
	kill "$pid" 2>/dev/null || true
	for ((i = 0; i < 200; i++)); do
		kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null || true; return 0; }
		sleep 0.1
	done
	say "$name ($pid) did not stop on SIGTERM: SIGKILL"
	kill -9 "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}

# job_pids: the processes of this run's jobs: those of the users created here,
# and the slurmstepd processes whose SLURM_CONF is one of this run's.
job_pids() {
	local u p
	if [[ -n $root ]]; then # in the tree: its slurmstepd and the test users' processes
		local comm uid
		for p in $(root_pids "$root"); do
			comm=$(cat "/proc/$p/comm" 2>/dev/null) || continue
			uid=$(awk '/^Uid:/ { print $2 }' "/proc/$p/status" 2>/dev/null) || continue
			if [[ $comm == slurmstepd || ( -n $uid && $uid != 0 ) ]]; then echo "$p"; fi
		done
		return 0
	fi
	for u in "${created_users[@]}"; do pgrep -u "$u" || true; done
	for p in /proc/[0-9]*; do
		[[ $(cat "$p/comm" 2>/dev/null) == slurmstepd ]] || continue
		tr '\0' '\n' 2>/dev/null <"$p/environ" | grep -qx "SLURM_CONF=$scr/.*" && echo "${p#/proc/}"
	done
}

cluster_up=0
failing= # the scenario directory whose logs a failure shows
stop_clusters() {
	((cluster_up)) || return 0
	local s pid name i j lines
	for s in "${scenarios[@]}"; do
		[[ -f $scr/$s/pids.txt ]] || continue
		if grep -q ' slurmctld$' "$scr/$s/pids.txt"; then
			export SLURM_CONF=$scr/$s/etc/slurm.conf
			for j in $(timeout 10 "${in_root[@]}" squeue -h -o %F 2>/dev/null | sort -u); do timeout 10 "${in_root[@]}" scancel "$j" 2>/dev/null; done
			unset SLURM_CONF
		fi
	done
	for ((i = 0; i < 150; i++)); do # the jobs end before slurmd stops
		[[ -z $(job_pids) ]] && break
		sleep 0.2
	done
	for pid in $(job_pids); do say "job process $pid still running: SIGKILL"; kill -9 "$pid" 2>/dev/null || true; done
	for s in "${scenarios[@]}"; do
		[[ -f $scr/$s/pids.txt ]] || continue
		mapfile -t lines < <(tac "$scr/$s/pids.txt") # not a pipe: wait needs the daemons to be this shell's children
		for pid in "${lines[@]}"; do stop_pid "${pid% *}" "${pid#* }"; done
	done
	if [[ -n $root ]]; then
		for pid in $(root_pids "$root"); do say "process $pid left in $root: SIGKILL"; kill -9 "$pid" 2>/dev/null || true; done
	fi
	cluster_up=0
}

cleanup() {
	local rc=$?
	set +e
	trap - EXIT INT TERM
	if ((rc)) && [[ -n $failing && -d $failing ]]; then dump_logs "$failing"; fi
	stop_clusters
	root_leave
	for u in "${created_users[@]}"; do userdel "$u" 2>/dev/null || say "userdel $u failed"; done
	created_users=()
	if [[ -n $keep ]]; then
		say "capture kept in $capture"
	fi
	rm -rf "$work"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- the test's Go binary, built while the clusters run -----------------------
# The fairledger binary first: fairledger nightly runs against the decay
# cluster while its jobs run.
(cd "$repo" && "$GO" build -o "$work/fairledger.part" ./cmd/fairledger && mv "$work/fairledger.part" "$work/fairledger" &&
	"$GO" test -c -o "$work/fairledger.test" ./cmd/fairledger && "$GO" test -c -o "$work/pipeline.test" ./pipeline) >"$work/go-build.log" 2>&1 &
build_pid=$!

# ---- users ------------------------------------------------------------------------
# In a chroot tree the users are the tree's own: created once, kept with it.
if [[ -n $root ]]; then
	root_enter "$root" "$work"
	for u in "${users[@]}"; do
		chroot "$root" id "$u" >/dev/null 2>&1 ||
			useradd --no-create-home --no-user-group --home-dir /nonexistent --shell /usr/sbin/nologin "$u"
	done
else
	for u in "${users[@]}"; do
		if ! id "$u" >/dev/null 2>&1; then
			useradd --no-create-home --no-user-group --home-dir /nonexistent --shell /usr/sbin/nologin "$u"
			created_users+=("$u")
		fi
	done
fi

# ---- ports ------------------------------------------------------------------------
taken=" "
free_port() { # VAR: a TCP port nothing listens on, and not given before
	local p
	while :; do
		p=$((20000 + RANDOM % 20000))
		[[ $taken == *" $p "* ]] && continue
		[[ -z $(ss -Htan "( sport = :$p )" 2>/dev/null) ]] || continue
		taken+="$p "
		printf -v "$1" %d "$p"
		return
	done
}

# ---- bring-up ---------------------------------------------------------------------
# What differs by release in how the daemons start and what slurm.conf says:
# 22.05 has task/none and jobacct_gather/none (later releases have neither,
# and their slurmd needs cgroup.conf's CgroupPlugin=disabled without
# cgroups); trixie's and sid's MariaDB (11.8) needs snapshot isolation off
# for slurmdbd's transactions, and their slurmdbd bookworm's client library
# (root.sh).
release_conf=$'TaskPlugin=task/none\nJobAcctGatherType=jobacct_gather/none'
mariadb_args=()
slurmdbd_cmd=(slurmdbd -D)
if [[ $release != 22.05 ]]; then
	release_conf=
	mariadb_args=(--innodb-snapshot-isolation=OFF)
	slurmdbd_cmd=(env "LD_LIBRARY_PATH=$root_libdir" slurmdbd -D)
fi
start() { # SCENARIO NAME COMMAND...: start a daemon in the foreground, record its PID
	local s=$1 name=$2
	shift 2
	"${in_root[@]}" "$@" >"$scr/$s/log/$name.out" 2>&1 &
	echo "$! $name" >>"$scr/$s/pids.txt"
}

wait_for() { # SECONDS WHAT COMMAND...: poll until COMMAND succeeds
	local limit=$1 what=$2 i
	shift 2
	for ((i = 0; i < limit * 10; i++)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	die "$what did not come up in $limit s"
}

dump_logs() { # DIR: the end of every daemon log of a scenario, for a failure
	local f
	for f in "$1"/log/*; do
		say "--- $f"
		tail -n 15 "$f" >&2
	done
}

bring_up() { # SCENARIO
	local s=$1 d=$scr/$1
	mkdir -p "$d"/{etc,log,state,spool,dev,db}
	mkdir -m 700 "$d/munge"
	mkdir -m 755 "$d/run"
	mkdir -m 1777 "$d/jobs"
	local p_db p_dbd p_ctld p_d
	free_port p_db
	free_port p_dbd
	free_port p_ctld
	free_port p_d

	# munged with its own key and socket
	mungekey --create --keyfile="$d/munge/munge.key" >"$d/log/mungekey.log" 2>&1
	start "$s" munged munged --foreground --socket="$d/run/munge.sock" --key-file="$d/munge/munge.key" \
		--pid-file="$d/run/munged.pid" --log-file="$d/log/munged.log" --seed-file="$d/munge/munged.seed"
	wait_for 10 munged test -S "$d/run/munge.sock"

	# MariaDB with its own datadir and socket, TCP on 127.0.0.1 for slurmdbd
	mariadb-install-db --no-defaults --datadir="$d/db" --user=root --auth-root-authentication-method=normal \
		--skip-test-db >"$d/log/mariadb-install.log" 2>&1 || { tail "$d/log/mariadb-install.log" >&2; die "mariadb-install-db failed"; }
	cat >"$d/etc/db-init.sql" <<-EOF
		CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY 'slurm-e2e';
		GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';
	EOF
	start "$s" mariadbd mariadbd --no-defaults --datadir="$d/db" --socket="$d/run/mysql.sock" \
		--pid-file="$d/run/mariadbd.pid" --port="$p_db" --bind-address=127.0.0.1 --user=root \
		--log-error="$d/log/mariadb.log" --init-file="$d/etc/db-init.sql" --skip-log-bin \
		--innodb-buffer-pool-size=128M --innodb-lock-wait-timeout=900 "${mariadb_args[@]}"
	wait_for 30 MariaDB mariadb --no-defaults -h 127.0.0.1 -P "$p_db" -u slurm -pslurm-e2e -e 'SELECT 1'

	# slurm.conf: per release (release_conf), then one node with more CPUs and memory than the machine has
	# (config_overrides), four GPUs on character devices (22.05 drops a GPU
	# without File= and refuses a regular file), no cgroups.
	# prio: every job-priority weight, the partitions' PriorityJobFactor 1 and 10.
	local i weights= pjf_cpu= pjf_gpu=
	if [[ $s == prio ]]; then
		weights=$'PriorityWeightAge=1000\nPriorityWeightJobSize=1000\nPriorityWeightPartition=1000\nPriorityWeightQOS=2000\nPriorityWeightAssoc=500\nPriorityWeightTRES=CPU=500,Mem=200,GRES/gpu=3000\nPriorityMaxAge=0-0:10'
		pjf_cpu=' PriorityJobFactor=1' pjf_gpu=' PriorityJobFactor=10'
	fi
	for i in 0 1 2 3; do mknod "$d/dev/gpu$i" c 1 3; done
	cat >"$d/etc/slurm.conf" <<-EOF
		ClusterName=fl$s
		SlurmctldHost=localhost(127.0.0.1)
		SlurmctldPort=$p_ctld
		SlurmdPort=$p_d
		SlurmUser=root
		AuthType=auth/munge
		AuthInfo=socket=$d/run/munge.sock
		StateSaveLocation=$d/state
		SlurmdSpoolDir=$d/spool
		SlurmctldPidFile=$d/run/slurmctld.pid
		SlurmdPidFile=$d/run/slurmd.pid
		SlurmctldLogFile=$d/log/slurmctld.log
		SlurmdLogFile=$d/log/slurmd.log
		SlurmctldDebug=verbose
		SlurmdDebug=info
		DebugFlags=Priority
		ProctrackType=proctrack/linuxproc
		$release_conf
		SlurmdParameters=config_overrides
		SelectType=select/cons_tres
		SelectTypeParameters=CR_Core_Memory
		MpiDefault=none
		ReturnToService=2
		MinJobAge=3600
		KillWait=5
		GresTypes=gpu
		AccountingStorageType=accounting_storage/slurmdbd
		AccountingStorageHost=127.0.0.1
		AccountingStoragePort=$p_dbd
		AccountingStoragePass=$d/run/munge.sock
		AccountingStorageEnforce=limits
		AccountingStorageTRES=gres/gpu
		PriorityType=priority/multifactor
		PriorityCalcPeriod=1
		PriorityDecayHalfLife=${halflife[$s]}
		PriorityUsageResetPeriod=${reset[$s]}
		PriorityWeightFairshare=10000
		$weights
		NodeName=node1 NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=32 RealMemory=64000 Gres=gpu:4 State=UNKNOWN
		PartitionName=cpu Nodes=node1 Default=YES MaxTime=INFINITE State=UP$pjf_cpu TRESBillingWeights="CPU=1.0,Mem=0.25G"
		PartitionName=gpu Nodes=node1 MaxTime=INFINITE State=UP$pjf_gpu TRESBillingWeights="CPU=1.0,Mem=0.25G,GRES/gpu=2.0"
	EOF
	echo "NodeName=node1 Name=gpu File=$d/dev/gpu[0-3]" >"$d/etc/gres.conf"
	if [[ $release != 22.05 ]]; then echo "CgroupPlugin=disabled" >"$d/etc/cgroup.conf"; fi
	(umask 077 && cat >"$d/etc/slurmdbd.conf") <<-EOF
		AuthType=auth/munge
		AuthInfo=socket=$d/run/munge.sock
		DbdHost=localhost
		DbdAddr=127.0.0.1
		DbdPort=$p_dbd
		SlurmUser=root
		DebugLevel=verbose
		LogFile=$d/log/slurmdbd.log
		PidFile=$d/run/slurmdbd.pid
		StorageType=accounting_storage/mysql
		StorageHost=127.0.0.1
		StoragePort=$p_db
		StorageUser=slurm
		StoragePass=slurm-e2e
		StorageLoc=slurm_acct_db
	EOF
	export SLURM_CONF=$d/etc/slurm.conf # slurmdbd finds slurmdbd.conf beside it
	start "$s" slurmdbd "${slurmdbd_cmd[@]}"
	wait_for 30 slurmdbd sacctmgr -n show cluster
	setup_accounts "$s" >"$d/log/sacctmgr-setup.log" 2>&1
	start "$s" slurmctld slurmctld -D -i
	start "$s" slurmd slurmd -D -N node1
	node_idle() { [[ $(sinfo -h -n node1 -o %T) == idle ]]; }
	wait_for 30 "node1 of $s" node_idle
	unset SLURM_CONF
}

setup_accounts() { # SCENARIO: a tree with a nested account, a fairshare=parent user, users in two accounts
	local c=fl$1
	# prio: QOS priorities 0 (normal), 100 and 500; association priorities on
	# physics, chem and fl_bob/theory; theory and the others inherit theirs.
	local qp= hp= pp= cp= bp= ep= qs=normal,half
	if [[ $1 == prio ]]; then
		qp=priority=100 hp=priority=500 pp=priority=10 cp=priority=50 bp=priority=100 ep=priority=80 qs=normal,half,high
	fi
	sacctmgr -i add cluster "$c"
	sacctmgr -i add qos half UsageFactor=0.5 $qp
	if [[ $1 == prio ]]; then sacctmgr -i add qos high $hp; fi
	sacctmgr -i add account physics cluster="$c" fairshare=40 grptresmins=cpu=1000000,mem=2000000 $pp
	sacctmgr -i add account theory cluster="$c" parent=physics fairshare=30
	sacctmgr -i add account chem cluster="$c" fairshare=20 $cp
	local q=(qos=$qs defaultqos=normal)
	sacctmgr -i add user fl_alice cluster="$c" account=physics fairshare=10 "${q[@]}"
	sacctmgr -i add user fl_alice cluster="$c" account=chem fairshare=5 "${q[@]}"
	sacctmgr -i add user fl_bob cluster="$c" account=theory fairshare=1 "${q[@]}" $bp
	sacctmgr -i add user fl_carol cluster="$c" account=theory fairshare=parent "${q[@]}"
	sacctmgr -i add user fl_dave cluster="$c" account=chem fairshare=3 "${q[@]}"
	sacctmgr -i add user fl_dave cluster="$c" account=theory fairshare=2 "${q[@]}"
	# fl_eve has one association per partition in chem: gpu's has its own
	# shares, usage and (prio) priority; cpu's inherits chem's. cpu's is
	# made first: slurmdbd gives a new association the lft right after its
	# parent's, so on 22.05 the dump and sshare list gpu's first, against
	# lineage order (docs/slurm-versions.md §3); 23.11 on, cpu's first.
	sacctmgr -i add user fl_eve cluster="$c" account=chem partition=cpu fairshare=1 "${q[@]}"
	sacctmgr -i add user fl_eve cluster="$c" account=chem partition=gpu fairshare=4 "${q[@]}" $ep
}

cluster_up=1
t0=$(now)
span_start=${t0%.*}
for s in "${scenarios[@]}"; do
	failing=$scr/$s
	bring_up "$s" # not in a || list: errexit holds inside
done
failing=
t_bringup=$(secs "$t0" "$(now)")
say "Slurm $version: installed in $t_install s, ${#scenarios[@]} clusters up in $t_bringup s"

# ---- the jobs ---------------------------------------------------------------------
# workload SCENARIO: the same jobs in each scenario, timed from its start; the
# captures of sshare every minute. Runs in a subshell per scenario.
workload() {
	local s=$1 d=$scr/$1 start_t
	export SLURM_CONF=$d/etc/slurm.conf
	start_t=$(date +%s)
	at() { # SECONDS: sleep until that many seconds after the start
		local left=$((start_t + $1 - $(date +%s)))
		((left > 0)) && sleep "$left"
		return 0
	}
	note() { printf '%s\t%s\n' "$(now)" "$*" >>"$capture/$s/events.tsv"; } # what the jobs did, when
	sub() { # USER ACCOUNT PARTITION SBATCH-ARGS...: the job id
		local u=$1 a=$2 p=$3 id
		shift 3
		id=$(sbatch --parsable --uid="$u" --gid=users -A "$a" -p "$p" -D "$d/jobs" -o "$d/jobs/%x-%j.out" "$@" | cut -d';' -f1)
		note "submitted $id: $u $a $p $*"
		echo "$id"
	}
	cancel() { # JOB
		scancel "$1"
		note "cancelled $1"
	}
	capture_sshare() {
		local n=$1 t
		t=$(now)
		sshare -a -l -P -m >"$capture/$s/sshare/$n.psv"
		printf '%s.psv\t%s\t%s\n' "$n" "$t" "$(now)" >>"$capture/$s/captures.tsv" # before and after it ran
	}
	capture_sprio() { # sprio -l as users read it, and its normalised factors
		local n=$1 t
		t=$(now)
		sprio -l >"$capture/$s/sprio/$n.txt"
		printf '%s.txt\t%s\t%s\n' "$n" "$t" "$(now)" >>"$capture/$s/sprio.tsv" # before and after sprio -l ran
		sprio -l -n >"$capture/$s/sprio/$n-n.txt"
	}
	mkdir -p "$capture/$s/sshare"
	if [[ $s == prio ]]; then
		mkdir -p "$capture/$s/sprio"
		sprio -w >"$capture/$s/sprio/weights.txt"
	fi
	local j_long j_pend j_arr k next_capture=15 last_capture=$((15 + 60 * minutes))
	events() { # the jobs, in time order; a capture falls in every minute
		at 0
		sub fl_alice physics cpu -J a-cpu -c 2 --mem=2G -t 10 --wrap 'sleep 150' >/dev/null
		sub fl_alice chem cpu -J a-half -q half -c 4 --mem=1G -t 5 --wrap 'sleep 100' >/dev/null
		sub fl_bob theory gpu -J b-gpu -c 1 --mem=4G --gres=gpu:1 -t 8 --wrap 'sleep 200' >/dev/null
		sub fl_carol theory gpu -J c-gpu2 -c 2 --mem=1G --gres=gpu:2 -t 3 --wrap 'sleep 70' >/dev/null
		sub fl_dave chem cpu -J d-array -c 1 --mem=500M -t 4 --array=0-3 \
			--wrap 'sleep $((30 + 20 * SLURM_ARRAY_TASK_ID))' >/dev/null
		j_long=$(sub fl_dave theory cpu -J d-cancelled -q half -c 8 --mem=8G -t 20 --wrap 'sleep 400')
		j_pend=$(sub fl_bob theory cpu -J b-pending -c 1 --mem=1G -t 5 --begin=now+1hour --wrap 'sleep 60')
		at 10
		sub fl_eve chem gpu -J e-gpu -c 1 --mem=1G --gres=gpu:1 -t 5 --wrap 'sleep 120' >/dev/null
		sub fl_eve chem cpu -J e-cpu -c 4 --mem=2G -t 5 --wrap 'sleep 90' >/dev/null
		at 30
		sub fl_alice physics gpu -J a-running -c 2 --mem=2G --gres=gpu:1 -t 30 --wrap 'sleep 900' >/dev/null
		at 60
		cancel "$j_pend"
		at 90
		sub fl_carol theory cpu -J c-cpu -c 3 --mem=3G -t 5 --wrap 'sleep 60' >/dev/null
		sub fl_dave chem gpu -J d-gpu-half -q half -c 1 --mem=1G --gres=gpu:1 -t 4 --wrap 'sleep 80' >/dev/null
		at 130
		cancel "$j_long"
		at 150
		sub fl_carol theory cpu -J c-nolimit -c 1 --mem=1G --wrap 'sleep 900' >/dev/null
		at 170
		sub fl_bob theory cpu -J b-timeout -c 2 --mem=2G -t 1 --wrap 'sleep 300' >/dev/null
		at 200
		j_arr=$(sub fl_alice chem cpu -J a-array -c 1 --mem=1G -t 10 --array=0-2 --wrap 'sleep 200')
		at 230
		cancel "${j_arr}_1"
	}
	# at_tick: a job ending in the second of a decay tick, just after it:
	# wait for slurmctld to log its next tick after 140 s, then cancel the job.
	at_tick() {
		local log=$d/log/slurmctld.log j size
		at 5
		j=$(sub fl_dave chem cpu -J d-tick -c 4 --mem=2G -t 20 --wrap 'sleep 900')
		at 140
		size=$(stat -c %s "$log")
		until tail -c +$((size + 1)) "$log" | grep -q '_decay_thread: PRIO: Decay factor'; do sleep 0.02; done
		cancel "$j"
		note "(the tick before: $(grep '_decay_thread: PRIO: Decay factor' "$log" | tail -n 1 | cut -c2-24))"
	}
	# prio_events: a job holding every CPU of node1 for 140 s, and jobs
	# waiting behind it with every factor moving: two partitions, three
	# QOS, association priorities, sizes, GPUs, nice values, a hold, a
	# --begin, a dependency, a throttled array, a two-partition job, a
	# cancel while pending; then a second wave that waits behind the first.
	prio_events() {
		local blocker p1 p9 p11 p15 i
		at 0
		blocker=$(sub fl_alice physics cpu -J blocker -c 32 --mem=1G -t 5 --wrap 'sleep 140')
		for ((i = 0; i < 300; i++)); do
			[[ $(squeue -h -j "$blocker" -o %T) == RUNNING ]] && break
			sleep 0.1
		done
		at 5
		p1=$(sub fl_bob theory cpu -J p-small -c 4 --mem=2G -t 5 --wrap 'sleep 60')
		sub fl_carol theory gpu -J p-gpu-nice -c 2 --mem=1G --gres=gpu:1 -t 5 --nice=100 --wrap 'sleep 60' >/dev/null
		sub fl_dave chem cpu -J p-neg-nice -c 16 --mem=4G -t 10 --nice=-300 --wrap 'sleep 60' >/dev/null
		sub fl_alice chem cpu -J p-high -q high -c 1 --mem=500M -t 2 --wrap 'sleep 60' >/dev/null
		sub fl_alice physics cpu,gpu -J p-two-parts -c 2 --mem=1G -t 5 --wrap 'sleep 60' >/dev/null
		sub fl_dave theory cpu -J p-array -c 1 --mem=500M -t 3 --array=0-5%2 --wrap 'sleep 30' >/dev/null
		sub fl_bob theory cpu -J p-begin -c 1 --mem=500M -t 3 --begin=now+90 --wrap 'sleep 30' >/dev/null
		sub fl_carol theory cpu -J p-after -c 1 --mem=500M -t 3 --dependency=afterany:"$p1" --wrap 'sleep 30' >/dev/null
		p9=$(sub fl_bob theory cpu -J p-held -c 2 --mem=1G -t 3 -H --wrap 'sleep 30')
		sub fl_dave chem gpu -J p-gpu-half -q half -c 2 --mem=4G --gres=gpu:2 -t 5 --wrap 'sleep 60' >/dev/null
		p11=$(sub fl_alice physics cpu -J p-cancelled -c 8 --mem=16G -t 5 --wrap 'sleep 60')
		sub fl_carol theory cpu -J p-whole-node -c 32 --mem=8G -t 5 --wrap 'sleep 60' >/dev/null
		sub fl_eve chem cpu -J p-eve-cpu -c 2 --mem=1G -t 5 --wrap 'sleep 60' >/dev/null
		sub fl_eve chem gpu -J p-eve-gpu -c 1 --mem=1G --gres=gpu:1 -t 5 --wrap 'sleep 60' >/dev/null
		p15=$(sub fl_carol theory cpu -J p-hold-later -c 1 --mem=500M -t 3 --wrap 'sleep 30')
		at 30
		scontrol hold "$p15" # held after it has been pending: in no dump, only in slurmctld's log
		note "held $p15"
		at 60
		scontrol release "$p9"
		note "released $p9"
		at 90
		scontrol release "$p15"
		note "released $p15"
		at 100
		cancel "$p11"
		at 160
		sub fl_alice physics gpu -J q-late-gpu -c 4 --mem=2G --gres=gpu:4 -t 5 --wrap 'sleep 60' >/dev/null
		sub fl_dave chem cpu -J q-late-high -q high -c 8 --mem=8G -t 5 --wrap 'sleep 60' >/dev/null
		sub fl_bob theory cpu -J q-late-half -q half -c 24 --mem=4G -t 5 --nice=50 --wrap 'sleep 60' >/dev/null
	}
	# nightly_nights: fairledger nightly started as its systemd unit starts it,
	# with the example configuration on this cluster: a first night that
	# backfills, nights ending at captures, a skipped night, a night with
	# slurmdbd stopped (exit 1, nothing written) and the next one that
	# recovers, a night under another TZ (docs/slurm-e2e.md, "The nightly
	# command"). nights.tsv records each night for TestNightlyE2E.
	nightly_nights() {
		local dir=$capture/$s/nightly bin=$work/fairledger i exec_start first_to t
		local cfg=$dir/fairledger.toml
		mkdir -p "$dir"
		for ((i = 0; i < 3000; i++)); do
			[[ -x $bin ]] && break
			sleep 0.1
		done
		[[ -x $bin ]] || { echo "nightly: no fairledger binary after 300 s"; return 1; }
		# In a chroot tree, sacct and sacctmgr are scripts entering it.
		local clients=()
		if [[ -n $root ]]; then
			mkdir -p "$work/bin"
			for c in sacct sacctmgr; do
				printf '#!/bin/sh\nexec chroot %q %s "$@"\n' "$root" "$c" >"$work/bin/$c"
				chmod 755 "$work/bin/$c"
				clients+=(-e "s|^# $c = .*|$c = \"$work/bin/$c\"|")
			done
		fi
		sed "${clients[@]}" -e "s|^history = .*|history = \"$dir/history\"|" -e "s|^spool = .*|spool = \"$dir/spool\"|" \
			-e "s|^log_file = .*|log_file = \"$dir/nightly.log\"|" -e "s|^name = .*|name = \"fl$s\"|" \
			-e "s|^slurm_conf = .*|slurm_conf = \"$d/etc/slurm.conf\"|" -e "s|^first_day = .*|first_day = \"@$((span_start - 60))\"|" \
			-e "/^timezone = /d" -e "s|^window_end = .*|window_end = \"now\"|" "$repo/dist/fairledger.toml" >"$cfg"
		exec_start=$(sed -n 's/^ExecStart=//p' "$repo/dist/systemd/fairledger-nightly.service")
		exec_start=${exec_start/\/usr\/local\/bin\/fairledger/$bin}
		hist_state() { # what a failed night must leave as it was
			readlink "$dir/history/current" 2>/dev/null || true
			ls -A "$dir/history/gen" 2>/dev/null || true
			[[ -d $dir/history/current ]] && (cd "$dir/history/current/" && find . -type f -exec sha256sum {} + | sort)
			return 0
		}
		night() { # NAME CAPTURE TO WANT-EXIT [VAR=VALUE...]: one night, a line of nights.tsv
			local name=$1 cap=$2 to=$3 want=$4 before rc=0 unchanged=no
			shift 4
			local args=()
			[[ $to != - ]] && args=(--to "@$to")
			before=$(hist_state)
			# shellcheck disable=SC2086 # ExecStart's words, as systemd splits them
			env "$@" FAIRLEDGER_CONFIG="$cfg" $exec_start "${args[@]}" >"$dir/$name.out" 2>"$dir/$name.err" || rc=$?
			[[ $before == "$(hist_state)" ]] && unchanged=yes
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$cap" "$to" "$want" "$rc" "$unchanged" \
				"$(stat -c %s "$dir/$name.out")" "$(wc -l <"$dir/$name.err")" "$(head -c 400 "$dir/$name.err" | tr '\t\n' '  ')" >>"$dir/nights.tsv"
			note "nightly $name: exit $rc"
		}
		capture_at() { # NN: wait for capture NN, print its whole second
			local line
			until line=$(grep "^$1.psv" "$capture/$s/captures.tsv" 2>/dev/null); do sleep 0.2; done
			echo "${line#*$'\t'}" | cut -d. -f1
		}
		# slurmctld's first decay tick comes a PriorityCalcPeriod after its
		# start: a night before it is refused (no tick in the log yet).
		until grep -q '_decay_thread: PRIO: Decay factor' "$d/log/slurmctld.log"; do sleep 0.5; done
		night first - - 0 # the unit's ExecStart as it is: backfills from first_day to now
		first_to=$(date +%s) # at or after the first night's end
		for ((k = 0; k <= minutes; k++)); do
			t=$(capture_at "$(printf '%02d' "$k")")
			((t > first_to)) || { note "nightly: capture $k precedes the first night's end"; continue; }
			case $k in
			1) note "nightly: night 01 skipped (cron down)" ;;
			3)
				# slurmdbd stopped: sacct fails, the night exits 1 and writes nothing;
				# slurmdbd started again, the same night recovers.
				local dbd
				dbd=$(awk '$2 == "slurmdbd" { p = $1 } END { print p }' "$d/pids.txt")
				kill "$dbd"
				for ((i = 0; i < 200; i++)); do
					[[ $(ps -o stat= -p "$dbd" 2>/dev/null) == Z* || -z $(ps -o pid= -p "$dbd" 2>/dev/null) ]] && break
					sleep 0.1
				done
				night n03-slurmdbd-down 03.psv "$t" 1
				start "$s" slurmdbd "${slurmdbd_cmd[@]}"
				wait_for 30 slurmdbd sacctmgr -n show cluster
				night n03 03.psv "$t" 0
				;;
			4) night n04-tz 04.psv "$t" 0 TZ=Europe/Berlin ;; # cron's zone is not the history's
			*) night "n$(printf '%02d' "$k")" "$(printf '%02d' "$k").psv" "$t" 0 ;;
			esac
		done
	}
	# restart_ctld: slurmctld stopped (its PID, SIGTERM) and started again
	# at 115 s, while jobs run but none ends (the nearest end at about 100 s,
	# the next at 130 s): it reloads the associations' usage from its state
	# file, rebuilds TRESRunMins from the running jobs, charges them at once
	# for the time it was down and starts a new tick grid.
	restart_ctld() {
		local pid i
		at 115
		pid=$(awk '$2 == "slurmctld" { p = $1 } END { print p }' "$d/pids.txt")
		kill "$pid"
		for ((i = 0; i < 300; i++)); do
			[[ $(ps -o stat= -p "$pid" 2>/dev/null) == Z* || -z $(ps -o pid= -p "$pid" 2>/dev/null) ]] && break
			sleep 0.1
		done
		note "slurmctld stopped"
		grep -v " slurmctld\$" "$d/pids.txt" >"$d/pids.txt.new"
		mv "$d/pids.txt.new" "$d/pids.txt"
		start "$s" slurmctld slurmctld -D
		note "slurmctld started"
	}
	local ev tick= nl= rs=
	if [[ $s == decay ]]; then
		nightly_nights >"$d/log/nightly.log" 2>&1 &
		nl=$!
		restart_ctld &
		rs=$!
	fi
	if [[ $s == prio ]]; then
		prio_events &
		ev=$!
	else
		events &
		ev=$!
		at_tick &
		tick=$!
	fi
	for ((k = 0; next_capture <= last_capture; k++, next_capture += 60)); do
		at "$next_capture"
		capture_sshare "$(printf '%02d' "$k")"
		if [[ $s == prio ]]; then capture_sprio "$(printf '%02d' "$k")"; fi
	done
	wait "$ev" || die "$s: a job submission failed"
	if [[ -n $tick ]]; then wait "$tick" || die "$s: the cancellation at a tick failed"; fi
	if [[ -n $rs ]]; then wait "$rs" || die "$s: the restart of slurmctld failed"; fi
	if [[ -n $nl ]]; then wait "$nl" || { cat "$d/log/nightly.log" >&2; die "$s: the nightly nights failed"; }; fi
}

t0=$(now)
wl_pids=()
for s in "${scenarios[@]}"; do
	workload "$s" >"$scr/$s/log/workload.log" 2>&1 &
	wl_pids+=($!)
done
for i in "${!scenarios[@]}"; do
	failing=$scr/${scenarios[$i]}
	wait "${wl_pids[$i]}" || die "the jobs of ${scenarios[$i]} failed (log/workload.log)"
done
failing=
t_jobs=$(secs "$t0" "$(now)")

# ---- export -------------------------------------------------------------------------
sacct_fields=JobID,JobIDRaw,Cluster,Partition,QOS,Account,User,Submit,Eligible,Start,End,Elapsed,ElapsedRaw,Suspended,State,ExitCode,NNodes,AllocCPUS,ReqTRES,AllocTRES,Timelimit,JobName
# prio: what job priority needs too, and every state: without -s, sacct
# leaves out the jobs that never became eligible.
prio_sacct_fields=$sacct_fields,ReqCPUS,ReqNodes,Priority,SubmitLine
all_states=PD,R,RQ,RS,RV,S,CD,CA,F,TO,NF,PR,OOM,BF,DL
for s in "${scenarios[@]}"; do
	d=$scr/$s c=$capture/$s
	export SLURM_CONF=$d/etc/slurm.conf
	to=$(date +%s)
	fields=$sacct_fields states=()
	if [[ $s == prio ]]; then fields=$prio_sacct_fields states=(-s "$all_states"); fi
	dumped=$(date +%s)
	SLURM_TIME_FORMAT=%s sacct -a -D -P -S "$(date -d "@$((span_start - 60))" +%Y-%m-%dT%H:%M:%S)" -E now \
		"${states[@]}" -o "$fields" | sed "s|$d|/scratch|g" >"$c/sacct.psv" # SubmitLine names it
	# The same jobs as sacct.psv in sacct's JSON (data_parser, 24.11 on; a
	# 22.05 sacct --json prints openapi dbv0.0.38, which ingest refuses):
	# TestSacctJSONE2E ingests both and compares them. Dumped right after
	# sacct.psv; sacct-dumps.txt has the second before the one and after the
	# other, since a running job's elapsed time is sacct's clock's.
	if [[ $release != 22.05 ]]; then
		sacct -a -D --json -S "$(date -d "@$((span_start - 60))" +%Y-%m-%dT%H:%M:%S)" -E now \
			"${states[@]}" | sed "s|\\\\/|/|g; s|$d|/scratch|g" >"$c/sacct.json"
		echo "$dumped $(date +%s)" >"$c/sacct-dumps.txt"
	fi
	# The same jobs with every field this release's sacct has (sacct
	# --helpformat): ingest must read a site's dump whatever it holds.
	all_fields=$(sacct --helpformat | tr -s ' \n' ',' | sed 's/^,//; s/,$//')
	SLURM_TIME_FORMAT=%s sacct -a -D -P -S "$(date -d "@$((span_start - 60))" +%Y-%m-%dT%H:%M:%S)" -E now \
		"${states[@]}" -o "$all_fields" | sed "s|$d|/scratch|g" >"$c/sacct-all.psv"
	assoc_fields=Cluster,Account,User,Partition,ParentName,Share,Lineage,GrpTRESMins
	probe=$(sacctmgr -n -P show assoc format=Lineage 2>&1 || true)
	if [[ $probe == *"Unknown field"* ]]; then
		assoc_fields=${assoc_fields/,Lineage/} # 22.05 has no Lineage
	fi
	qos_fields=Name,UsageFactor,Flags
	if [[ $s == prio ]]; then assoc_fields+=,Priority qos_fields+=,Priority; fi
	sacctmgr -P show assoc format="$assoc_fields" >"$c/assoc.psv"
	sacctmgr -P show qos format="$qos_fields" >"$c/qos.psv"
	# the scratch path is this machine's: write it as /scratch
	sed "s|$d|/scratch|g" "$d/etc/slurm.conf" >"$c/slurm.conf"
	sed "s|$d|/scratch|g" "$d/log/slurmctld.log" >"$c/slurmctld.log"
	# slurmctld's record of its last decay tick (a packed time_t), if it wrote one
	if [[ -f $d/state/priority_last_decay_ran ]]; then cp "$d/state/priority_last_decay_ran" "$c/"; fi
	{
		echo "slurm_version=$version"
		echo "to=$to"
		echo "tz=$TZ"
		echo "half_life=${halflife[$s]}"
		echo "slurmctld_started=$(sed -n 's/^\[\([^]]*\)\] slurmctld version .* started.*/\1/p' "$d/log/slurmctld.log" | head -n 1)"
	} >"$c/meta.txt"
	unset SLURM_CONF
done

t0=$(now)
stop_clusters
t_stop=$(secs "$t0" "$(now)")
for u in "${created_users[@]}"; do userdel "$u" || say "userdel $u failed"; done
created_users=()
rm -rf "$scr"

# ---- compare ------------------------------------------------------------------------
wait "$build_pid" || { cat "$work/go-build.log" >&2; die "go test -c ./cmd/fairledger ./pipeline failed"; }
t_total=$(secs "$t_begin" "$(now)")
say "install ${t_install} s, bring-up ${t_bringup} s, jobs ${t_jobs} s, stop ${t_stop} s; total before the comparison ${t_total} s"
cd "$repo/cmd/fairledger"
# sshare and sprio through the CLI; the submit rows against sacct's
# Priority (the priority at submission) through the pipeline.
if ! FAIRLEDGER_SLURM_CAPTURE=$capture "$work/fairledger.test" -test.run '^(TestSlurmE2E|TestSprioE2E|TestNightlyE2E|TestSystemdUnits|TestSacctAllFieldsE2E|TestSacctJSONE2E)$' -test.v -test.count=1 ||
	! (cd "$repo/pipeline" && FAIRLEDGER_SLURM_CAPTURE=$capture "$work/pipeline.test" -test.run '^TestPrioritySubmitLive$' -test.v -test.count=1); then
	# What a later look needs when the capture is gone (CI): when each job
	# was submitted or cancelled, and slurmctld's ticks, job starts and ends.
	for c in "$capture"/*/; do
		say "$(basename "$c"): events.tsv, meta.txt, sacct.psv and slurmctld's decay and job lines"
		cat "$c/events.tsv" "$c/meta.txt" "$c/sacct.psv" >&2
		grep -E 'Decay factor|priority_p_job_end|Last ran decay|started on cluster|sched: Allocate|_job_complete|job_signal|ran for' "$c/slurmctld.log" >&2 || true
	done
	exit 1
fi
