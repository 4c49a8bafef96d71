#!/usr/bin/env bash
# Prepares a GPU machine to grade the lab, from a fresh install of Linux with the NVIDIA driver and
# the CUDA Toolkit (neither of which this script installs: they depend on the GPU and the distribution).
#
#   lab/setup_grader.sh [--steps 02,04] [--work DIR] [--install] [--no-warm-up]
#
# 1. Checks every tool the grader needs, each with what to do when it is missing or too old:
#    nvidia-smi and a visible GPU, nvcc (CUDA 12 or 13), compute-sanitizer, cmake and ctest 3.25 or
#    newer, python3 3.8 or newer, nm (binutils), git; clang-format (optional: without it the integrity
#    check compares files as written, formatting included); whether the GPU can run the chosen steps
#    (compute capability 9.0 for 09 and later).
#    --install installs what a package manager can (cmake, binutils, git, clang-format) with apt-get
#    or dnf; it never touches the driver or the CUDA Toolkit.
# 2. Unless --no-warm-up: grades the reference against itself for the chosen steps, with --work DIR
#    (default ~/lab-work), so that the reference is built once; every later grading with the same
#    --work reuses it. A correct machine prints each step at full marks.
#
# Idempotent: run it again at any time (after a driver update, on a new term); the checks change
# nothing, and the warm-up rebuilds only what changed. Exit code 0 when the machine can grade, 1 when
# a check failed (each failure printed as "MISSING" or "TOO OLD" with its fix), 2 for a bad option.
set -u

steps="02,04"
work="${HOME:-/tmp}/lab-work"
install=0
warm_up=1
while [ $# -gt 0 ]; do
  case "$1" in
    --steps) steps="${2:?--steps needs a value}"; shift ;;
    --work) work="${2:?--work needs a folder}"; shift ;;
    --install) install=1 ;;
    --no-warm-up) warm_up=0 ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "setup_grader.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done

here="$(cd "$(dirname "$0")/.." && pwd)"  # the repository
failed=0
ok() { printf '  ok        %-18s %s\n' "$1" "$2"; }
bad() { printf '  %-9s %-18s %s\n' "$1" "$2" "$3"; failed=1; }
note() { printf '  note      %-18s %s\n' "$1" "$2"; }

# version_at_least 3.25.1 3.25 -> true
version_at_least() {
  [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n 1)" = "$2" ]
}

if [ "$install" = 1 ]; then
  packages="cmake binutils git clang-format"
  sudo_cmd=""
  [ "$(id -u)" != 0 ] && command -v sudo >/dev/null && sudo_cmd="sudo"
  if command -v apt-get >/dev/null; then
    echo "installing with apt-get: $packages"
    $sudo_cmd apt-get update -q && $sudo_cmd apt-get install -y -q $packages
  elif command -v dnf >/dev/null; then
    echo "installing with dnf: $packages"
    $sudo_cmd dnf install -y $packages
  else
    echo "--install: neither apt-get nor dnf found; install $packages by hand" >&2
  fi
fi

# CUDA's tools are often installed but not on PATH.
for cuda in /usr/local/cuda/bin /opt/cuda/bin; do
  case ":$PATH:" in *":$cuda:"*) ;; *) [ -x "$cuda/nvcc" ] && PATH="$PATH:$cuda" ;; esac
done

echo "checking this machine for the lab's grader ($here)"
if command -v nvidia-smi >/dev/null; then
  gpus="$(nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader 2>/dev/null)"
  if [ -n "$gpus" ]; then
    ok nvidia-smi "$(echo "$gpus" | head -n 1) ($(echo "$gpus" | wc -l) GPU(s))"
    capability="$(echo "$gpus" | head -n 1 | cut -d, -f2 | tr -d ' ')"
  else
    bad MISSING "a GPU" "nvidia-smi sees none: is the driver loaded (nvidia-smi alone says why), the container started with --gpus all?"
  fi
