#!/usr/bin/env bash
# shellcheck disable=SC2016 # dpkg-query's ${Field} formats are dpkg's, not the shell's
# run.sh PKGDIR: install, run and remove the fairledger .deb of PKGDIR in a
# fresh Debian 12 root, and check the .rpm's payload and metadata there.
# `make package-test` builds the packages and calls it; docs/install.md
# describes the packages.
#
# The root is a debootstrap --variant=minbase tree of bookworm with rpm and
# man-db added, built once and kept in a cache directory; each run copies it
# to a scratch directory, so every run starts from the same clean tree, and
# removes the copy at the end. Nothing is installed into the host. In the
# copy, with /proc mounted (and unmounted at the end, exactly that):
#   1. dpkg -i the .deb: every file in its place, the conffiles, the units
#      (ExecStart=/usr/bin/fairledger, the rest as dist/systemd has it), the
#      spool made for the slurm user, the timer not enabled, the binary's
#      libraries all found, --version, the man page through man;
#   2. fairledger nightly run as the unit runs it (its ExecStart, as its
#      User=, with FAIRLEDGER_CONFIG=/etc/fairledger/fairledger.toml edited to
#      point at stand-ins of sacct and sacctmgr serving a cluster that
#      `fairledger gen` wrote), then fairledger verify and sshare on the
#      history it committed;
#   3. dpkg -r (program gone, conffiles kept), dpkg -P (conffiles gone, the
#      history and the spool kept);
#   4. the .rpm: rpm -qpi, -qpl, --requires, --scripts, --configfiles, and an
#      rpm -i --nodeps --noscripts into a scratch root, then rpm -e keeping
#      the edited configuration as .rpmsave.
#
# Environment:
#   FAIRLEDGER_REQUIRE_PACKAGE=1   fail (instead of skipping) without root or debootstrap
#   FAIRLEDGER_PACKAGE_ROOTS=DIR   where the pristine tree is cached
#                                  (default /var/cache/fairledger/package-root)
#   FAIRLEDGER_DEBIAN_MIRROR=URL   the mirror debootstrap reads
#   FAIRLEDGER_PACKAGE_KEEP=1      keep the scratch copy (its path is printed) to look into
set -euo pipefail

