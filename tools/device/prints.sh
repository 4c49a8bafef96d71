#!/usr/bin/env bash
# What the machine code says, after tools/device/build.sh: the HGMMA instructions in the SASS of
# each Hopper step (09 on), and the build's SASS fingerprints against tools/fingerprints.csv, taken
# with the pinned disassembler wheels from a folder (no package index there).
#   WHEELS=.carry/whl bash tools/device/prints.sh
# Exit code: the fingerprint check's (0 the same; 1 a kernel differs; 77 no disassembler).
set -uo pipefail
cd "$(dirname "$0")/../.."
for exe in build/bin/09_* build/bin/1[0-9]_*; do
  [ -x "$exe" ] || continue
  echo "HGMMA $(basename "$exe"): $(cuobjdump -sass "$exe" | grep -c HGMMA)"
done
PIP_NO_INDEX=1 PIP_FIND_LINKS="$PWD/${WHEELS:-.carry/whl}" python3 tools/fingerprints.py --bin-dir build/bin --check
