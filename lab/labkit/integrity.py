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
   as the general kernel's general::launch, to which steps 09 on hand what TMA cannot describe.
"""
import difflib
import os
import re
import shutil
import subprocess
from pathlib import Path

from . import exit_codes, markers

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


# ---- the same comparison after clang-format -----------------------------------------------------------
#
# A student's editor may reformat the whole file. So where the file differs from the handout as
# written, both are formatted with the project's .clang-format (the reference tree's, found from the
# file's path) and compared again, each line with its spacing collapsed and blank lines left out. The
# same code, formatted otherwise, passes; what still differs is a change outside the TODOs, each line
# of it named (changed_lines), which the rubric prices per line (rubric.json, "integrity").

SENTINEL = "// lab-todo-block-{}"
SENTINEL_LINE = re.compile(r"^\s*// lab-todo-block-(\d+)\s*$")


def clang_format_tool():
    """The clang-format program: $LAB_CLANG_FORMAT, else clang-format on PATH, else clang-format-NN
    (the newest found); None when there is none (LAB_CLANG_FORMAT=none: none, on purpose)."""
    chosen = os.environ.get("LAB_CLANG_FORMAT")
    if chosen:
        return None if chosen == "none" else shutil.which(chosen)
    found = shutil.which("clang-format")
    if found:
        return found
    for version in range(20, 9, -1):
        found = shutil.which(f"clang-format-{version}")
        if found:
            return found
    return None


def formatted(text, path_in_tree, tool):
    """`text` formatted as the file at `path_in_tree` would be (its tree's .clang-format; no
    formatting where the tree has none); None when clang-format fails."""
    try:
        done = subprocess.run([tool, "--style=file", "--fallback-style=none", f"--assume-filename={path_in_tree}"],
                              input=text, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == exit_codes.EXIT_OK else None


UNIT = re.compile(r"""("(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|[A-Za-z_]\w*|\d[\w.]*|::|->|<<=|>>=|<<|>>|<=|>=|==|!=|&&"""
                  r"""|\|\||\+\+|--|[-+*/%&|^]=|[^\s\w])""")


def units(lines):
    """[(unit, index of its line)]: the code's tokens, and the words of its // comments (marked, so
    that a word is never a token); spacing, line breaks and a comment's reflow do not change them."""
    found = []
    for index, line in enumerate(lines):
        sentinel = SENTINEL_LINE.match(line)
        if sentinel:
            found.append((f"@todo{sentinel.group(1)}", index))
            continue
        code, comment = line, ""
        position = _comment_start(line)
        if position is not None:
            code, comment = line[:position], line[position + 2:]
        found += [(token, index) for token in UNIT.findall(code)]
        found += [("//" + word, index) for word in comment.split()]
    return found


def _comment_start(line):
    """Where a // comment starts on a line, outside string literals; None without one."""
    quote = None
    index = 0
    while index < len(line):
        char = line[index]
        if quote:
            if char == "\\":
                index += 1
            elif char == quote:
                quote = None
        elif char in "\"'":
            quote = char
        elif line.startswith("//", index):
            return index
        index += 1
    return None


def _without_markers(text):
    return "\n".join(line for line in text.splitlines()
                     if not (markers.BEGIN.match(line) or markers.END.match(line))) + "\n"


