#!/usr/bin/env bash
# The lab kit's device checks, on a machine with an NVIDIA GPU (an H100 or H200 for every step),
# from anywhere in the repository:
#
#     lab/tests/device_check.sh OUT [PHASE...]      (phases: grade release; default both)
#
# grade (its TIME line gives the wall time of each grading):
#   1. the reference graded against itself, every lab step this GPU supports (Hopper steps on
#      compute capability 9.0 only), with the course's rubric but shorter timing: 100 of 100 each;
#   2. a planted wrong solution (04 skipping the last k of each slice, inside its LAB region), with
#      instructor cases: below the pass mark, having lost exactly the cases with K >= 8, and 02
#      beside it at full marks;
#   3. a kernel with a line added outside its TODO: built and graded, the line named, and the
#      rubric's price of a line and its integrity points taken (lab/rubric.json, "integrity");
#   4. an unmodified release of 04: 0 correctness, no crash;
#   the wall time of each grading: the first builds the reference (the time per class), the
#   later ones only the submission's kernels (the time per submission).
# release (its line gives the time): the release of every lab step, with the reference solution
#   filled in, built and tested with the commands its LAB.md gives (the test workflow: every test,
#   the GPU and sanitizer tests included), then LAB.md's step command and runs by hand. LAB.md's
#   sanitizer command selects sanitizer tests the workflow has just run: the check lists them
#   (ctest -N) and requires each to have passed there, rather than running them all a second time
#   (DEVICE_CHECK_FULL=1 runs it).
#
# DEVICE_CHECK_STEPS=01_naive,04_outer_product (names) grades only those steps in check 1, for a
# machine that limits the time of one command: a second run with the other steps, into the same
# OUT, reuses its builds (OUT/work and OUT/cache are kept from run to run).
#
# Everything builds once: every compilation goes through lab/tests/compile_cache.py, so the
# gradings' scratch trees and the release reuse the reference build's objects. Logs, reports and
# results go under OUT (OUT/summary.txt holds the summary printed last). Exit code 0 when every
# check holds, 1 when one does not, 77 without a GPU, 2 for a bad command line.
set -uo pipefail
cd "$(dirname "$0")/../.."
repo=$(pwd)
if [ $# -lt 1 ] || [[ "$1" == -* ]]; then
  echo "usage: lab/tests/device_check.sh OUT [grade] [release]" >&2
  exit 2
fi
out=$(realpath -m "$1")
shift
phases=("$@")
[ ${#phases[@]} -eq 0 ] && phases=(grade release)
for phase in "${phases[@]}"; do
  case "$phase" in grade|release) ;; *) echo "device_check.sh: error: unknown phase '$phase' (grade, release)" >&2; exit 2 ;; esac
done
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "device_check.sh: error: no CUDA device (nvidia-smi lists none): the device checks need a GPU" >&2
  exit 77
fi
mkdir -p "$out"
export COMPILE_CACHE_DIR="$out/cache"
export CMAKE_CUDA_COMPILER_LAUNCHER="python3;$repo/lab/tests/compile_cache.py"
export CMAKE_CXX_COMPILER_LAUNCHER="$CMAKE_CUDA_COMPILER_LAUNCHER"
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}
summary="$out/summary.txt"
: > "$summary"
failures=0
say() { echo "$*" | tee -a "$summary"; }
check() {  # check NAME TEXT: a line PASS/FAIL from the exit code of the command before it
  if [ "$1" -eq 0 ]; then say "PASS  $2"; else say "FAIL  $2"; failures=$((failures + 1)); fi
}

cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d ' ')
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
# Every lab step (it has LAB regions), less the Hopper ones on a GPU that is not compute capability 9.0.
steps=$(python3 - "$cc" <<'PY'
import sys
sys.path.insert(0, "lab")
from labkit import steps
hopper = {s for s, r in steps.registrations(".").items() if r.hopper}
chosen = [s for s in steps.discover_steps(".") if steps.regions_of(".", s) and (sys.argv[1] == "9.0" or s not in hopper)]
print(",".join(chosen))
PY
)
steps=${DEVICE_CHECK_STEPS:-$steps}
say "device_check: $gpu (compute capability $cc), $(nproc) cores; lab steps graded: $steps"

grade() {  # grade NAME ARGS...: lab.py grade into OUT/NAME; its wall time into OUT/NAME.seconds
  local name=$1 start=$SECONDS code
  shift
  echo "== $name: lab.py grade $*"
  python3 lab/lab.py grade --work "$out/work" --jobs 8 --rubric "$out/rubric.json" --out "$out/$name" "$@" \
    > "$out/$name.log" 2>&1
  code=$?
  echo "$code" > "$out/$name.exit"
  echo "$((SECONDS - start))" > "$out/$name.seconds"
  echo "   exit $code after $((SECONDS - start)) s (log: $out/$name.log)"
}

