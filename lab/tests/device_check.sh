#!/usr/bin/env bash
# The lab kit's device checks (issue 13), on a machine with an NVIDIA GPU, from anywhere in the
# repository:
#
#     lab/tests/device_check.sh [OUT]        (default OUT: /tmp/lab-device-check)
#
#   1. the reference graded against itself (every step with LAB regions): full marks;
#   2. an unmodified release of every step: 0 correctness for each, and nothing crashes (the 09/10
#      skeletons wait on barriers no copy fills: the per-run timeout stops them);
#   3. a planted bug (04 ignores beta), with an instructor case file: 04 loses exactly the cases
#      with beta != 0, standard and instructor ones, and 02 beside it keeps full marks;
#   4. a kernel that does not compile (03): 0 for 03 with the compiler's first error in the
#      report, and 05 beside it keeps full marks.
# The four gradings share one --work folder, so the reference is built once. Timing uses 1 round
# of 10 iterations instead of the rubric's 2 of 20, which kept the whole to 519 s on an H200 (2026-11-21).
# Prints one line per check and exits 0 when all hold, 1 when one does not, 77 without a GPU.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=$(realpath -m "${1:-/tmp/lab-device-check}")
rm -rf "$out"
mkdir -p "$out"
work="$out/work"
rubric="$out/rubric.json"
echo '{"performance": {"rounds": 1, "warmup": 3, "iters": 10}}' > "$rubric"
all_steps=$(python3 lab/lab.py check | awk -F: '/region\(s\)/ {print $1}' | paste -sd, -)

grade() {  # grade NAME ARGS...: writes $out/NAME/{report.md,results.json,grading.json} and $out/NAME.exit
  local name=$1 start=$SECONDS code
  shift
  echo "== $name: lab.py grade $*"
  python3 lab/lab.py grade --work "$work" --jobs 8 --rubric "$rubric" --out "$out/$name" "$@" \
    2> >(tee "$out/$name.stderr" >&2)
  code=$?
  echo "$code" > "$out/$name.exit"
  echo "   exit $code after $((SECONDS - start)) s"
  if [ "$code" -eq 77 ]; then
    echo "no CUDA device: the device checks need a GPU"
    exit 77
  fi
}

# 1. The reference against itself.
grade self --submission . --steps "$all_steps"

# 2. An unmodified release of every step: every skeleton at once, written as lab.build writes it
#    (without the leak check, which lab.py check and the lab tests run on their own).
python3 - "$out/release" <<'PY' || exit 1
import sys
sys.path.insert(0, "lab")
from labkit import release, steps
from labkit.rubric import load_rubric
chosen = [s for s in steps.discover_steps(".") if steps.regions_of(".", s)]
release.release(".", chosen, sys.argv[1], load_rubric(), leak_check=False)
PY
grade release --submission "$out/release" --steps "$all_steps"

# 3. A planted bug in 04, kernels only in the submission, and instructor cases.
mkdir -p "$out/bug/02_block_tiling" "$out/bug/04_outer_product"
cp 02_block_tiling/kernel.cu "$out/bug/02_block_tiling/"
python3 - "$out/bug/04_outer_product/kernel.cu" <<'EOF'
import sys
text = open("04_outer_product/kernel.cu").read()
store = "acc[y][x], p.alpha, p.beta);"
assert text.count(store) == 1, "04's write-back line changed: update the planted bug"
open(sys.argv[1], "w").write(text.replace(store, "acc[y][x], p.alpha, 0.0f);  // planted bug: beta ignored"))
EOF
printf '# instructor cases\n333 222 111 2 0.5\n1000 1 1000 1 0 nan\n96 200 264 -1 2\n' > "$out/hidden.txt"
grade bug --submission "$out/bug" --steps 02,04 --cases "$out/hidden.txt"

# 4. 03 does not compile; 05 beside it is the reference's.
mkdir -p "$out/broken/03_thread_coarsening" "$out/broken/05_wmma"
cp 05_wmma/kernel.cu "$out/broken/05_wmma/"
sed 's|^  // Write back the patch|  acc2[0][0] = 1.0f;  // does not compile\n  // Write back the patch|' \
  03_thread_coarsening/kernel.cu > "$out/broken/03_thread_coarsening/kernel.cu"
grade broken --submission "$out/broken" --steps 03,05

python3 - "$out" <<'EOF'
import json, sys
from pathlib import Path

out = Path(sys.argv[1])
failures = 0