def compare_formatted(handout_lines, todos, submission_text, path_in_tree, tool, name="the handout's file"):
    """Compares after formatting both with clang-format, token by token (a comment word by word).
    Returns (problem, changed): problem '' when the submission is the handout with each TODO
    replaced by any code, formatting aside; else the first place it is not. changed: [{"line":
    handout line or None, "handout": its text or None, "submission": the submitted line or None}],
    one per line changed, removed or added outside the TODOs. (None, None) when clang-format fails:
    the caller keeps the comparison as written."""
    with_sentinels, origin, previous = [], [], 1
    for number, (first, count) in enumerate(todos):
        with_sentinels += handout_lines[previous - 1:first - 1]
        origin += list(range(previous, first))
        indent = handout_lines[first - 1][:len(handout_lines[first - 1]) - len(handout_lines[first - 1].lstrip())]
        with_sentinels.append(indent + SENTINEL.format(number))
        origin.append(first)
        previous = first + count
    with_sentinels += handout_lines[previous - 1:]
    origin += list(range(previous, len(handout_lines) + 1))

    handout_text = formatted("\n".join(with_sentinels) + "\n", path_in_tree, tool)
    submitted = formatted(_without_markers(submission_text), path_in_tree, tool)
    if handout_text is None or submitted is None:
        return None, None
    u_lines = submitted.splitlines()
    h_units, u_units = units(handout_text.splitlines()), units(u_lines)
    # Each unit of the formatted handout, back to its line in the handout as the student got it.
    raw = units(with_sentinels)
    back = {}
    matcher = difflib.SequenceMatcher(None, [u for u, _ in raw], [u for u, _ in h_units], autojunk=False)
    for block in matcher.get_matching_blocks():
        for offset in range(block.size):
            back[block.b + offset] = origin[raw[block.a + offset][1]]

    plain, theirs = [u for u, _ in h_units], [u for u, _ in u_units]
    sentinels = {i for i, u in enumerate(plain) if u.startswith("@todo")}
    # Pass or fail: the segment comparison of changed_outside_todos, one unit a "line".
    problem = changed_outside_todos(plain, [(i + 1, 1) for i in sorted(sentinels)], "\n".join(theirs), name)
    if not problem:
        return "", []
    changed, seen = [], set()

    def note(line, submitted_line):
        key = (line, submitted_line)
        if key in seen:
            return
        seen.add(key)
        changed.append({"line": line, "handout": handout_lines[line - 1].strip() if line else None,
                        "submission": u_lines[submitted_line].strip() if submitted_line is not None else None})

    matcher = difflib.SequenceMatcher(None, plain, theirs, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        given = [i for i in range(i1, i2) if i not in sentinels]
        touches_todo = any(i in sentinels for i in range(i1, i2)) or (i1 - 1 in sentinels) or (i2 in sentinels)
        if touches_todo and (tag == "insert" or not given):
            continue  # the student's code in place of a TODO
        lines = sorted({back.get(i) for i in given} - {None})
        added = sorted({u_units[j][1] for j in range(j1, j2)})
        if not lines and added:
            # Tokens added to a line that is otherwise the handout's: that line is changed.
            if j1 > 0 and i1 > 0 and u_units[j1 - 1][1] == added[0]:
                lines = [back.get(i1 - 1)] if back.get(i1 - 1) else []
            elif j2 < len(u_units) and i2 < len(plain) and u_units[j2][1] == added[-1]:
                lines = [back.get(i2)] if back.get(i2) else []
        if lines:
            for position, line in enumerate(lines):
                note(line, added[position] if position < len(added) and not touches_todo else None)
        else:
            for submitted_line in added:
                note(None, submitted_line)
    # A line counts once, however many of its tokens changed.
    by_line = {}
    for change in changed:
        key = change["line"] if change["line"] else ("added", change["submission"])
        by_line.setdefault(key, change)
    changed = list(by_line.values())
    if not changed:
        changed.append({"line": None, "handout": None, "submission": None,
                        "note": "the given lines are in another order"})
    first = changed[0]
    if first["line"]:
        problem = (f"line {first['line']} of {name} ('{first['handout']}'): lines are added, changed or removed here, "
                   "outside the TODOs (compared after clang-format)")
    else:
        problem = f"{name}: {describe_changes(changed, 1)}, outside the TODOs (compared after clang-format)"
    return problem, changed


def describe_changes(changed, limit=8):
    """One line per changed line, at most `limit`: "line 42 ('x = 1;') is now 'x = 2;'"."""
    out = []
    for change in changed[:limit]:
        where = f"line {change['line']}" if change.get("line") else "a line"
        if change.get("handout") is not None and change.get("submission") is not None:
            out.append(f"{where} ('{change['handout']}') is now '{change['submission']}'")
        elif change.get("handout") is not None:
            out.append(f"{where} ('{change['handout']}') is removed")
        elif change.get("submission") is not None:
            out.append(f"'{change['submission']}' is added")
        else:
            out.append(change.get("note", "the order of the given lines changed"))
    if len(changed) > limit:
        out.append(f"and {len(changed) - limit} more")
    return "; ".join(out)


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
