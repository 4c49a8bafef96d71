"""The rubric: how many points each part of a step is worth, and how performance is scored.

lab/rubric.json holds the defaults; an instructor's rubric file needs only the values it changes.
"""
import json
import numbers
from pathlib import Path

from .steps import UsageError

DEFAULT_RUBRIC = Path(__file__).resolve().parents[1] / "rubric.json"
SANITIZER_TOOLS = ("memcheck", "racecheck", "initcheck", "synccheck")
GRADESCOPE_VISIBILITY = ("hidden", "after_due_date", "after_published", "visible")


def _merge(defaults, overrides, where):
    """defaults updated by overrides, one level of sections deep; unknown keys are errors."""
    merged = {}
    for key, value in overrides.items():
        if key not in defaults:
            raise UsageError(f"{where}: unknown rubric key '{key}' (known: {', '.join(defaults)})")
    for key, default in defaults.items():
        value = overrides.get(key, default)
        if isinstance(default, dict):
            if not isinstance(value, dict):
                raise UsageError(f"{where}: '{key}' must be an object")
            merged[key] = _merge(default, value, f"{where}: {key}")
        else:
            merged[key] = value
    return merged


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
    tools = rubric["sanitizer"]["tools"]
    if not isinstance(tools, list) or not tools or any(t not in SANITIZER_TOOLS for t in tools):
        raise UsageError(f"{where}: sanitizer.tools must be a non-empty list of {', '.join(SANITIZER_TOOLS)} "
                         f"(got {tools!r})")
    if not isinstance(rubric["sanitizer"]["requires_a_passing_case"], bool):
        raise UsageError(f"{where}: sanitizer.requires_a_passing_case must be true or false")
    perf = rubric["performance"]
    size = perf["size"]
    if (not isinstance(size, list) or len(size) != 3
            or any(isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in size)):
        raise UsageError(f"{where}: performance.size must be [M, N, K], three positive integers (got {size!r})")
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


def performance_fraction(ratio, rubric):
    """Share of the performance points at `ratio` = submission speed / reference speed: 1 from
    full_at up, 0 at zero_at and below, linear in between."""
    perf = rubric["performance"]
    return min(1.0, max(0.0, (ratio - perf["zero_at"]) / (perf["full_at"] - perf["zero_at"])))