if [[ " ${phases[*]} " == *" grade "* ]]; then
  # The course's rubric, but timing rounds of 10 iterations after 3 warm-ups (the default: 20 after 5).
  echo '{"performance": {"rounds": 2, "warmup": 3, "iters": 10}}' > "$out/rubric.json"
  rm -rf "$out"/{self,bug,outside,skeleton}
  grade self --submission . --steps "$steps"

  mkdir -p "$out/bug/02_block_tiling" "$out/bug/04_outer_product"
  cp 02_block_tiling/kernel.cu "$out/bug/02_block_tiling/"
  python3 - "$out/bug/04_outer_product/kernel.cu" <<'PY'
import re, sys
text = open("04_outer_product/kernel.cu").read()
# The bug, inside the LAB region (a change outside it costs the price of a line, check 3): an
# off-by-one that skips the last k of every slice of 8, so every case with K >= 8 is wrong.
loop = "for (int i = 0; i < block_tile_k; ++i) {"
region = text[text.index("// LAB BEGIN"):text.index("// LAB END")]
assert text.count(loop) == 1 and loop in region, "04's loop over the slice changed: update the planted bug"
open(sys.argv[1], "w").write(text.replace(loop, "for (int i = 0; i + 1 < block_tile_k; ++i) {"))
PY
  printf '# instructor cases\n333 222 111 2 0.5\n1000 1 1000 1 0 nan\n96 200 264 -1 2\n' > "$out/hidden.txt"
  grade bug --submission "$out/bug" --steps 02,04 --cases "$out/hidden.txt"

  mkdir -p "$out/outside/04_outer_product"
  sed 's|^namespace worklog {$|namespace worklog {\nstatic int added_outside_the_todo = 1;|' 04_outer_product/kernel.cu \
    > "$out/outside/04_outer_product/kernel.cu"
  grade outside --submission "$out/outside" --steps 04

  python3 lab/lab.py release --steps 04 --out "$out/skeleton-copy" > /dev/null 2>&1 || rm -rf "$out/skeleton-copy"
  [ -d "$out/skeleton-copy" ] || python3 lab/lab.py release --steps 04 --out "$out/skeleton-copy"
  grade skeleton --submission "$out/skeleton-copy" --steps 04
  rm -rf "$out/skeleton-copy"

  python3 - "$out" "$steps" <<'PY' | tee -a "$summary"
import json, sys
from pathlib import Path
sys.path.insert(0, "lab")
from labkit import report

out, steps = Path(sys.argv[1]), sys.argv[2].split(",")


def load(name):
    code = int((out / f"{name}.exit").read_text())
    if code != 0:
        return None, f"lab.py exited {code} (see {out}/{name}.log)"
    record = json.loads((out / name / "grading.json").read_text())
    return record, {s.step: s for s in report.score_record(record)}


def line(ok, text):
    print(f"{'PASS' if ok else 'FAIL'}  {text}")
    return not ok


failed = 0
record, scores = load("self")
if record is None:
    failed += line(False, f"1. reference vs itself: {scores}")
else:
    short = [f"{s} {scores[s].score:g}" for s in steps if scores[s].score != 100]
    speed = ", ".join(f"{r['step'][:2]} {100 * r['performance']['ratio']:.0f}%" for r in record["steps"]
                      if r["performance"].get("ratio"))
    busy = sorted({p for r in record["steps"] for p in r["performance"].get("other_processes", [])})
    failed += line(not short and len(scores) == len(steps),
                   f"1. reference vs itself: {len(scores)} steps, "
                   + ("every one 100/100" if not short else "short: " + ", ".join(short))
                   + f"; scored ratio (shares of cuBLAS): {speed}" + (f"; GPU also used by {busy}" if busy else ""))
record, scores = load("bug")
if record is None:
    failed += line(False, f"2. planted bug in 04: {scores}")
else:
    cases = next(r for r in record["steps"] if r["step"] == "04_outer_product")["cases"]
    failing = [c for c in cases if c["status"] != "pass"]
    exact = failing == [c for c in cases if c["k"] >= 8 and c["alpha"] != 0] and all(c["status"] == "fail" for c in failing)
    mark = record["rubric"]["pass_mark"]
    bug, other = scores["04_outer_product"].score, scores["02_block_tiling"].score
    failed += line(exact and bug < mark and other == 100,
                   f"2. planted bug in 04 (the last k of each slice skipped): {bug:g}/100, below the pass mark {mark:g}: "
                   f"{bug < mark}; it fails {len(failing)} of {len(cases)} cases, exactly those with K >= 8: {exact}; "
                   f"02 beside it {other:g}/100")
record, scores = load("outside")
if record is None:
    failed += line(False, f"3. changed outside the TODO: {scores}")