def check(name, title, evaluate):
    """Prints PASS or FAIL and what evaluate(results.json, grading.json) found for grading NAME."""
    global failures
    code = int((out / f"{name}.exit").read_text())
    if code == 0:
        results = json.loads((out / name / "results.json").read_text())
        record = json.loads((out / name / "grading.json").read_text())
        ok, text = evaluate(results, record, {s["step"]: s for s in record["steps"]})
    else:
        ok, text = False, f"lab.py exited {code} (see {out}/{name}.stderr)"
    failures += not ok
    print(f"{'PASS' if ok else 'FAIL'}  {title}: {text}")


def step_score(results, step):
    tests = [t for t in results["tests"] if t["name"].startswith(step + ":")]
    return sum(t["score"] for t in tests), sum(t["max_score"] for t in tests)


def full_marks(results, record, steps):
    maximum = sum(t["max_score"] for t in results["tests"])
    short = [f"{t['name']} {t['score']}/{t['max_score']}" for t in results["tests"] if t["score"] != t["max_score"]]
    speeds = ", ".join(f"{s['step']} {100 * s['performance']['submission_tflops'] / s['performance']['reference_tflops']:.0f}%"
                       for s in record["steps"] if s["performance"].get("reference_tflops"))
    return (results["score"] == maximum and not short,
            f"{results['score']:g} of {maximum:g} over {len(steps)} steps" + (f"; short: {'; '.join(short)}" if short else "")
            + f"\n      speed against the reference: {speeds}")


def release_scores_nothing(results, record, steps):
    # A skeleton computes wrong results; the Hopper skeletons (09, 10) instead wait on a barrier that
    # no copy fills, which the kernel's watchdog stops (an error "stopped by the watchdog"), or else
    # the grader's per-run timeout (which then skips that step's remaining cases). A crash, or any
    # other CUDA error, is never acceptable.
    correctness = sum(t["score"] for t in results["tests"] if "correctness" in t["name"])
    hopper = {s["step"] for s in record["steps"] if s["step"][:2] in ("09", "10")}

    def acceptable(step, case):
        if step not in hopper:
            return case["status"] == "fail"
        return case["status"] in ("fail", "timeout", "not run") or (
            case["status"] == "error" and case["detail"].startswith("stopped by the watchdog"))

    wrong = sorted({f"{s['step']}: {c['status']}" for s in record["steps"] for c in s["cases"]
                    if not acceptable(s["step"], c)})
    statuses = sorted({c["status"] for s in record["steps"] for c in s["cases"]})
    compiled = all(s["compile"]["ok"] for s in record["steps"])
    return (correctness == 0 and not wrong and compiled,
            f"correctness {correctness:g}, total {results['score']:g}; every step compiled: {compiled}; "
            f"case results: {', '.join(statuses)} (wrong results; the watchdog or a timeout only where a Hopper "
            f"skeleton waits on its barriers; no crash or other CUDA error)"
            + (f"; unexpected: {', '.join(wrong)}" if wrong else ""))


def bug_loses_its_cases(results, record, steps):
    cases = steps["04_outer_product"]["cases"]
    failing = [c for c in cases if c["status"] != "pass"]
    expected = [c for c in cases if c["beta"] != 0]
    exact = failing == expected and all(c["status"] == "fail" for c in failing)
    score, score_max = step_score(results, "04_outer_product")
    other, other_max = step_score(results, "02_block_tiling")
    example = (f"\n      e.g. {failing[0]['m']}x{failing[0]['n']}x{failing[0]['k']} beta={failing[0]['beta']:g}: "
               f"{failing[0]['detail']}") if failing else ""
    return (exact and other == other_max,
            f"{len(failing)} of {len(cases)} cases of 04 fail, {'exactly' if exact else 'NOT exactly'} the "
            f"{len(expected)} with beta != 0 ({sum(c['source'] == 'instructor' for c in failing)} of them "
            f"instructor cases); 04 scores {score:g}/{score_max:g}, 02 beside it {other:g}/{other_max:g}{example}")


def compile_error_reported(results, record, steps):
    error = steps["03_thread_coarsening"]["compile"]["error"]
    report = (out / "broken" / "report.md").read_text()
    readable = error.startswith("03_thread_coarsening/kernel.cu(") and "acc2" in error and error in report
    score, score_max = step_score(results, "03_thread_coarsening")
    other, other_max = step_score(results, "05_wmma")
    return (score == 0 and readable and other == other_max,
            f"03 scores {score:g}/{score_max:g}, 05 beside it {other:g}/{other_max:g}; report.md shows: "
            + (error.splitlines()[0] if error else "(no error)"))


print()
check("self", "1. reference vs itself", full_marks)
check("release", "2. unmodified release", release_scores_nothing)
check("bug", "3. planted bug in 04", bug_loses_its_cases)
check("broken", "4. 03 does not compile", compile_error_reported)
print(f"\nreports: {out}/{{self,release,bug,broken}}/report.md")
sys.exit(1 if failures else 0)
EOF
