"""The rubric: how many points each part of a step is worth, and how performance is scored.

lab/rubric.json holds the defaults; an instructor's rubric file needs only the values it changes.
Performance is timed at one shape per step: performance.sizes names a step's own ({"12_stream_k":
[M, N, K]}, or by number, "12"), performance.size is every other step's. A rubric file without
sizes (written before there were any) keeps the default's per-step sizes, and a recorded grading
without them (grading.json) reads as every step at size.
"""
import json
import numbers
import re
from pathlib import Path

from .steps import UsageError

DEFAULT_RUBRIC = Path(__file__).resolve().parents[1] / "rubric.json"
SANITIZER_TOOLS = ("memcheck", "racecheck", "initcheck", "synccheck")
GRADESCOPE_VISIBILITY = ("hidden", "after_due_date", "after_published", "visible")


# A key of performance.sizes: a step's number, or its folder's name.
SIZE_KEY = re.compile(r"^\d{2}(_[A-Za-z0-9_]+)?$")
# Objects whose keys a rubric file chooses (steps), merged key by key rather than checked against the default's.
OPEN_OBJECTS = {("performance", "sizes")}


def _merge(defaults, overrides, where, path=()):
    """defaults updated by overrides, section by section; unknown keys are errors, but in
    OPEN_OBJECTS, where an override's key replaces the default's for the same step."""
    merged = {}
    for key, value in overrides.items():
        if key not in defaults:
            raise UsageError(f"{where}: unknown rubric key '{key}' (known: {', '.join(defaults)})")
    for key, default in defaults.items():
        value = overrides.get(key, default)
        if isinstance(default, dict):
            if not isinstance(value, dict):
                raise UsageError(f"{where}: '{key}' must be an object")
            if path + (key,) in OPEN_OBJECTS:
                numbers_given = {str(k)[:2] for k in value}
                merged[key] = {k: v for k, v in default.items() if k[:2] not in numbers_given}
                merged[key].update(value)
            else:
                merged[key] = _merge(default, value, f"{where}: {key}", path + (key,))
        else:
            merged[key] = value
    return merged


def _valid_size(size):
    return (isinstance(size, list) and len(size) == 3
            and all(not isinstance(v, bool) and isinstance(v, int) and v >= 1 for v in size))


def _number(rubric, section, key, where, low=0.0, high=None, integer=False):
    value = rubric[section][key]
    kind = numbers.Integral if integer else numbers.Real
    if isinstance(value, bool) or not isinstance(value, kind) or value < low or (high is not None and value > high):
        bound = f"at least {low}" + (f" and at most {high}" if high is not None else "")
        raise UsageError(f"{where}: {section}.{key} must be a{'n integer' if integer else ' number'} {bound} "
                         f"(got {value!r})")


def validate(rubric, where):
    for section in ("correctness", "sanitizer", "performance"):
        _number(rubric, section, "points", where)
    for key in rubric["checks"]:
        _number(rubric, "checks", key, where)
    _number(rubric, "integrity", "per_changed_line", where)
    _number(rubric, "integrity", "refuse_above_lines", where, integer=True)
    tools = rubric["sanitizer"]["tools"]
    if not isinstance(tools, list) or not tools or any(t not in SANITIZER_TOOLS for t in tools):
        raise UsageError(f"{where}: sanitizer.tools must be a non-empty list of {', '.join(SANITIZER_TOOLS)} "
                         f"(got {tools!r})")
    if not isinstance(rubric["sanitizer"]["requires_a_passing_case"], bool):
        raise UsageError(f"{where}: sanitizer.requires_a_passing_case must be true or false")
    perf = rubric["performance"]
    size = perf["size"]
    if not _valid_size(size):
        raise UsageError(f"{where}: performance.size must be [M, N, K], three positive integers (got {size!r})")
    sizes = perf["sizes"]
    if not isinstance(sizes, dict):
        raise UsageError(f"{where}: performance.sizes must be an object of steps and their [M, N, K] "
                         f"(got {sizes!r})")
    for key, value in sizes.items():
        if not SIZE_KEY.match(key):
            raise UsageError(f"{where}: performance.sizes: '{key}' is not a step (a number such as 12, or a "
                             "folder's name such as 12_stream_k)")
        if not _valid_size(value):
            raise UsageError(f"{where}: performance.sizes.{key} must be [M, N, K], three positive integers "
                             f"(got {value!r})")
        same = [other for other in sizes if other != key and other[:2] == key[:2]]
        if same:
            raise UsageError(f"{where}: performance.sizes names step {key[:2]} twice ('{key}' and '{same[0]}')")
    _number(rubric, "performance", "zero_at", where)
    _number(rubric, "performance", "full_at", where)
    if not perf["zero_at"] < perf["full_at"]:
        raise UsageError(f"{where}: performance.zero_at ({perf['zero_at']}) must be below full_at ({perf['full_at']})")
    _number(rubric, "performance", "rounds", where, low=1, integer=True)
    _number(rubric, "performance", "warmup", where, low=0, integer=True)
    _number(rubric, "performance", "iters", where, low=1, integer=True)
    for key in rubric["timeouts_seconds"]:
        _number(rubric, "timeouts_seconds", key, where, low=1)
    if isinstance(rubric["pass_mark"], bool) or not isinstance(rubric["pass_mark"], numbers.Real) \
            or rubric["pass_mark"] < 0:
        raise UsageError(f"{where}: pass_mark must be a number at least 0 (got {rubric['pass_mark']!r})")
    if rubric["instructor_cases_visibility"] not in GRADESCOPE_VISIBILITY:
        raise UsageError(f"{where}: instructor_cases_visibility must be one of {', '.join(GRADESCOPE_VISIBILITY)}")
    return rubric