else:
    step = record["steps"][0]
    todos_only = step["integrity"][0]
    rubric = record["rubric"]
    expected = 100 - rubric["checks"]["integrity"] - rubric["integrity"]["per_changed_line"]
    failed += line(step["compile"]["ok"] and todos_only["status"] == "changed"
                   and len(todos_only.get("changed_lines", [])) == 1 and scores["04_outer_product"].score == expected,
                   f"3. a line added outside the TODO: {todos_only['status']}, "
                   f"{scores['04_outer_product'].score:g}/100 (expected {expected:g}): {todos_only['detail'][:160]}")
record, scores = load("skeleton")
if record is None:
    failed += line(False, f"4. unmodified release of 04: {scores}")
else:
    step = record["steps"][0]
    statuses = sorted({c["status"] for c in step["cases"]})
    failed += line(step["compile"]["ok"] and statuses == ["fail"],
                   f"4. unmodified release of 04: builds, case results {statuses}, {scores['04_outer_product'].score:g}/100")
seconds = {name: int((out / f"{name}.seconds").read_text()) for name in ("self", "bug", "outside", "skeleton")}
print(f"TIME  grading {len(steps)} steps from an empty --work folder (the reference built once, for the class): "
      f"{seconds['self']} s; a later submission of 2 steps: {seconds['bug']} s, of 1 step: {seconds['skeleton']} s; "
      f"one with a line changed outside its TODO: {seconds['outside']} s")
sys.exit(1 if failed else 0)
PY
  [ "${PIPESTATUS[0]}" -eq 0 ] || failures=$((failures + 1))
fi

if [[ " ${phases[*]} " == *" release "* ]]; then
  # The release of every lab step, then the solutions put back in its kernels: LAB.md's commands must pass.
  rm -rf "$out/release"
  python3 - "$out/release" "$steps" <<'PY'
import sys
sys.path.insert(0, "lab")
from labkit import release
from labkit.rubric import load_rubric
release.release(".", sys.argv[2].split(","), sys.argv[1], load_rubric(), leak_check=False)
PY
  python3 - "$out/release" "$steps" <<'PY'
import shutil, sys
sys.path.insert(0, "lab")
from labkit import steps
for step in sys.argv[2].split(","):  # every file of the step with LAB regions: kernel.cu, and a header with some
    for path in steps.region_files(".", step):
        shutil.copyfile(path, f"{sys.argv[1]}/{path}")
PY
  start=$SECONDS
  python3 - "$out/release/LAB.md" > "$out/release-commands.sh" <<'PY'
import sys
sys.path.insert(0, "lab/tests")
from test_build import lab_md_commands
print("\n".join(lab_md_commands(open(sys.argv[1]).read())))
PY
  code=0
  reused=""
  while IFS= read -r command; do
    echo "== release: $command"
    if [ -z "${DEVICE_CHECK_FULL:-}" ] && [ $code -eq 0 ] && [[ $command == ctest*" -L sanitize "* ]]; then
      # LAB.md's sanitizer command selects sanitizer tests that the test workflow (its first command)
      # has just run in this build: each must be listed there as passed, rather than run a second
      # time (several minutes; DEVICE_CHECK_FULL=1 runs it).
      names=$(cd "$out/release" && bash -c "$command -N" 2>> "$out/release.log" | sed -n 's/^ *Test *#[0-9]*: //p')
      missing=0
      for name in $names; do
        grep -qE "Test +#[0-9]+: ${name//./\\.} \.+ +Passed" "$out/release.log" || missing=$((missing + 1))
      done
      total=$(wc -w <<< "$names")
      echo "   its $total tests: $((total - missing)) passed in the workflow above, not run again" | tee -a "$out/release.log"
      [ "$total" -gt 0 ] && [ $missing -eq 0 ] || { code=1; echo "   $missing of them did not pass there" | tee -a "$out/release.log"; }
      reused="; the sanitizer command's $total tests are the workflow's, passed there"
      continue
    fi
    (cd "$out/release" && bash -c "$command") >> "$out/release.log" 2>&1
    status=$?
    [ $status -eq 0 ] || { code=$status; echo "   exit $status: $command" | tee -a "$out/release.log"; }
  done < "$out/release-commands.sh"
  tests=$(grep -E "tests passed|tests failed" "$out/release.log" | head -1)
  check $code "5. the release of $steps with the solutions filled in: LAB.md's commands ($(wc -l < "$out/release-commands.sh") of them) pass: ${tests:-no ctest summary}$reused ($((SECONDS - start)) s; log: $out/release.log)"
fi

say ""
say "device_check: $([ $failures -eq 0 ] && echo "every check holds" || echo "$failures check(s) failed"); reports under $out/*/report.md; this summary: $summary"
exit $([ $failures -eq 0 ] && echo 0 || echo 1)
