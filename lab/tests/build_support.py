"""What the slow build tests share (test_build.py, test_grade_build.py; not a test module): the
environment of their builds and the compile cache they build through.

Everything builds for sm_90 only (CUDAARCHS=90), and through compile_cache.py, which compiles each
distinct file once for all the builds of a test: a release of step N holds the harness and steps
01..N, so without it the 14 releases would compile the harness 14 times and the early steps up to
13 times each.
"""
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

CACHE_SCRIPT = Path(__file__).resolve().with_name("compile_cache.py")
ONE_ARCHITECTURE = ["-DCMAKE_CUDA_ARCHITECTURES=90"]
COMMAND_TIMEOUT = 3600  # one LAB.md command (the workflow: configure, build, every test)


def enabled():
    """The slow build tests run only with LAB_BUILD_TESTS=1 (CTest sets it), so that `python3 -m
    unittest discover -s lab/tests` stays quick."""
    return os.environ.get("LAB_BUILD_TESTS") == "1"


def build_environment(cache):
    """The environment of every build here: sm_90 only, through the compile cache, and no GPU. The
    builds running at once (test_build.py builds several releases at a time) share at most two
    compilers per core, whatever -j each asks for (the presets' 16): more would only cost memory."""
    env = dict(os.environ, CUDAARCHS=os.environ.get("CUDAARCHS", "90"), CUDA_VISIBLE_DEVICES="",
               COMPILE_CACHE_DIR=str(cache), COMPILE_CACHE_JOBS=str(2 * (os.cpu_count() or 1)))
    for language in ("CUDA", "CXX"):
        env[f"CMAKE_{language}_COMPILER_LAUNCHER"] = f"{sys.executable};{CACHE_SCRIPT}"
    return env


def open_cache(test_name):
    """The compile cache of one test module's builds. LAB_BUILD_CACHE names a cache folder to keep
    between runs (for working on the kit); by default each run starts from an empty one, which
    close_cache removes. LAB_BUILD_SEED names a build whose objects start the cache (CTest gives its
    own build: every object a build here compiles as that build did, with the same flags, is taken
    from it; compile_cache.py --seed)."""
    kept = os.environ.get("LAB_BUILD_CACHE")
    cache = Path(kept) if kept else Path(tempfile.mkdtemp(prefix="lab-compile-cache-"))
    cache.mkdir(parents=True, exist_ok=True)
    seed = os.environ.get("LAB_BUILD_SEED")
    if seed:
        done = subprocess.run([sys.executable, str(CACHE_SCRIPT), "--seed", seed], capture_output=True, text=True,
                              env=dict(os.environ, COMPILE_CACHE_DIR=str(cache)))
        print(f"\n{test_name}: {(done.stdout + done.stderr).strip()}", file=sys.stderr)
        if done.returncode != 0:
            raise RuntimeError(f"LAB_BUILD_SEED={seed}: the compile cache could not be seeded")
    return cache


def close_cache(cache):
    if cache is not None and not os.environ.get("LAB_BUILD_CACHE"):
        shutil.rmtree(cache)
