"""The steps of a worklog tree and the files that make up the tree.

A step is a numbered directory (NN_name) with a kernel.cu, in the order of its number; nothing here
lists them, so a new step takes part as soon as its directory exists. The build lists them too,
one add_worklog_step(NN_name ...) call each (in CMakeLists.txt, or any CMake file of the tree):
registrations() reads those calls, so that a handout can leave a step out of its build.
"""
import json
import re
import subprocess
from pathlib import Path

from .markers import MarkerError, all_regions, names_step, parse_regions
from .tasks import load_tasks, tasks_path

STEP_DIRECTORY = re.compile(r"^\d{2}_[A-Za-z0-9_]+$")
KERNEL = "kernel.cu"
# Written into every student copy: which steps lost their solutions.
RELEASE_RECORD = Path("lab") / "released.json"
# Not copied into a student copy: the kit's own tests compare against the solutions; the plotting
# scripts' tests check the published figures, not the student's code, and take minutes.
# The course's files (lab/course/) hold the answers to the handouts' questions: they go to the key.
NOT_RELEASED = (Path("lab") / "tests", Path("plots") / "tests", Path("lab") / "course")
# One add_worklog_step() call: its first argument is a step, the rest its options (HOPPER,
# FALLBACK <step>, EXTRA <names>), on one line or several; a comment after it on its line goes
# with it. The function's definition (`function(add_worklog_step step)`) and comments quoting the
# call are not calls.
REGISTRATION = re.compile(r"^[ \t]*add_worklog_step[ \t]*\([ \t\n]*(?P<step>\d{2}_[A-Za-z0-9_]+)\b(?P<options>[^)]*)\)"
                          r"[ \t]*(?:#[^\n]*)?\n?", re.MULTILINE)


class Registration:
    """One add_worklog_step() call: where it is, and the options that matter to a handout."""

    def __init__(self, path, match):
        self.path, self.step, self.text = path, match["step"], match.group(0)
        words = match["options"].split()
        self.hopper = "HOPPER" in words
        self.fallback = words[words.index("FALLBACK") + 1] if "FALLBACK" in words[:-1] else None


def cmake_files(root):
    """The CMake files of tree `root` (relative paths) that may hold add_worklog_step() calls."""
    return [p for p in repository_files(root) if p.name == "CMakeLists.txt" or p.suffix == ".cmake"]


def registrations(root):
    """{step: Registration} of every add_worklog_step() call in the tree's CMake files."""
    found = {}
    for path in cmake_files(root):
        text = (Path(root) / path).read_text(encoding="utf-8", errors="replace")
        for match in REGISTRATION.finditer(text):
            found[match["step"]] = Registration(path, match)
    return found


def without_registrations(root, steps):
    """{relative path: text} of the CMake files whose add_worklog_step() calls of `steps` are
    removed (only the files that change)."""
    changed = {}
    for registration in registrations(root).values():
        if registration.step in steps:
            path = registration.path.as_posix()
            text = changed.get(path, (Path(root) / registration.path).read_text(encoding="utf-8"))
            changed[path] = text.replace(registration.text, "", 1)
    return changed


def later_steps(root, chosen, keep=()):
    """The steps after the first of `chosen` that are neither chosen nor in `keep`: a later step
    builds on the earlier ones, so its code holds their solutions (10's producer is 09's), and a
    handout leaves it out."""
    first = min(chosen)
    return [s for s in discover_steps(root) if s > first and s not in chosen and s not in keep]


class UsageError(Exception):
    """A bad command line or input file: one line for the user, exit code 2."""


def discover_steps(root):
    """Names of the steps in tree `root`, in order."""
    root = Path(root)
    return sorted(d.name for d in root.iterdir()
                  if d.is_dir() and STEP_DIRECTORY.match(d.name) and (d / KERNEL).is_file())


def kernel_path(root, step):
    return Path(root) / step / KERNEL


# The files of a step that may hold LAB regions: its kernel.cu, the other sources in its folder, and
# the files of the library under the steps (common/) where the step's idea lives, which the step's
# tasks file names in its introduction, on a line of its own:
#     Regions also in: `common/sm90/stream_k_schedule.cuh`, `common/sm90/stream_k_kernel.cuh`
SOURCE_SUFFIXES = (".cu", ".cuh", ".hpp", ".h")
LIBRARY_LINE = re.compile(r"^Regions also in:(?P<paths>.*)$")


def library_sources(root, step):
    """The library files (relative paths) that hold LAB regions of `step`, as its tasks file names
    them; MarkerError for a named file that does not exist."""
    path = Path(root) / tasks_path(step)
    if not path.is_file():
        return []
    found = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.startswith("## "):
            break  # the tasks begin: the introduction is over
        match = LIBRARY_LINE.match(line)
        for name in re.findall(r"`([^`]+)`", match["paths"]) if match else []:
            if not (Path(root) / name).is_file():
                raise MarkerError(tasks_path(step).as_posix(), number, f"'{name}' names no file of the tree")
            found.append(name)
    return found


def step_sources(root, step):
    """The relative paths ("12_stream_k/kernel.cu", "common/sm90/stream_k_schedule.cuh") of a step's
    source files, kernel.cu first, then the others of its folder, then its library files."""
    folder = Path(root) / step
    others = sorted(p.name for p in folder.iterdir() if p.is_file() and p.suffix in SOURCE_SUFFIXES and p.name != KERNEL)
    own = [f"{step}/{name}" for name in [KERNEL, *others] if (folder / name).is_file()]
    return own + [p for p in library_sources(root, step) if p not in own]


