#!/usr/bin/env bash
# A clean build prints no warning. Reads build logs (the output of a configure and build) and fails,
# listing them, when they hold a warning of the compilers, ptxas, nvlink or CMake that
# .ci/known_warnings.txt does not allow, or when an entry of that list matches no warning (it was
# fixed: remove the entry). Used by .ci/run; by hand: .ci/check_warnings.sh build/ci-test.log
#   exit 0: no warning but the listed ones, each still printed; 1: otherwise; 2: bad arguments.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$#" -eq 0 ]; then
  echo "usage: .ci/check_warnings.sh LOG..." >&2
  exit 2
fi
for log in "$@"; do
  [ -r "$log" ] || { echo "check_warnings: cannot read $log" >&2; exit 2; }
done

# nvcc/cudafe "file(12): warning #177-D: ...", gcc/clang "file:12:3: warning: ...",
# "ptxas warning : ...", "nvlink warning : ...", "CMake Warning (dev) at ...". A log of
# `cmake --workflow` is read up to its test step: what a failing test prints (a test that builds
# something of its own, say) is not this build's.
warnings=$(for log in "$@"; do
             awk '/^Executing workflow step [0-9]+ of [0-9]+: test preset/ { exit } { print }' "$log"
           done | grep -E '(warning( #[0-9]+-D)?:|warning :|CMake Warning)' | sort -u || true)
known=$(grep -vE '^[[:space:]]*(#|$)' .ci/known_warnings.txt || true)

status=0
new=$warnings
if [ -n "$known" ] && [ -n "$warnings" ]; then
  new=$(printf '%s\n' "$warnings" | grep -vE -f <(printf '%s\n' "$known") || true)
fi
if [ -n "$new" ]; then
  echo "check_warnings: the build printed warnings; a clean build prints none:" >&2
  printf '%s\n' "$new" | sed 's/^/  /' >&2
  status=1
fi
while IFS= read -r pattern; do
  [ -n "$pattern" ] || continue
  if ! printf '%s\n' "$warnings" | grep -qE -- "$pattern"; then
    echo "check_warnings: .ci/known_warnings.txt allows a warning the build no longer prints; remove its entry:" >&2
    echo "  $pattern" >&2
    status=1
  fi
done <<< "$known"
if [ "$status" -eq 0 ]; then
  echo "check_warnings: no warning but the $(printf '%s\n' "$known" | grep -c . || true) known ones of .ci/known_warnings.txt"
fi
exit "$status"
