"""What the build lists and what each step registers, asked of the build, so that the README tooling
describes nothing a second time.

    steps(root)            the steps, in order: the add_worklog_step() lines of root/CMakeLists.txt
    bin_dir(root)          where the build put the step executables: $WORKLOG_BIN_DIR, else root/build/bin
    read(bin_dir, step)    the Registration of the built step: what `bin_dir/STEP --list-variants` prints
    parse(text, where)     the Registration of such a JSON text

A step registers itself once, at the end of its kernel.cu (common/step.hpp), and its executable
prints that registration as JSON when asked (`--list-variants`, no GPU needed):

    {"step": "07_async_pipeline", "adds": "cp.async pipeline, tiles shared in smem", "precision": "fp16",
     "compute_capability": {"min": 80, "max": null}, "reuse_tile": [128, 128],
     "variants": [{"name": "stages3", "description": "3 pipeline stages", "reuse_tile": [128, 128]}]}

A Registration holds the step's name, what it adds and its variants in their order of registration,
each with its description; `path` is the executable that answered. The C++ compiler has read the
registration, so whatever the source computes (15's menu, registered in a loop) is listed as it
runs. The executables are the build's: a kernel.cu changed since the last build is listed as it was
built. Anything that cannot be asked or read is a RegistrationError in one line. Standard library only.
"""
import json
import os
import re
import subprocess
import sys
from collections import namedtuple
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "common"))
import exit_codes  # noqa: E402  (common/exit_codes.py: the codes of common/exit_codes.hpp)

STEP_LINE = re.compile(r"^[ \t]*add_worklog_step[ \t]*\([ \t\n]*(\d\d_[A-Za-z0-9_]+)", re.MULTILINE)
# Where the tests find the build (CTest sets it: common/tests/CMakeLists.txt); the default is the
# build folder of the presets (CMakePresets.json: binaryDir build/), whose executables go to bin/.
BIN_DIR_VARIABLE = "WORKLOG_BIN_DIR"
LIST_FLAG = "--list-variants"
TIMEOUT_S = 60  # a step answers in well under a second; a hung one must not hang the tooling

# variants: {name: description} in the order of registration; path: the executable asked.
Registration = namedtuple("Registration", "step adds variants path")


class RegistrationError(Exception):
    """A registration that cannot be asked for or read, said in one line ("where: what")."""


def steps(root):
    """The steps the build makes, in its order: the first argument of each add_worklog_step() line of
    root/CMakeLists.txt (the build's list, which CMake also writes to worklog_steps.txt)."""
    path = Path(root) / "CMakeLists.txt"
    try:
        return STEP_LINE.findall(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise RegistrationError(f"{path}: {e.strerror or e}") from None


def bin_dir(root):
    """The folder of the built step executables: $WORKLOG_BIN_DIR when set, else root/build/bin."""
    given = os.environ.get(BIN_DIR_VARIABLE)
    return Path(given) if given else Path(root) / "build" / "bin"


def _not_built(folder, step):
    return RegistrationError(
        f"{Path(folder) / step}: no such executable: the steps' registrations are read from the built steps; "
        f"build them (cmake --workflow --preset test), or name the build's bin folder ({BIN_DIR_VARIABLE}=DIR, "
        "or --bin-dir DIR where the tool takes it)")


def _text(value, where, what):
    if not isinstance(value, str) or not value:
        raise RegistrationError(f"{where}: {what} is not a non-empty string")
    return value


def parse(text, where=LIST_FLAG):
    """The Registration of a --list-variants answer; RegistrationError ("where: what") when it is not
    JSON, or lacks the step's name, what it adds, or a variant's name or description, or names a
    variant twice."""
    try:
        found = json.loads(text)
    except ValueError as e:
        raise RegistrationError(f"{where}: not JSON ({e})") from None
    if not isinstance(found, dict):
        raise RegistrationError(f"{where}: not a JSON object")
    step = _text(found.get("step"), where, '"step"')
    adds = _text(found.get("adds"), where, f"the step {step}'s \"adds\"")
    listed = found.get("variants")
    if not isinstance(listed, list):
        raise RegistrationError(f"{where}: the step {step} has no \"variants\" list")
    variants = {}
    for variant in listed:
        if not isinstance(variant, dict):
            raise RegistrationError(f"{where}: a variant of {step} is not a JSON object")
        name = _text(variant.get("name"), where, f"a variant's name of {step}")
        if name in variants:
            raise RegistrationError(f"{where}: the variant '{name}' is registered twice")
        variants[name] = _text(variant.get("description"), where, f"the description of the variant '{name}'")
    return Registration(step, adds, variants, str(where))


_asked = {}  # {(executable, its mtime and size): Registration}: each build of a step is asked once


def read(folder, step):
    """The Registration of `step` as its executable in `folder` prints it, checked to be STEP's."""
    exe = Path(folder) / step
    try:
        stat = exe.stat()
    except OSError:
        raise _not_built(folder, step) from None
    key = (str(exe.resolve()), stat.st_mtime_ns, stat.st_size)
    if key not in _asked:
        try:
            done = subprocess.run([str(exe), LIST_FLAG], capture_output=True, text=True, timeout=TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise RegistrationError(f"{exe} {LIST_FLAG}: {getattr(e, 'strerror', None) or e}") from None
        if done.returncode != exit_codes.EXIT_OK:
            said = (done.stderr.strip().splitlines() or ["(nothing on stderr)"])[-1]
            raise RegistrationError(f"{exe} {LIST_FLAG}: exit code {done.returncode}: {said}")
        registration = parse(done.stdout, f"{exe} {LIST_FLAG}")
        if registration.step != step:
            raise RegistrationError(f"{exe} {LIST_FLAG}: registers '{registration.step}', not '{step}'")
        _asked[key] = registration
    return _asked[key]
