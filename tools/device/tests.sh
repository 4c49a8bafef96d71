#!/usr/bin/env bash
# One label of the test suite on the device machine, after tools/device/build.sh: ctest's summary
# and every failure's output, the whole log in ${OUT:-build}/ctest-LABEL.log.
#   bash tools/device/tests.sh gpu 12        # every GPU test, 12 at once
#   bash tools/device/tests.sh sanitize 14   # compute-sanitizer over every step
# Exit code: ctest's (0 all passed).
set -uo pipefail
cd "$(dirname "$0")/../.."
label=${1:?label (gpu, sanitize)}
jobs=${2:-8}
log=${OUT:-build}/ctest-$label.log
began=$SECONDS
ctest --test-dir build -L "^$label\$" -j "$jobs" --output-on-failure > "$log" 2>&1
status=$?
grep -E "tests passed|tests failed|\*\*\*|Failed|Timeout|Not Run" "$log" | tail -40
echo "tests: ctest -L $label exit $status in $((SECONDS - began)) s (log: $log)"
exit $status
