#!/bin/bash
# tests/pkg/build_apps.sh DIST OUT: builds tests/pkg/app.c and app.cc the way
# a user builds against the installed liblite-dev, with
# `pkg-config --cflags --libs lite` and nothing from the source tree: the
# liblite0 and liblite-dev packages in DIST are unpacked into OUT/root (as
# dpkg would install them, without touching this machine), pkg-config reads
# their lite.pc there, and OUT/app, OUT/app_cc are linked against that
# liblite.so. Prints the pkg-config line; exits non-zero if anything fails.
set -euo pipefail
dist=$1 out=$2
here=$(cd "$(dirname "$0")" && pwd)
root=$out/root
rm -rf "$root"
mkdir -p "$root"
for p in liblite0 liblite-dev; do
	deb=$(ls "$dist"/${p}_*.deb)
	dpkg-deb -x "$deb" "$root"
done
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
# pkg-config prefixes the .pc file's paths with the sysroot: the unpacked
# packages stand where dpkg would have put them.
export PKG_CONFIG_SYSROOT_DIR=$root
export PKG_CONFIG_LIBDIR=$root/usr/lib/$multiarch/pkgconfig:/usr/lib/$multiarch/pkgconfig:/usr/share/pkgconfig
flags=$(pkg-config --cflags --libs lite)
echo "pkg-config --cflags --libs lite: $flags"
# Only the packages' headers: the copies of the sources are outside this
# compile's search path (no -I of the repository).
cp "$here/app.c" "$here/app.cc" "$out/"
cd "$out"
# shellcheck disable=SC2086 # flags are words
cc -std=c11 -Wall -Werror -o app app.c $flags
# shellcheck disable=SC2086
c++ -std=c++20 -Wall -Werror -o app_cc app.cc $flags
echo "built $out/app and $out/app_cc"
