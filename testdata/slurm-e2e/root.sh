# root.sh: a newer Debian release's Slurm in a chroot, for run.sh (sourced,
# not run). docs/slurm-e2e.md, "Three releases", describes it.
#
# Debian 12 (the host) ships Slurm 22.05. Debian's mirror also serves 24.11
# (trixie) and 26.05 (sid): root_build debootstraps a minimal tree of that
# suite, installs Slurm, munge and MariaDB into it, and keeps it in a cache
# directory, so that only the first run on a machine pays for it. Nothing is
# installed into the host but debootstrap. The daemons of a run are started
# with chroot(8) into that tree; root_enter mounts what they need (/proc, the
# run's scratch directory at its own path) and root_leave unmounts exactly
# that.

# release_suite RELEASE: the Debian suite whose Slurm is that release, or
# "host" for the host's own packages.
release_suite() {
	case $1 in
	22.05) echo host ;;
	24.11) echo trixie ;;
	26.05) echo sid ;;
	*) return 1 ;;
	esac
}

root_cache=${FAIRLEDGER_SLURM_ROOTS:-/var/cache/fairledger/slurm-e2e}
root_mirror=${FAIRLEDGER_DEBIAN_MIRROR:-http://deb.debian.org/debian}
root_packages=(slurmctld slurmd slurmdbd slurm-client munge mariadb-server passwd)
# Where bookworm's MariaDB client library goes in the tree (see root_build).
root_libdir=/opt/fairledger/libmariadb-bookworm

# root_mounts_below DIR: the mount points at or below DIR, deepest first.
root_mounts_below() {
	awk -v d="$1" '$2 == d || index($2, d "/") == 1 { print $2 }' /proc/self/mounts | sort -r
}

# root_remove DIR: remove a tree this file built, never crossing into a
# mount (a stale bind mount of the host would otherwise be emptied).
root_remove() {
	local m
	m=$(root_mounts_below "$1")
	[[ -z $m ]] || die "$1 still has mounts ($m): unmount them first"
	rm -rf --one-file-system "$1"
}

# root_build SUITE: print the path of a chroot tree with Slurm of SUITE,
# building it when the cache has none. A build that fails leaves nothing
# in the cache but its log.
root_build() {
	local suite=$1 dir=$root_cache/$1 part=$root_cache/$1.part log=$root_cache/$1.log t0
	if [[ -f $dir/.fairledger-root ]]; then
		echo "$dir"
		return 0
	fi
	mkdir -p "$root_cache"
	if ! command -v debootstrap >/dev/null; then
		say "installing debootstrap (the only package the host gets)"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap >"$log" 2>&1 ||
			{ apt-get update -q >>"$log" 2>&1 || true; DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap >>"$log" 2>&1; } ||
			{ tail -n 20 "$log" >&2; skip "apt-get install debootstrap failed"; }
	fi
	[[ -e $part ]] && root_remove "$part"
	say "building a $suite tree in $dir (debootstrap from $root_mirror; cached for later runs)"
	t0=$(now)
	debootstrap --variant=minbase "$suite" "$part" "$root_mirror" >"$log" 2>&1 ||
		{ tail -n 20 "$log" >&2; root_remove "$part"; skip "debootstrap $suite failed (log: $log)"; }
	# No service may start while apt-get installs; sid's Release file may be
	# past its Valid-Until date between two uploads.
	printf '#!/bin/sh\n# written by fairledger slurm-e2e: no service starts in this tree\nexit 101\n' >"$part/usr/sbin/policy-rc.d"
	chmod 755 "$part/usr/sbin/policy-rc.d"
	echo 'Acquire::Check-Valid-Until "false";' >"$part/etc/apt/apt.conf.d/99fairledger-slurm-e2e"
	# debootstrap writes no hosts file; slurm.conf names localhost.
	printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$part/etc/hosts"
	mount -t proc proc "$part/proc"
	local rc=0
	chroot "$part" env DEBIAN_FRONTEND=noninteractive PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		apt-get install -y -q --no-install-recommends "${root_packages[@]}" >>"$log" 2>&1 || rc=$?
	umount "$part/proc"
	if ((rc)); then
		tail -n 20 "$log" >&2
		root_remove "$part"
		skip "apt-get install in the $suite tree failed (log: $log)"
	fi
	# slurmdbd of 24.11 and 26.05 dies at its first query with the MariaDB
	# client library of trixie and sid (1:11.8: "mysql_query failed: 5027
	# Number of columns in result (=1) set execeeds maxmimum" in
	# _check_mysql_concat_is_sane); bookworm's libmariadb.so.3 (10.11)
	# serves it. It is unpacked from the host's own package, not installed.
	local deb tmp
	tmp=$(mktemp -d)
	if ! (cd "$tmp" && apt-get download -o APT::Sandbox::User=root libmariadb3 >>"$log" 2>&1); then
		apt-get update -q >>"$log" 2>&1 || true
		(cd "$tmp" && apt-get download -o APT::Sandbox::User=root libmariadb3 >>"$log" 2>&1) || { rm -rf "$tmp"; root_remove "$part"; skip "apt-get download libmariadb3 failed"; }
	fi
	deb=$(ls "$tmp"/libmariadb3_*.deb)
	dpkg-deb -x "$deb" "$tmp/x"
	mkdir -p "$part$root_libdir"
	cp -a "$tmp"/x/usr/lib/*/libmariadb.so.3* "$part$root_libdir/"
	{
		echo "suite=$suite"
		echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
		echo "mirror=$root_mirror"
		echo "libmariadb=$(basename "$deb")"
		chroot "$part" dpkg-query -W "${root_packages[@]}" libmariadb3 mariadb-server-core 2>&1 | sed 's/^/package=/'
	} >"$part/.fairledger-root"
	rm -rf "$tmp"
	mv "$part" "$dir"
	say "$suite tree built in $(secs "$t0" "$(now)") s"
	echo "$dir"
}

# root_enter ROOT WORK: mount /proc in ROOT and bind WORK (the run's scratch
# directory) at the same path inside it, so that every path in slurm.conf
# reads the same from the host and from the daemons.
root_enter() {
	local root=$1 work=$2
	[[ -z $(root_mounts_below "$root") ]] || die "$root is in use (mounts below it): another run?"
	mount -t proc proc "$root/proc"
	root_mounted=("$root/proc")
	mkdir -p "$root$work"
	mount --bind "$work" "$root$work"
	root_mounted+=("$root$work")
}

# root_leave: unmount what root_enter mounted, last first.
root_leave() {
	local i
	for ((i = ${#root_mounted[@]} - 1; i >= 0; i--)); do
		umount "${root_mounted[$i]}" || umount -l "${root_mounted[$i]}" || say "umount ${root_mounted[$i]} failed"
		[[ ${root_mounted[$i]} == */proc ]] || rmdir "${root_mounted[$i]}" 2>/dev/null || true
	done
	root_mounted=()
}
root_mounted=()

# root_pids ROOT: the processes whose root directory is ROOT (the daemons
# and jobs of a run in it).
root_pids() {
	find /proc -mindepth 2 -maxdepth 2 -name root -lname "$1" 2>/dev/null | awk -F/ '$3 ~ /^[0-9]+$/ { print $3 }'
	return 0
}
