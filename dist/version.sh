#!/bin/sh
# version.sh: print the version of this checkout, which `make build` and
# `make package` give the binary (`fairledger --version`) and the packages.
#
#   tag v1.2.0 on HEAD              1.2.0
#   5 commits after v1.2.0          1.2.0+5.gabc1234
#   no v* tag (yet)                 0.0.0+715.g0801710  (715: commits to HEAD)
#   uncommitted changes             ….dirty (+dirty on a tag)
#   not a git checkout              0.0.0+unknown
#
# Versions after a tag sort after it in dpkg and rpm alike ('+' starts no
# pre-release in either), and a later commit of a branch sorts after an
# earlier one.
set -eu
cd "$(dirname "$0")/.."
if ! git rev-parse --git-dir >/dev/null 2>&1; then
	echo 0.0.0+unknown
	exit 0
fi
dirty=
git diff --quiet HEAD -- 2>/dev/null || dirty=dirty
if d=$(git describe --tags --match 'v[0-9]*' 2>/dev/null); then
	v=$(echo "$d" | sed -e 's/^v//' -e 's/-\([0-9][0-9]*\)-g\([0-9a-f]*\)$/+\1.g\2/')
else
	v=0.0.0+$(git rev-list --count HEAD).g$(git rev-parse --short=7 HEAD)
fi
if [ -n "$dirty" ]; then
	case $v in
	*+*) v=$v.dirty ;;
	*) v=$v+dirty ;;
	esac
fi
echo "$v"
