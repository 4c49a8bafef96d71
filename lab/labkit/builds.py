"""Building a tree with CMake for the grader, and finding a submission's files (lab.py grade;
grading.py): the compiler's first error in a build's output, a scratch copy of the reference with
the submission's kernels on top.
"""
import re
import shutil
from pathlib import Path

from .runs import run
from .steps import KERNEL, repository_files


# ---- Building -----------------------------------------------------------------------------------------

# The first line that reports an error, from nvcc, the host compiler, ptxas, the linker or CMake;
# make's and ninja's own lines are only echoes.
COMPILER_ERROR = re.compile(r"(\berror\b|undefined reference|ptxas fatal|CMake Error)", re.IGNORECASE)
BUILD_TOOL_LINE = re.compile(r"^(g?make(\[\d+\])?:|ninja:|FAILED:|\[\s*\d+%\]|collect2:|\d+ errors? detected)")


def first_compiler_error(output, tree):
    """The compiler's first error with the lines that show where (nvcc prints the source line and
    a caret after it), paths made relative to `tree`; '' when none is recognized."""
    lines = output.replace(str(Path(tree).resolve()) + "/", "").replace(str(tree) + "/", "").splitlines()
    for index, line in enumerate(lines):
        if COMPILER_ERROR.search(line) and not BUILD_TOOL_LINE.match(line.strip()):
            shown = [line.rstrip()]
            for following in lines[index + 1:index + 3]:
                if (not following.strip() or COMPILER_ERROR.search(following)
                        or BUILD_TOOL_LINE.match(following.strip())):
                    break
                shown.append(following.rstrip())
            return "\n".join(shown)
    return ""


def cache_value(build_dir, key):
    cache = Path(build_dir) / "CMakeCache.txt"
    if cache.is_file():
        for line in cache.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith(key + ":"):
                return line.split("=", 1)[1]
    return None


class Build:
    """A CMake build directory of one tree."""

    def __init__(self, source, directory, log_dir, jobs):
        self.source, self.directory = Path(source).resolve(), Path(directory).resolve()
        self.log_dir, self.jobs = Path(log_dir), jobs

    def _log(self, name, outcome):
        self.log_dir.mkdir(parents=True, exist_ok=True)
        (self.log_dir / f"{name}.log").write_text(outcome.output, encoding="utf-8")

    def configure(self, name, timeout, options=()):
        home = cache_value(self.directory, "CMAKE_HOME_DIRECTORY")
        if home is not None and Path(home).resolve() != self.source:
            shutil.rmtree(self.directory)  # a build of another tree: start afresh
        outcome = run(["cmake", "-S", self.source, "-B", self.directory, "-DCMAKE_BUILD_TYPE=Release", *options],
                      timeout)
        self._log(f"{name}-configure", outcome)
        return outcome

    def build(self, name, targets, timeout, keep_going=False):
        native = []
        if keep_going:  # build every target that can be built, whatever fails beside it
            generator = cache_value(self.directory, "CMAKE_GENERATOR") or ""
            native = ["--", "-k"] if "Makefiles" in generator else ["--", "-k", "0"] if "Ninja" in generator else []
        outcome = run(["cmake", "--build", self.directory, "-j", str(self.jobs), "--target", *targets, *native],
                      timeout)
        self._log(name, outcome)
        return outcome

    def executable(self, target):
        return self.directory / "bin" / target


def find_submission_file(submission, path):
    """The submission's file `path` ("04_x/kernel.cu"): SUBMISSION/path, or the one .../path below
    it (an archive often adds a folder). (path or None, problem)."""
    direct = Path(submission) / path
    if direct.is_file():
        return direct, ""
    found = [p for p in Path(submission).rglob(path)
             if not any((parent / "CMakeCache.txt").exists() for parent in p.parents)]
    if len(found) == 1:
        return found[0], ""
    if not found:
        return None, f"the submission has no {path}"
    return None, f"the submission has {len(found)} files {path}: " + ", ".join(
        str(p.relative_to(submission)) for p in found[:3])


def find_submission_kernel(submission, step):
    """The submission's kernel.cu for `step` (find_submission_file)."""
    return find_submission_file(submission, f"{step}/{KERNEL}")


def sync_tree(reference, tree, replacements):
    """Makes `tree` a copy of the reference's files with `replacements` ({relative path: text})
    on top. Files already equal are left untouched and changed ones written afresh, so that an
    incremental build of a reused tree recompiles exactly what changed."""
    tree = Path(tree)
    wanted = {p.as_posix(): (Path(reference) / p).read_bytes() for p in repository_files(reference)}
    for path, text in replacements.items():
        wanted[path] = text.encode("utf-8")
    for path, content in wanted.items():
        target = tree / path
        if not target.is_file() or target.read_bytes() != content:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)
    for existing in [p for p in tree.rglob("*") if p.is_file()]:
        if existing.relative_to(tree).as_posix() not in wanted:
            existing.unlink()
