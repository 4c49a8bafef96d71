#!/usr/bin/env bash
# The build of a machine that has a Hopper GPU but no network (a lent device machine): configure
# build/ with the tests, doctest from a header folder instead of a download, build, and check that
# the build printed no warning (.ci/check_warnings.sh). The log goes to ${OUT:-build}/build.log.
#   DOCTEST_DIR=.carry/doctest-src bash tools/device/build.sh
# Exit codes: 0 built without a warning; 1 the build failed or warned; 2 no doctest header there.
set -uo pipefail
cd "$(dirname "$0")/../.."
doctest_dir=${DOCTEST_DIR:-.carry/doctest-src}
[ -r "$doctest_dir/doctest/doctest.h" ] || { echo "build: no $doctest_dir/doctest/doctest.h" >&2; exit 2; }
log=${OUT:-build}/build.log
mkdir -p "$(dirname "$log")"
began=$SECONDS
{ cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DWORKLOG_TESTS=ON \
    -DFETCHCONTENT_SOURCE_DIR_DOCTEST="$PWD/$doctest_dir" && cmake --build build -j "$(nproc)"; } > "$log" 2>&1
status=$?
echo "build: exit $status in $((SECONDS - began)) s (log: $log)"
[ $status -eq 0 ] || { tail -30 "$log"; exit 1; }
.ci/check_warnings.sh "$log" || exit 1