else
  bad MISSING nvidia-smi "install the NVIDIA driver for this GPU (it brings nvidia-smi); without a GPU, grade with --no-gpu"
fi
if command -v nvcc >/dev/null; then
  cuda_version="$(nvcc --version | sed -n 's/.*release \([0-9][0-9.]*\).*/\1/p')"
  if version_at_least "$cuda_version" 12.0; then ok nvcc "CUDA $cuda_version"
  else bad "TOO OLD" nvcc "CUDA $cuda_version: the worklog needs CUDA 12 or 13"; fi
else
  bad MISSING nvcc "install the CUDA Toolkit 12 or 13 (developer.nvidia.com/cuda-downloads), and put its bin/ on PATH"
fi
if command -v compute-sanitizer >/dev/null; then ok compute-sanitizer "$(command -v compute-sanitizer)"
else bad MISSING compute-sanitizer "it comes with the CUDA Toolkit (bin/ beside nvcc): a toolkit without it cannot grade the sanitizer part"; fi
for tool in cmake ctest; do
  if command -v "$tool" >/dev/null; then
    v="$("$tool" --version | head -n 1 | sed 's/[^0-9]*\([0-9][0-9.]*\).*/\1/')"
    if version_at_least "$v" 3.25; then ok "$tool" "$v"
    else bad "TOO OLD" "$tool" "$v: need 3.25 or newer (pip install cmake, or Kitware's packages)"; fi
  else
    bad MISSING "$tool" "install CMake 3.25 or newer (apt-get install cmake, pip install cmake; --install tries)"
  fi
done
if command -v python3 >/dev/null; then
  if python3 -c 'import sys; sys.exit(sys.version_info < (3, 8))'; then ok python3 "$(python3 --version 2>&1)"
  else bad "TOO OLD" python3 "$(python3 --version 2>&1): need 3.8 or newer"; fi
else
  bad MISSING python3 "install Python 3.8 or newer"
fi
if command -v nm >/dev/null; then ok nm "$(nm --version | head -n 1)"
else bad MISSING nm "install binutils (apt-get install binutils): the symbol check reads the kernel objects with it"; fi
if command -v git >/dev/null; then ok git "$(git --version)"
else note git "not found: releases then copy every file of the tree, not only what git lists"; fi
if command -v clang-format >/dev/null || ls /usr/bin/clang-format-* >/dev/null 2>&1; then
  ok clang-format "$( (command -v clang-format || ls /usr/bin/clang-format-* | tail -n 1) | head -n 1)"
else
  note clang-format "not found: the integrity check compares kernels as written, so a reformatted file counts as changed (apt-get install clang-format)"
fi
if [ -n "${capability:-}" ]; then
  for step in $(echo "$steps" | tr ',' ' '); do
    number="${step:0:2}"
    if [ "$number" != "al" ] && [ "$number" -ge 9 ] 2>/dev/null && [ "$capability" != "9.0" ]; then
      bad "CANNOT" "step $step" "needs compute capability 9.0 (an H100 or H200); this GPU is $capability"
    fi
  done
fi

if [ "$failed" != 0 ]; then
  echo "this machine cannot grade yet: fix the lines above and run lab/setup_grader.sh again"
  exit 1
fi
echo "every tool is here"
if [ "$warm_up" = 0 ]; then
  exit 0
fi

echo "warming up: the reference graded against itself (steps $steps, --work $work); the first time builds the reference"
mkdir -p "$work"
python3 "$here/lab/lab.py" grade --submission "$here" --steps "$steps" --work "$work" --out "$work/setup-check"
code=$?
if [ "$code" != 0 ]; then
  echo "the warm-up grading stopped with exit code $code (lab/README.md lists the codes); see $work/setup-check/logs" >&2
  exit 1
fi
echo "ready: grade each submission with --work $work (lab/COURSE.md, the checklist); the warm-up's report is $work/setup-check/report.md"