def _read_json(path):
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as e:
        raise UsageError(f"cannot read rubric {path}: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise UsageError(f"{path}:{e.lineno}: not valid JSON ({e.msg})") from None


def load_rubric(path=None):
    """The default rubric, with the values of the file at `path` (if any) over it."""
    rubric = _read_json(DEFAULT_RUBRIC)
    if path is not None:
        overrides = _read_json(path)
        if not isinstance(overrides, dict):
            raise UsageError(f"{path}: a rubric is a JSON object")
        rubric = _merge(rubric, overrides, str(path))
    return validate(rubric, str(path or DEFAULT_RUBRIC))


def performance_size(rubric, step):
    """[M, N, K] at which `step` (its folder's name) is timed: its own in performance.sizes (by name or
    by number), else performance.size. A rubric recorded without sizes (an older grading.json) has
    every step at size."""
    perf = rubric["performance"]
    for key, size in perf.get("sizes", {}).items():
        if key == step or key == step[:2]:
            return list(size)
    return list(perf["size"])


def check_sizes(rubric, steps, where):
    """Raises UsageError where a key of performance.sizes gives a step's number with another folder's
    name than the tree's (`steps`: its folder names), which would time that step at size unseen. A
    number the tree lacks is no error: a student's copy leaves the later steps out."""
    for key in rubric["performance"].get("sizes", {}):
        named = [s for s in steps if s[:2] == key[:2]]
        if named and key not in (named[0], named[0][:2]):
            raise UsageError(f"{where}: performance.sizes: '{key}' is not a step of this tree (step {key[:2]} is "
                             f"{named[0]})")


def shape_text(size):
    return "×".join(str(v) for v in size)


def sizes_text(rubric, steps, sizes=None):
    """Where `steps` are timed, in words after "performance 30 ...": "at 4096×4096×4096" where they
    share one size; else "at 4096×4096×4096 but 12_stream_k at 3072×3072×3072 and 13_swap_ab at
    16×4096×4096", or, where none is at the default, "with 12_stream_k at 3072×3072×3072 and ...".
    sizes: {step: [M, N, K]} as a grading recorded them (default: the rubric's)."""
    sizes = sizes or {}
    default = list(rubric["performance"]["size"])
    timed = [(step, list(sizes.get(step) or performance_size(rubric, step))) for step in steps]
    if len({tuple(size) for _, size in timed}) <= 1:
        return f"at {shape_text(timed[0][1] if timed else default)}"
    own = [f"{step} at {shape_text(size)}" for step, size in timed if size != default]
    listed = (", ".join(own[:-1]) + " and " if len(own) > 1 else "") + own[-1]
    if len(own) == len(timed):
        return f"with {listed}"
    return f"at {shape_text(default)} but {listed}"


def performance_fraction(ratio, rubric):
    """Share of the performance points at `ratio` = submission speed / reference speed: 1 from
    full_at up, 0 at zero_at and below, linear in between."""
    perf = rubric["performance"]
    return min(1.0, max(0.0, (ratio - perf["zero_at"]) / (perf["full_at"] - perf["zero_at"])))