def region_files(root, step):
    """{relative path: its outermost regions} of each source file of the step that has regions, in
    step_sources order, each region with its task from lab/tasks/<step>.md (tasks.py). MarkerError
    when a marker is malformed, a name is used twice in the step, a region has no task, or, in a step
    that has regions, a task names none."""
    found, named = {}, {}
    tasks = load_tasks(root, step)
    for path in step_sources(root, step):
        regions = parse_regions((Path(root) / path).read_text(encoding="utf-8"), path, tasks)
        for region in all_regions(regions):
            if region.name in named:
                raise MarkerError(path, region.begin_line, f"the region name '{region.name}' is used twice in {step} "
                                                           f"(also at {named[region.name]}); each names its own task")
            named[region.name] = f"{path}:{region.begin_line}"
        if regions:
            found[path] = regions
    if found:  # a handed-out step of a student copy has no regions left, and its tasks stay for reading
        for name in tasks.texts:
            if name not in named:
                raise MarkerError(tasks.path, tasks.lines[name], f"no region of {step} is named '{name}' (// LAB BEGIN "
                                                                 f"{name}): a task for a region that is gone?")
    return found


def regions_of(root, step):
    """The LAB regions of a step, in all its source files (MarkerError when malformed)."""
    return [r for regions in region_files(root, step).values() for r in regions]


def check_repeats(root, step):
    """Raises MarkerError where a repeat region of `step` ([level, repeats 09 10]) names no step of
    the tree, or one that is not before `step`: only an earlier step's solution can be in a later
    step's code (a release leaves the later steps out)."""
    steps = discover_steps(root)
    for path, regions in region_files(root, step).items():
        for region in all_regions(regions):
            for word in region.repeats:
                named = [s for s in steps if names_step(word, s)]
                if not named:
                    raise MarkerError(path, region.begin_line, f"repeats '{word}': no such step in {root}")
                if named[0] >= step:
                    raise MarkerError(path, region.begin_line, f"repeats '{word}': {named[0]} is not before "
                                                                f"{step} (a region repeats an earlier step's solution)")


def released_steps(root):
    """Steps whose solutions were taken out of tree `root` (it is a student copy), else []."""
    record = Path(root) / RELEASE_RECORD
    if not record.is_file():
        return []
    return json.loads(record.read_text(encoding="utf-8")).get("steps", [])


def resolve_steps(root, spec, require_regions=True):
    """The steps named by `spec`: "all", or a comma-separated list of numbers (02) or names
    (02_block_tiling). Raises UsageError for an unknown step, and, with require_regions, for a
    step without LAB regions (it has nothing for a student to write)."""
    available = discover_steps(root)
    if not available:
        raise UsageError(f"{root} has no steps (numbered directories with a {KERNEL})")
    if spec.strip() == "all":
        chosen = [s for s in available if regions_of(root, s)] if require_regions else available
        if not chosen:
            raise UsageError(f"no step in {root} has LAB regions")
        return chosen
    chosen = []
    for word in (w.strip() for w in spec.split(",")):
        matches = [s for s in available if word and (s == word or s.split("_", 1)[0] == word)]
        if not matches:
            raise UsageError(f"no step '{word}' in {root} (steps: {', '.join(available)})")
        if matches[0] not in chosen:
            chosen.append(matches[0])
    if require_regions:
        for step in chosen:
            if not regions_of(root, step):
                raise UsageError(f"{step} has no LAB regions in {step}/: nothing to hand out or grade "
                                 "(mark the student's part with // LAB BEGIN <name> ... // LAB END, and write its "
                                 "task under '## <name>' in lab/tasks/<step>.md)")
    return chosen


def _git_listing(root):
    """Tracked and untracked-but-not-ignored files, as git sees them; None outside a git tree."""
    try:
        listing = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--cached", "--others",
                                  "--exclude-standard"], capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return [Path(p) for p in listing.stdout.decode("utf-8", "surrogateescape").split("\0") if p]


def _walk_listing(root):
    return [p.relative_to(root) for p in Path(root).rglob("*")
            if p.is_file() and ".git" not in p.relative_to(root).parts
            and "__pycache__" not in p.parts and p.suffix != ".pyc"]


def repository_files(root, exclude=()):
    """The files of tree `root` (relative paths) that a copy of it carries: what git lists (or,
    outside git, every file but .git and caches), minus build trees (any folder holding a
    CMakeCache.txt), earlier student copies (holding lab/released.json), and `exclude` (paths
    relative to root: a file or everything under a folder)."""
    root = Path(root).resolve()
    listing = _git_listing(root)
    if listing is None:
        listing = _walk_listing(root)
    skipped_dirs = {Path(p) for p in exclude}
    for marker in ("CMakeCache.txt", str(RELEASE_RECORD)):
        for found in root.rglob(Path(marker).name):
            if found.relative_to(root).as_posix().endswith(marker):
                folder = found.parent if marker == "CMakeCache.txt" else found.parent.parent
                if folder != root:  # the tree itself may be a student copy: keep it, minus the rest
                    skipped_dirs.add(folder.relative_to(root))

    def kept(path):
        return (root / path).is_file() and not any(path == d or d in path.parents for d in skipped_dirs)
    return sorted(p for p in listing if kept(p))
