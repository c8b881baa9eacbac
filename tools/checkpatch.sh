#!/usr/bin/env bash
# checkpatch.sh: the kernel's checkpatch.pl --strict over lite.ko's sources.
#
# Debian's linux-headers package has no checkpatch.pl, so the first run
# takes it and the data files it reads from its own directory (spelling.txt,
# const_structs.checkpatch) out of the linux-source-6.1 package's tarball
# and keeps them in a cache; later runs use the cache and touch no network.
# Without apt or a network the check is skipped (exit 0, one line saying
# why), so a machine that cannot lint does not fail a build for it.
set -euo pipefail

readonly package=linux-source-6.1
readonly data_files=(checkpatch.pl spelling.txt const_structs.checkpatch)
# Findings that are wrong for an out-of-tree module checked with --no-tree.
readonly ignore_types=(
	# Without the tree checkpatch cannot read LICENSES/, so it cannot
	# tell the uapi header's dual licence from a malformed tag.
	SPDX_LICENSE_TAG
	# "does MAINTAINERS need updating?": there is no MAINTAINERS here.
	FILE_PATH_CHANGES
)

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readonly root

usage() {
	cat << EOF
usage: tools/checkpatch.sh [--help] [FILE...]

Runs checkpatch.pl --no-tree --terse --strict on lite.ko's sources:
kmod/*.c, kmod/*.h, kmod/*/*.c and kmod/*/*.h (the layers, include/ and
examples/), kmod/include/uapi/*.h (not the generated *.mod.c),
or on the FILEs given. Ignored types: ${ignore_types[*]}.

checkpatch.pl comes from Debian's $package package: the first run
downloads it with 'apt-get download' (no root needed, but apt's package
lists must be there: apt-get update) and keeps checkpatch.pl,
spelling.txt and const_structs.checkpatch in the cache; the .deb is not
kept. Later runs are instant and offline.

Environment:
  CHECKPATCH             a checkpatch.pl to use instead (nothing is fetched)
  LITE_CHECKPATCH_CACHE  the cache directory (default /var/cache/lite-checkpatch,
                         or ~/.cache/lite-checkpatch when that is not writable)

Exit status:
  0  no findings, or skipped: checkpatch.pl could not be had (no apt, no
     network, no perl); the one line 'checkpatch: skipped: REASON' says why
  1  findings, printed one per line as FILE:LINE: LEVEL:TYPE: message
  2  usage error
EOF
}

# The one line a skipped run prints; never a failure.
skip() {
	echo "checkpatch: skipped: $*"
	exit 0
}

cache_dir() {
	local dir
	if [[ -n ${LITE_CHECKPATCH_CACHE:-} ]]; then
		echo "$LITE_CHECKPATCH_CACHE"
		return
	fi
	dir=/var/cache/lite-checkpatch
	if mkdir -p "$dir" 2> /dev/null && [[ -w $dir ]]; then
		echo "$dir"
	else
		echo "${XDG_CACHE_HOME:-$HOME/.cache}/lite-checkpatch"
	fi
}

# The last non-empty line of a log, for a one-line reason.
last_line() {
	grep -v '^[[:space:]]*$' "$1" | tail -n 1 | cut -c 1-200
}

# Downloads the package into a scratch directory under $1 and moves the
# three files into $1/scripts, so a run killed half-way leaves no partial
# cache and two runs at once do not see each other's files.
fetch() {
	local cache=$1 tmp deb version f
	local -a debs
	command -v apt-get > /dev/null || skip "apt-get not found (not Debian?)"
	command -v dpkg-deb > /dev/null || skip "dpkg-deb not found"
	mkdir -p "$cache" 2> /dev/null || skip "cannot create the cache $cache"
	tmp=$(mktemp -d "$cache/.fetch.XXXXXX") || skip "cannot write to the cache $cache"
	# shellcheck disable=SC2064 # $tmp is fixed now; expand it now.
	trap "rm -rf '$tmp'" EXIT

	if ! (cd "$tmp" && apt-get download -q "$package") > "$tmp/apt.log" 2>&1; then
		skip "apt-get download $package failed: $(last_line "$tmp/apt.log")"
	fi
	debs=("$tmp/${package}_"*.deb)
	deb=${debs[0]}
	[[ -f $deb ]] || skip "apt-get download $package left no .deb"
	version=$(dpkg-deb --field "$deb" Version) || skip "$deb is not a package"

	# The .deb holds usr/src/$package.tar.xz; stream it, keep three files.
	mkdir "$tmp/src"
	if ! dpkg-deb --fsys-tarfile "$deb" |
		tar -xOf - "./usr/src/$package.tar.xz" |
		tar -xJf - -C "$tmp/src" --strip-components=2 \
			"${data_files[@]/#/$package/scripts/}" 2> "$tmp/tar.log"; then
		skip "cannot extract checkpatch.pl from $package $version: $(last_line "$tmp/tar.log")"
	fi
	for f in "${data_files[@]}"; do
		[[ -f $tmp/src/$f ]] || skip "$package $version has no scripts/$f"
	done
	echo "$package $version" > "$tmp/src/VERSION"
	rm -f "$deb"
	# Another run may have filled the cache meanwhile: theirs is as good.
	if ! mv -T "$tmp/src" "$cache/scripts" 2> /dev/null; then
		[[ -f $cache/scripts/checkpatch.pl ]] || skip "cannot fill the cache $cache"
	fi
	rm -rf "$tmp"
	trap - EXIT
}

main() {
	local checkpatch cache origin ignore out status prefix=
	local -a files

	case ${1:-} in
	-h | --help)
		usage
		return 0
		;;
	-*)
		echo "checkpatch.sh: unknown option '$1' (see --help)" >&2
		return 2
		;;
	esac

	command -v perl > /dev/null || skip "perl not found"
	if [[ -n ${CHECKPATCH:-} ]]; then
		[[ -f $CHECKPATCH ]] || skip "CHECKPATCH=$CHECKPATCH does not exist"
		checkpatch=$(cd "$(dirname "$CHECKPATCH")" && pwd)/$(basename "$CHECKPATCH")
		origin=$CHECKPATCH
	else
		cache=$(cache_dir)
		[[ -f $cache/scripts/checkpatch.pl ]] || fetch "$cache"
		checkpatch=$cache/scripts/checkpatch.pl
		origin=$(cat "$cache/scripts/VERSION" 2> /dev/null || echo "$cache")
	fi

	if (($#)); then
		files=("$@")
	else
		# From kmod/, as the Makefile runs it: checkpatch knows uapi
		# headers by their path starting with include/uapi/ (BIT() is not
		# exported there, so BIT_MACRO does not apply to them).
		cd "$root/kmod"
		prefix=kmod/
		shopt -s nullglob
		for f in *.c *.h */*.c */*.h include/uapi/*.h; do
			[[ $f == *.mod.c ]] || files+=("$f")
		done
		shopt -u nullglob
	fi
	((${#files[@]})) || skip "no files to check"

	ignore=$(
		IFS=,
		echo "${ignore_types[*]}"
	)
	# checkpatch.pl is single-threaded: one process per core, the files
	# dealt round-robin, their findings joined.
	local jobs part tmp pids=() i j
	jobs=$(nproc)
	tmp=$(mktemp -d)
	for ((j = 0; j < jobs && j < ${#files[@]}; j++)); do
		part=()
		for ((i = j; i < ${#files[@]}; i += jobs)); do part+=("${files[i]}"); done
		perl "$checkpatch" --no-tree --terse --strict --show-types \
			--ignore "$ignore" -f "${part[@]}" > "$tmp/$j" 2>&1 &
		pids+=($!)
	done
	status=0
	for i in "${pids[@]}"; do wait "$i" || status=1; done
	out=$(cat "$tmp"/*)
	rm -rf "$tmp"
	# --terse still prints a "total:" line after findings: only they count.
	out=$(grep -v -E '^total: [0-9]+ errors, [0-9]+ warnings, [0-9]+ checks, [0-9]+ lines checked$' <<< "$out" || true)
	if ((status == 0)) && [[ -z $out ]]; then
		echo "checkpatch: clean (files: ${#files[@]}; $origin, --strict)"
		return 0
	fi
	# Findings read FILE:LINE: from the top of the repository.
	[[ -n $out ]] && sed -E "s|^([^ :]+:[0-9]+: )|$prefix\1|" <<< "$out"
	echo "checkpatch: findings: $(grep -c -E ': (ERROR|WARNING|CHECK):' <<< "$out" || true) (files: ${#files[@]}; $origin, --strict)"
	return 1
}

main "$@"