say() { printf 'package-test: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
skip() {
	if [[ ${FAIRLEDGER_REQUIRE_PACKAGE:-} == 1 ]]; then
		die "$* (FAIRLEDGER_REQUIRE_PACKAGE=1)"
	fi
	say "skipped: $* (set FAIRLEDGER_REQUIRE_PACKAGE=1 to fail instead)"
	exit 0
}
t_begin=$(now)
repo=$(cd "$(dirname "$0")/../.." && pwd)
pkgdir=$(cd "${1:?usage: run.sh PKGDIR}" && pwd)

debs=("$pkgdir"/fairledger_*.deb)
rpms=("$pkgdir"/fairledger-*.rpm)
[[ ${#debs[@]} == 1 && -f ${debs[0]} ]] || die "want one fairledger .deb in $pkgdir, found: ${debs[*]}"
[[ ${#rpms[@]} == 1 && -f ${rpms[0]} ]] || die "want one fairledger .rpm in $pkgdir, found: ${rpms[*]}"
deb=${debs[0]} rpm=${rpms[0]}
[[ $(id -u) == 0 ]] || skip "needs root for debootstrap and chroot"
command -v debootstrap >/dev/null || skip "needs debootstrap on the host (apt-get install debootstrap)"

fails=0
check() { # DESCRIPTION COMMAND...: run COMMAND, count a failure with DESCRIPTION
	local what=$1
	shift
	if "$@"; then
		return 0
	fi
	say "FAIL: $what"
	fails=$((fails + 1))
}

# ---- the pristine tree (cached) ------------------------------------------------
cache=${FAIRLEDGER_PACKAGE_ROOTS:-/var/cache/fairledger/package-root}
mirror=${FAIRLEDGER_DEBIAN_MIRROR:-http://deb.debian.org/debian}
suite=bookworm
# rpm reads the .rpm; man-db shows the man page as a person would see it;
# systemd checks the units and the tmpfiles.d line (it does not run there).
extra=(rpm man-db systemd)
pristine=$cache/$suite
t0=$(now)
# A tree built with other packages than these is built again.
if [[ -f $pristine/.fairledger-package-root ]] && ! grep -qxF "extra=${extra[*]}" "$pristine/.fairledger-package-root"; then
	say "the cached tree has other packages than ${extra[*]}: building it again"
	rm -rf --one-file-system "$pristine"
fi
if [[ ! -f $pristine/.fairledger-package-root ]]; then
	part=$cache/$suite.part log=$cache/$suite.log
	mkdir -p "$cache"
	[[ -e $part ]] && rm -rf --one-file-system "$part"
	say "building a minimal $suite tree in $pristine (debootstrap from $mirror; cached for later runs)"
	debootstrap --variant=minbase "$suite" "$part" "$mirror" >"$log" 2>&1 ||
		{ tail -n 20 "$log" >&2; rm -rf --one-file-system "$part"; skip "debootstrap $suite failed (log: $log)"; }
	mount -t proc proc "$part/proc"
	rc=0
	chroot "$part" env DEBIAN_FRONTEND=noninteractive PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		apt-get install -y -q --no-install-recommends "${extra[@]}" >>"$log" 2>&1 || rc=$?
	umount "$part/proc"
	if ((rc)); then
		tail -n 20 "$log" >&2
		rm -rf --one-file-system "$part"
		skip "apt-get install ${extra[*]} in the $suite tree failed (log: $log)"
	fi
	chroot "$part" apt-get clean
	{
		echo "suite=$suite"
		echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
		echo "mirror=$mirror"
		echo "extra=${extra[*]}"
		chroot "$part" dpkg-query -W libc6 libstdc++6 libgcc-s1 tzdata "${extra[@]}" 2>&1 | sed 's/^/package=/'
	} >"$part/.fairledger-package-root"
	mv "$part" "$pristine"
	say "$suite tree built in $(secs "$t0" "$(now)") s"
fi
t_tree=$(secs "$t0" "$(now)")

# ---- a fresh copy of it ---------------------------------------------------------
root=$(mktemp -d /tmp/package-root.XXXXXX)
mounted=()
cleanup() {
	local i
	for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
		umount "${mounted[$i]}" || umount -l "${mounted[$i]}" || say "umount ${mounted[$i]} failed"
	done
	mounted=()
	if [[ -n $(awk -v d="$root" 'index($2, d "/") == 1 { print $2 }' /proc/self/mounts) ]]; then
		say "$root still has mounts: left in place"
	elif [[ ${FAIRLEDGER_PACKAGE_KEEP:-} == 1 ]]; then
		say "kept $root (FAIRLEDGER_PACKAGE_KEEP=1)"
	else
		rm -rf --one-file-system "$root"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
t0=$(now)
cp -a "$pristine/." "$root/"
mount -t proc proc "$root/proc"
mounted+=("$root/proc")
t_copy=$(secs "$t0" "$(now)")
in_root() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "$@"; }
mkdir -p "$root/tmp/pkg"
cp "$deb" "$rpm" "$root/tmp/pkg/"
deb_in=/tmp/pkg/${deb##*/} rpm_in=/tmp/pkg/${rpm##*/}

# ---- the .deb's metadata -----------------------------------------------------------
field() { dpkg-deb -f "$deb" "$1"; }
version=$(field Version)
upstream=${version%-*}
say "package fairledger $version ($(du -h "$deb" | cut -f1) .deb, $(du -h "$rpm" | cut -f1) .rpm)"
check "Depends is $(field Depends)" [ "$(field Depends)" = "libc6 (>= 2.34), libgcc-s1 (>= 3.0), libstdc++6 (>= 12), tzdata" ]
check "Recommends is $(field Recommends)" [ "$(field Recommends)" = slurm-client ]
# The declared minimums against what Debian's own tool derives from the
# binary, where the host has it (dpkg-dev).
if command -v dpkg-shlibdeps >/dev/null; then
	shl=$(mktemp -d /tmp/package-shlibdeps.XXXXXX)
	mkdir -p "$shl/debian" "$shl/x"
	printf 'Source: fairledger\n\nPackage: fairledger\nArchitecture: any\n' >"$shl/debian/control"
	dpkg-deb -x "$deb" "$shl/x"
	got=$(cd "$shl" && dpkg-shlibdeps -O x/usr/bin/fairledger 2>/dev/null | sed 's/^shlibs:Depends=//')
	rm -rf "$shl"
	check "dpkg-shlibdeps derives '$got' from the binary; the package declares other minimums" \
		[ "$got, tzdata" = "$(field Depends)" ]
else
	say "no dpkg-shlibdeps on the host: the declared minimums are not compared with it"
fi

# ---- install ----------------------------------------------------------------------------
# The unit runs as slurm, which Slurm's packages create; the test root has
# no Slurm, so the user is made here, before the package, as on a cluster.
in_root groupadd --system slurm
in_root useradd --system --gid slurm --home-dir /nonexistent --shell /usr/sbin/nologin slurm
t0=$(now)
in_root dpkg -i "$deb_in" >"$root/tmp/dpkg-i.log" 2>&1 || { cat "$root/tmp/dpkg-i.log" >&2; die "dpkg -i failed"; }
t_install=$(secs "$t0" "$(now)")
check "dpkg -i said nothing of the next step: $(cat "$root/tmp/dpkg-i.log")" grep -q 'systemctl enable --now fairledger-nightly.timer' "$root/tmp/dpkg-i.log"
check "dpkg status" [ "$(in_root dpkg-query -W -f '${Status}' fairledger)" = "install ok installed" ]

files=(
	/usr/bin/fairledger
	/usr/lib/systemd/system/fairledger-nightly.service
	/usr/lib/systemd/system/fairledger-nightly.timer
	/usr/lib/tmpfiles.d/fairledger.conf
	/etc/fairledger/fairledger.toml
	/etc/logrotate.d/fairledger
	/usr/share/man/man1/fairledger.1.gz
	/usr/share/doc/fairledger/README.md
	/usr/share/doc/fairledger/CHANGELOG.md
	/usr/share/doc/fairledger/copyright
	/usr/share/doc/fairledger/docs/install.md
	/usr/share/doc/fairledger/docs/operations.md
	/usr/share/doc/fairledger/docs/cli/fairledger.md
	/usr/share/doc/fairledger/schemas/jobs.md
	/usr/share/doc/fairledger/examples/logrotate-slurmctld
)
for f in "${files[@]}"; do
	check "$f is not a file of the installed package" [ -f "$root$f" ]
	check "dpkg -S $f" in_root dpkg -S "$f" >/dev/null
done
owner() { in_root stat -c '%a %U:%G' "$1" 2>&1; } # names as the root knows them
check "/usr/bin/fairledger is $(owner /usr/bin/fairledger)" [ "$(owner /usr/bin/fairledger)" = "755 root:root" ]
# Every file of the package is one of those, or a doc of docs/ or schemas/.
while read -r f; do
	[[ -d $root$f ]] && continue
	case $f in
	/usr/share/doc/fairledger/docs/*.md | /usr/share/doc/fairledger/schemas/*.md) ;;
	*) printf '%s\n' "${files[@]}" | grep -qxF "$f" || { say "FAIL: unexpected file $f in the package"; fails=$((fails + 1)); } ;;
	esac
done < <(in_root dpkg -L fairledger)
for d in "$repo"/docs/*.md; do
	check "docs/${d##*/} is not in the package" cmp -s "$d" "$root/usr/share/doc/fairledger/docs/${d##*/}"
done
conffiles=$(in_root dpkg-query -W -f '${Conffiles}' fairledger | awk 'NF { print $1 }' | sort | tr '\n' ' ')
check "conffiles are '$conffiles'" [ "$conffiles" = "/etc/fairledger/fairledger.toml /etc/logrotate.d/fairledger " ]
check "the configuration is not dist/fairledger.toml" cmp -s "$repo/dist/fairledger.toml" "$root/etc/fairledger/fairledger.toml"
check "the logrotate file is not dist/logrotate/fairledger" cmp -s "$repo/dist/logrotate/fairledger" "$root/etc/logrotate.d/fairledger"
check "the timer is not dist/systemd's" cmp -s "$repo/dist/systemd/fairledger-nightly.timer" "$root/usr/lib/systemd/system/fairledger-nightly.timer"
unit=$root/usr/lib/systemd/system/fairledger-nightly.service
exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
check "the unit's ExecStart is '$exec_start'" [ "$exec_start" = "/usr/bin/fairledger nightly" ]
check "the unit differs from dist/systemd's in more than ExecStart" \
	diff <(grep -v '^ExecStart=' "$repo/dist/systemd/fairledger-nightly.service") <(grep -v '^ExecStart=' "$unit")
check "the timer is enabled" [ ! -e "$root/etc/systemd/system/timers.target.wants/fairledger-nightly.timer" ]
check "the spool is $(owner /var/spool/fairledger), not 750 slurm:slurm" [ "$(owner /var/spool/fairledger)" = "750 slurm:slurm" ]
# systemd's own checks: the units load (systemd-analyze verify: keys,
# ExecStart executable, the timer's service), and systemd-tmpfiles makes
# the spool from the package's line as the postinst made it.
check "systemd-analyze verify of the units" in_root systemd-analyze verify \
	/usr/lib/systemd/system/fairledger-nightly.service /usr/lib/systemd/system/fairledger-nightly.timer
[[ ! -d $root/var/spool/fairledger ]] || rmdir "$root/var/spool/fairledger"
check "systemd-tmpfiles --create fairledger.conf" in_root systemd-tmpfiles --create fairledger.conf
check "systemd-tmpfiles made the spool $(owner /var/spool/fairledger)" [ "$(owner /var/spool/fairledger)" = "750 slurm:slurm" ]
missing=$(in_root ldd /usr/bin/fairledger | grep 'not found' || true)
check "libraries not found: $missing" [ -z "$missing" ]
got=$(in_root /usr/bin/fairledger --version)
check "fairledger --version printed '$got'" [ "$got" = "fairledger version $upstream" ]
man_head=$(zcat "$root/usr/share/man/man1/fairledger.1.gz" | sed -n 2p)
check "the man page starts '$man_head'" [ "$man_head" = ".TH FAIRLEDGER 1 \"\" \"fairledger $upstream\" \"User Commands\"" ]
man_text=$(in_root env MANWIDTH=100 MANPAGER=cat man fairledger 2>&1)
for c in check gen sql report sshare sprio whatif run nightly verify demo; do
	check "man fairledger has no command $c" grep -q "^   $c\$" <<<"$man_text"
done
check "man fairledger has no FILES section" grep -q '^FILES$' <<<"$man_text"

# ---- the nightly job, as the unit runs it -------------------------------------------------
# A cluster of 4 labs with 3000 jobs over the last 20 days, and stand-ins of
# sacct and sacctmgr answering from its files as slurmdbd would (the jobs
# that ran in [-S, -E], with -s the pending ones too; times as Unix
# seconds, as SLURM_TIME_FORMAT=%s asks); every call is logged.
fake=/opt/fakeslurm
from=$(date -u -d '20 days ago' +%F) to=$(date -u -d '2 days ago' +%F) first=$(date -u -d '21 days ago' +%F)
in_root /usr/bin/fairledger gen --dir "$fake" --jobs 3000 --labs 4 --unix-times --from "$from" --to "$to" >"$root/tmp/gen.log" 2>&1 ||
	{ cat "$root/tmp/gen.log" >&2; die "fairledger gen failed"; }
cat >"$root$fake/sacct" <<'EOF'
#!/bin/sh
# sacct stand-in for the package test (testdata/package/run.sh).
echo "sacct $*" >>/opt/fakeslurm/calls
[ "$1" = --version ] && { echo "slurm 22.05.8"; exit 0; }
from=0 to=0 states=0
while [ $# -gt 0 ]; do
	case $1 in
	-S) from=$(date -u -d "$2" +%s); shift ;;
	-E) to=$(date -u -d "$2" +%s); shift ;;
	-s) states=1; shift ;;
	esac
	shift
done
exec awk -F'|' -v from="$from" -v to="$to" -v states="$states" '
NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; print; next }
{
	started = $c["Start"] ~ /^[0-9]+$/; ended = $c["End"] ~ /^[0-9]+$/
	if (started) keep = $c["Start"] + 0 <= to && (!ended || $c["End"] + 0 >= from)
	else keep = states && $c["Submit"] + 0 <= to
	if (keep) print
}' /opt/fakeslurm/sacct.psv
EOF
cat >"$root$fake/sacctmgr" <<'EOF'
#!/bin/sh
# sacctmgr stand-in for the package test (testdata/package/run.sh).
echo "sacctmgr $*" >>/opt/fakeslurm/calls
case " $* " in
*" assoc "*) exec cat /opt/fakeslurm/assoc.psv ;;
*" qos "*) exec cat /opt/fakeslurm/qos.psv ;;
esac
echo "sacctmgr: unexpected $*" >&2
exit 1
EOF
chmod 755 "$root$fake/sacct" "$root$fake/sacctmgr"
touch "$root$fake/calls"
in_root chown slurm:slurm "$fake/calls"
# The administrator's edit of the shipped configuration: the clients, the
# cluster and where its history starts; gen's files have no request
# columns, so no job priority. Every other key as shipped.
sed -i -e "s|^# sacct = .*|sacct = \"$fake/sacct\"|" -e "s|^# sacctmgr = .*|sacctmgr = \"$fake/sacctmgr\"|" \
	-e 's|^name = .*|name = "synth"|' -e "s|^slurm_conf = .*|slurm_conf = \"$fake/slurm.conf\"|" \
	-e "s|^first_day = .*|first_day = \"$first\"|" -e 's|^priority = true|priority = false|' \
	"$root/etc/fairledger/fairledger.toml"
check "the edit of the configuration did not take" grep -q "^sacct = \"$fake/sacct\"" "$root/etc/fairledger/fairledger.toml"
# What systemd does for the unit before ExecStart: StateDirectory= and
# LogsDirectory= made for User=.
user=$(sed -n 's/^User=//p' "$unit") group=$(sed -n 's/^Group=//p' "$unit")
env_line=$(sed -n 's/^Environment=//p' "$unit")
check "the unit's Environment is '$env_line'" [ "$env_line" = FAIRLEDGER_CONFIG=/etc/fairledger/fairledger.toml ]
for d in "/var/lib/$(sed -n 's/^StateDirectory=//p' "$unit")" "/var/log/$(sed -n 's/^LogsDirectory=//p' "$unit")"; do
	in_root install -d -o "$user" -g "$group" -m 0755 "$d"
done
night() { # the unit's ExecStart, as its User=, with its Environment=
	# shellcheck disable=SC2086 # ExecStart's words, as systemd splits them
	chroot --userspec="$user:$group" "$root" env -i PATH=/usr/bin:/bin HOME=/nonexistent TZ=UTC "$env_line" $exec_start
}
t0=$(now)
rc=0
night >"$root/tmp/night1.out" 2>"$root/tmp/night1.err" || rc=$?
t_night=$(secs "$t0" "$(now)")
check "the first night exited $rc: $(cat "$root/tmp/night1.err")" [ "$rc" = 0 ]
check "the first night printed on stdout: $(cat "$root/tmp/night1.out")" [ ! -s "$root/tmp/night1.out" ]
check "the first night printed on stderr: $(cat "$root/tmp/night1.err")" [ ! -s "$root/tmp/night1.err" ]
check "no sacct -S call from first_day" grep -q "^sacct -a -D -P -M synth -S $(TZ=UTC date -d "TZ=\"Europe/Berlin\" $first 00:00" +%FT%T) " "$root$fake/calls"
check "no sacctmgr show assoc call" grep -q '^sacctmgr -P show assoc where cluster=synth ' "$root$fake/calls"
check "no nightly.log" grep -q '"message":"night planned"' "$root/var/log/fairledger/nightly.log"
check "no committed history" [ -e "$root/var/lib/fairledger/history/current" ]
check "no assoc dump in the spool" [ -n "$(ls "$root/var/spool/fairledger/synth/assoc/" 2>/dev/null)" ]
check "the history is $(owner /var/lib/fairledger/history), not slurm's" [ "$(owner /var/lib/fairledger/history)" = "755 slurm:slurm" ]
# The same night again: nothing to do, nothing committed.
before=$(readlink "$root/var/lib/fairledger/history/current")
rc=0
night >"$root/tmp/night2.out" 2>"$root/tmp/night2.err" || rc=$?
check "the second night exited $rc: $(cat "$root/tmp/night2.err")" [ "$rc" = 0 ]
check "the second night committed a generation" [ "$before" = "$(readlink "$root/var/lib/fairledger/history/current")" ]
as_slurm() { chroot --userspec="$user:$group" "$root" env -i PATH=/usr/bin:/bin HOME=/nonexistent "$@"; }
rc=0
as_slurm fairledger verify --history /var/lib/fairledger/history >"$root/tmp/verify.out" 2>"$root/tmp/verify.err" || rc=$?
check "fairledger verify exited $rc: $(cat "$root/tmp/verify.out" "$root/tmp/verify.err")" [ "$rc" = 0 ]
rc=0
as_slurm fairledger sshare --history /var/lib/fairledger/history -a -l -P >"$root/tmp/sshare.out" 2>"$root/tmp/sshare.err" || rc=$?
check "fairledger sshare exited $rc: $(cat "$root/tmp/sshare.err")" [ "$rc" = 0 ]
# Every account of the tree sacctmgr gave is a row of sshare.
while read -r acct; do
	check "sshare has no row of account $acct" grep -q "^ *$acct||" "$root/tmp/sshare.out"
done < <(awk -F'|' 'NR > 1 && $3 == "" && $2 != "root" { print $2 }' "$root$fake/assoc.psv" | sort -u)
# Every job of the file (its allocation lines: JobID without a step) that
# ended before the night's end (the last local midnight) is in the history.
midnight=$(TZ=Europe/Berlin date -d 'today 00:00' +%s)
want=$(awk -F'|' -v m="$midnight" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	$c["JobID"] !~ /\./ && $c["Start"] ~ /^[0-9]+$/ && $c["End"] ~ /^[0-9]+$/ && $c["End"] + 0 <= m { n++ } END { print n + 0 }' "$root$fake/sacct.psv")
got=$(as_slurm fairledger sql --history /var/lib/fairledger/history --format csv "SELECT count(*) FROM jobs WHERE \"end\" <= to_timestamp($midnight)" 2>&1 | tail -n 1)
check "the history has $got jobs that ended by the night's end, the sacct file $want" [ "$got" = "$want" ]
say "first night: $got jobs ended by its end, as in the sacct file; sshare, verify ok"

# ---- reinstall, remove, purge -------------------------------------------------------------
edited=$(sha256sum <"$root/etc/fairledger/fairledger.toml")
hist_sum() { (cd "$root/var/lib/fairledger/history/current/" && find . -type f -exec sha256sum {} + | sort | sha256sum); }
hist=$(hist_sum)
in_root dpkg -i "$deb_in" >"$root/tmp/dpkg-re.log" 2>&1 || { cat "$root/tmp/dpkg-re.log" >&2; die "dpkg -i again failed"; }
check "a reinstall replaced the edited configuration" [ "$(sha256sum <"$root/etc/fairledger/fairledger.toml")" = "$edited" ]
in_root dpkg -r fairledger >"$root/tmp/dpkg-r.log" 2>&1 || { cat "$root/tmp/dpkg-r.log" >&2; die "dpkg -r failed"; }
check "dpkg -r: status" [ "$(in_root dpkg-query -W -f '${Status}' fairledger)" = "deinstall ok config-files" ]
for f in "${files[@]}"; do
	case $f in
	/etc/*) check "dpkg -r removed the conffile $f" [ -f "$root$f" ] ;;
	*) check "dpkg -r left $f" [ ! -e "$root$f" ] ;;
	esac
done
check "dpkg -r left /usr/share/doc/fairledger" [ ! -e "$root/usr/share/doc/fairledger" ]
check "dpkg -r changed the edited configuration" [ "$(sha256sum <"$root/etc/fairledger/fairledger.toml")" = "$edited" ]
check "dpkg -r changed the history" [ "$(hist_sum)" = "$hist" ]
in_root dpkg -P fairledger >"$root/tmp/dpkg-p.log" 2>&1 || { cat "$root/tmp/dpkg-p.log" >&2; die "dpkg -P failed"; }
check "dpkg -P: still known to dpkg" [ -z "$(in_root dpkg-query -W -f '${Status}' fairledger 2>/dev/null)" ]
check "dpkg -P left /etc/fairledger" [ ! -e "$root/etc/fairledger" ]
check "dpkg -P left /etc/logrotate.d/fairledger" [ ! -e "$root/etc/logrotate.d/fairledger" ]
check "dpkg -P left the nightly log" [ ! -e "$root/var/log/fairledger/nightly.log" ]
check "dpkg -P changed the history" [ "$(hist_sum)" = "$hist" ]
check "dpkg -P removed the spool" [ -n "$(ls "$root/var/spool/fairledger/synth/assoc/" 2>/dev/null)" ]

# ---- the .rpm -------------------------------------------------------------------------------
rq() { in_root rpm -qp "$@" "$rpm_in" 2>/dev/null; }
check "rpm -qp: name and version $(rq --qf '%{NAME} %{VERSION}-%{RELEASE}')" [ "$(rq --qf '%{NAME} %{VERSION}-%{RELEASE}')" = "fairledger $version" ]
check "rpm -qpi has no license" grep -q '^License *: Apache-2.0' <(rq -i)
rpm_files=$(rq -l)
for f in "${files[@]}"; do
	[[ $f == */copyright ]] && f=/usr/share/licenses/fairledger/LICENSE
	check "rpm -qpl has no $f" grep -qxF "$f" <<<"$rpm_files"
done
check "rpm --configfiles is '$(rq --configfiles | tr '\n' ' ')'" \
	[ "$(rq --configfiles | sort | tr '\n' ' ')" = "/etc/fairledger/fairledger.toml /etc/logrotate.d/fairledger " ]
check "the rpm's configuration is not noreplace" [ "$(rq --qf '[%{FILEFLAGS:fflags} %{FILENAMES}\n]' | awk '$2 == "/etc/fairledger/fairledger.toml" { print $1 }')" = cn ]
check "rpm --scripts has no %post" grep -q '^postinstall scriptlet' <(rq --scripts)
check "rpm Recommends is $(rq --recommends)" [ "$(rq --recommends)" = slurm ]
# rpm -i into a scratch root of its own (no scripts: that root has no shell),
# the configuration edited, rpm -e: the program gone, the edit kept as .rpmsave.
in_root rpm --root /tmp/rpmroot --initdb
in_root rpm --root /tmp/rpmroot -i --nodeps --noscripts "$rpm_in" >"$root/tmp/rpm-i.log" 2>&1 ||
	{ cat "$root/tmp/rpm-i.log" >&2; say "FAIL: rpm -i"; fails=$((fails + 1)); }
for f in "${files[@]}"; do
	[[ $f == */copyright ]] && f=/usr/share/licenses/fairledger/LICENSE
	check "rpm -i left no $f" [ -f "$root/tmp/rpmroot$f" ]
done
# The Requires against what rpm's own dependency generator finds in the
# binary: for each library, the newest symbol version it needs.
elfdeps=$(in_root sh -c 'ls /usr/lib/rpm/elfdeps 2>/dev/null' || true)
if [[ -n $elfdeps ]]; then
	need=$(in_root sh -c 'echo /tmp/rpmroot/usr/bin/fairledger | /usr/lib/rpm/elfdeps --requires' |
		sed -n 's/^\(lib[^(]*\)(\([A-Z_]*\)\([0-9][0-9.]*\))(64bit)$/\1 \2 \3/p' |
		sort -k1,1 -k2,2 -k3,3V | awk '{ k = $1 " " $2; v[k] = $3 } END { for (k in v) { split(k, a, " "); print a[1] "(" a[2] v[k] ")(64bit)" } }' |
		grep -v '^ld-linux' | sort)
	have=$(rq --requires | grep '^lib' | sort)
	check "rpm Requires '$(tr '\n' ' ' <<<"$have")', elfdeps finds '$(tr '\n' ' ' <<<"$need")'" [ "$need" = "$have" ]
	say "rpm Requires as elfdeps finds them: $(tr '\n' ' ' <<<"$need")"
else
	say "no /usr/lib/rpm/elfdeps in the tree: the rpm's Requires are not compared with it"
fi
echo '# edited' >>"$root/tmp/rpmroot/etc/fairledger/fairledger.toml"
in_root rpm --root /tmp/rpmroot -e --nodeps --noscripts fairledger >"$root/tmp/rpm-e.log" 2>&1 ||
	{ cat "$root/tmp/rpm-e.log" >&2; say "FAIL: rpm -e"; fails=$((fails + 1)); }
check "rpm -e left /usr/bin/fairledger" [ ! -e "$root/tmp/rpmroot/usr/bin/fairledger" ]
check "rpm -e kept no .rpmsave of the edited configuration" grep -q '^# edited$' "$root/tmp/rpmroot/etc/fairledger/fairledger.toml.rpmsave"

t_all=$(secs "$t_begin" "$(now)")
say "tree ${t_tree} s (cached unless first run), copy ${t_copy} s, dpkg -i ${t_install} s, first night ${t_night} s, all ${t_all} s"
((fails == 0)) || die "$fails checks failed"
say "ok: the .deb installs, runs the nightly job as its unit does, removes and purges; the .rpm's payload and metadata hold"
