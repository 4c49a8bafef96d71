"""Integrity: what the grader refuses before it scores a step.

1. A kernel.cu that differs from the handout outside its TODOs. The handout's file is the solution's
   with each blanked region replaced by its TODO (markers.released_lines, at the release's level);
   a submission must be that file with each TODO block replaced by any lines (none too), and every
   other line as it was, trailing spaces, line endings and LAB marker lines aside. A helper function written outside
   a TODO, or a file reformatted as a whole, is refused: the grader could not tell the student's
   part from the given one.

2. A kernel that leaves the work to code that is not the student's: a call into a library that runs
   GPU kernels of its own (cuBLAS and the like), a library loaded at run time (dlopen), or a function
   of the harness or of another step that the reference solution of the step does not call (the
   harness's cuBLAS wrapper, another step's launcher). It is found in the compiled kernel object with
   `nm`: the symbols it needs from outside (undefined) and the ones it defines. This needs no GPU, so
   the no-GPU grade checks it too; it sees every call the code can make, whether or not a test shape
   takes that path (a trace of the kernels a run launches, with Nsight Compute or CUPTI, sees only the
   shapes it ran, needs the GPU and, often, profiling rights that an autograder container lacks); and
   linking the object without cuBLAS is the same test, made on the object's symbol table rather than
   by a link of its own. What it cannot see: a call through a function the reference also uses, such
   as the registry's find_step(), which steps 09 on use to hand shapes to their FALLBACK step.
"""
import re
import shutil
import subprocess
from pathlib import Path

from . import markers

# Libraries whose functions launch GPU kernels of their own, and the ways to reach one at run time.
FOREIGN_LIBRARY = re.compile(r"^(cublas|cublasLt|cudnn|cusparse|cusolver|cufft|curand|cutensor|nvrtc|nvJitLink)"
                             r"|^(dlopen|dlmopen|dlsym|dlvsym)$", re.IGNORECASE)
# Code of a GEMM library compiled into the object itself (its headers).
FOREIGN_CODE = re.compile(r"cutlass|\bcute::|cublas", re.IGNORECASE)
# The worklog's own functions: defined in the harness or in another step's kernel.
WORKLOG_FUNCTION = re.compile(r"^worklog::")


class ToolMissing(Exception):
    """nm is not installed: the symbol check cannot run."""


def handout_todos(text, path, level, handed_out=(), tasks=None):
    """(lines of the handout's kernel.cu, [(first line, number of lines) of each TODO block]) for
    the solution text of a step at `level`, in a release of the steps `handed_out`; `tasks`, the
    step's (tasks.load_tasks), give each TODO its lines."""
    lines, todos = markers.released_lines(text, path, level, handed_out, tasks)
    return lines, [(line, len(region.todo_lines())) for line, region in todos]


def _find_block(block, lines, start):
    """The first index >= start where `block` (a list of lines) appears in `lines`, or None."""
    if not block:
        return start
    for index in range(start, len(lines) - len(block) + 1):
        if lines[index:index + len(block)] == block:
            return index
    return None


def _longest_prefix_found(block, lines, start):
    """How many of block's first lines appear together at some index >= start."""
    best = 0
    for index in range(start, len(lines)):
        count = 0
        while count < len(block) and index + count < len(lines) and lines[index + count] == block[count]:
            count += 1
        best = max(best, count)
    return best


def changed_outside_todos(handout_lines, todos, submission_text, name="the handout's file"):
    """'' when the submission is the handout with each TODO block replaced by any lines; else one
    line saying where it is not: the first line of the handout before which, or at which, the
    submission adds, changes or removes lines outside the TODOs."""
    handout = [line.rstrip() for line in handout_lines]
    # LAB marker lines are comments: the solution tree keeps those of the regions a release at this
    # level does not blank, and a student may leave any; they are not compared.
    submitted = [line.rstrip() for line in submission_text.splitlines()
                 if not (markers.BEGIN.match(line) or markers.END.match(line))]
    # The handout's given parts: the lines between the TODO blocks, each with its first line number.
    segments, previous = [], 1
    for first, count in todos:
        segments.append((previous, handout[previous - 1:first - 1]))
        previous = first + count
    segments.append((previous, handout[previous - 1:]))

    def changed(line):
        return (f"line {line} of {name} ('{handout[line - 1].strip()}'): lines are added, changed or removed here, "
                "outside the TODOs")

    if not todos:
        if submitted == handout:
            return ""
        same = next((i for i, (a, b) in enumerate(zip(handout, submitted)) if a != b), min(len(handout), len(submitted)))
        return changed(same + 1) if same < len(handout) else f"lines were added to {name}, which has no TODO"
    position = 0
    for number, (first_line, block) in enumerate(segments):
        if number == 0:  # the part before the first TODO: the start of the file
            if submitted[:len(block)] != block:
                same = next(i for i, (a, b) in enumerate(zip(block, submitted + [None] * len(block))) if a != b)
                return changed(first_line + same)
            found = 0
        elif number == len(segments) - 1:  # the part after the last TODO: the end of the file
            found = len(submitted) - len(block)
            if found < position or submitted[found:] != block:
                tail = submitted[position:]
                same = 0
                while same < len(block) and same < len(tail) and block[-1 - same] == tail[-1 - same]:
                    same += 1
                return changed(first_line + len(block) - 1 - same)
        else:  # a part between two TODOs: anywhere after the previous part
            found = _find_block(block, submitted, position)
            if found is None:
                return changed(first_line + _longest_prefix_found(block, submitted, position))
        position = found + len(block)
    return ""


# ---- the symbol check -------------------------------------------------------------------------------

def symbols(object_path):
    """(undefined, defined) symbol names of an object file, demangled (nm -C)."""
    nm = shutil.which("nm")
    if nm is None:
        raise ToolMissing("nm (GNU binutils) is not on PATH: the grader checks the kernel object's symbols with it")
    undefined = subprocess.run([nm, "-u", "-C", str(object_path)], capture_output=True, text=True, check=True).stdout
    every = subprocess.run([nm, "-C", "--defined-only", str(object_path)], capture_output=True, text=True,
                           check=True).stdout
    return ({line.split(None, 1)[1].strip() for line in undefined.splitlines() if line.split()[1:]},
            {line.split(None, 2)[2].strip() for line in every.splitlines() if len(line.split(None, 2)) == 3})


def foreign_calls(submission_object, reference_object):
    """What the submission's kernel object uses that is not its own work: ["symbol (why)"]; []
    when nothing. reference_object: the same step's object built from the reference solution (the
    worklog functions it uses are allowed); None in a student's copy, which has no solution: then
    only foreign libraries and code are looked for."""
    undefined, defined = symbols(submission_object)
    allowed = symbols(reference_object)[0] if reference_object is not None else set()
    found = []
    for name in sorted(undefined - allowed):
        if FOREIGN_LIBRARY.match(name):
            found.append(f"{name} (a library that runs GPU kernels of its own, or loads one at run time)")
        elif WORKLOG_FUNCTION.match(name) and reference_object is not None:
            found.append(f"{name} (a function of the harness or of another step, which the reference solution "
                         "does not call)")
    for name in sorted(defined):
        if FOREIGN_CODE.search(name):
            found.append(f"{name} (code of a GEMM library compiled in)")
            break
    return found


def kernel_object(build_dir, step):
    """The compiled kernel.cu of a step in a CMake build folder (the object library <step>_kernel),
    or None."""
    found = sorted(Path(build_dir).glob(f"CMakeFiles/{step}_kernel.dir/**/kernel.cu.o"))
    return found[0] if found else None
