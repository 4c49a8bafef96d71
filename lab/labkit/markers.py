"""LAB regions: the part of a step's kernel.cu that a student writes.

A region is marked in the solution with comment lines of their own, which name it:

    // LAB BEGIN row_sum
    ...the solution...
    // LAB END

What the student is asked to write there, the region's task, is not in the kernel (a reader of the
kernel reads code, not the course's instructions): it is the paragraph under `## row_sum` in the
course's file of the step, lab/tasks/<step>.md (tasks.py), and a release puts it behind the TODO
that replaces the region. A name is lower case letters, digits and _, once per step.

A region has a difficulty level, named in brackets after its name; without one it is the easiest:

    // LAB BEGIN pipeline_loop [hard]
    ...
      // LAB BEGIN copy_slice                (an easy region inside the hard one)
      ...
      // LAB END
    ...
    // LAB END

The levels, easiest first, are LEVELS. A release is made at one level: every region of that level
or an easier one becomes its instruction behind a TODO (a region inside one that is blanked goes
with it), and a region of a harder level keeps its code, its markers removed, with the regions
inside it blanked by the same rule. So a harder level asks for everything an easier one asks for,
and more: the finer regions of the step's idea are the easy level, the idea itself the hard one.

Regions nest only that way: a region may hold regions of easier levels, never one of its own level
or a harder one. Any other comment that starts with "LAB" is a typo of a marker and is refused, so
that a misspelled END cannot silently swallow the rest of a file.

A later step often keeps an earlier step's solution in its own code (10's producer is 09's, with
other names; 08 keeps 07's pipeline). A release of the later step alone leaves that code as it is:
the earlier step is in the copy with its solution anyway. Handed out together with the earlier step,
the later step's copy would give that solution away, so the code is marked as repeating it:

    // LAB BEGIN arm_and_copy [easy, repeats 09 10]          (its task: "As in 10: arm full[s] ...")
    ...
    // LAB END

A repeat region is blanked like any region of its level, but only in a release that also hands out
one of the steps it names (by number or name); in any other release its code stays, its markers
removed. So handing out steps together asks for that code again where it recurs, and handing out
the later step alone asks for nothing more.
"""
import re
from dataclasses import dataclass, field

LEVELS = ("easy", "medium", "hard")
DEFAULT_LEVEL = LEVELS[0]

NAME = re.compile(r"[a-z][a-z0-9_]*")  # a region's name: its task's heading in lab/tasks/<step>.md
BEGIN = re.compile(r"^(?P<indent>[ \t]*)// LAB BEGIN[ \t]+(?P<name>[a-z][a-z0-9_]*)(?:[ \t]+\[(?P<tag>[^\]]*)\])?[ \t]*$")
END = re.compile(r"^[ \t]*// LAB END[ \t]*$")
# The markers of kits before the tasks moved out of the kernels: the instruction on the BEGIN line
# and on "// LAB:" lines after it. Refused, with where the text goes now.
OLD_MARKER = re.compile(r"//\s*LAB(?:\s+BEGIN\b[^\n]*:|:)")
# Anything that looks like a marker: a comment whose text starts with the word LAB.
LOOKS_LIKE_MARKER = re.compile(r"//\s*LAB\b")

TODO = "// TODO: "


class MarkerError(Exception):
    """A malformed region, located as path:line."""

    def __init__(self, path, line, message):
        super().__init__(f"{path}:{line}: {message}")
        self.path, self.line, self.message = path, line, message


def level_rank(level):
    return LEVELS.index(level)


REPEATS = "repeats"


def parse_tag(tag):
    """(level, steps repeated) of the text in a BEGIN line's brackets: "hard", "repeats 09 10" or
    "hard, repeats 09 10" (None: no brackets). ValueError says what is wrong."""
    if tag is None:
        return DEFAULT_LEVEL, ()
    level, repeats = None, None
    for part in tag.split(","):
        words = part.split()
        if words and words[0] == REPEATS:
            if repeats is not None or len(words) < 2:
                raise ValueError(f"'{part.strip()}': '{REPEATS}' names the earlier steps whose solution the region "
                                 f"repeats, once ([level, {REPEATS} 09 10])")
            repeats = tuple(words[1:])
        elif level is None and len(words) == 1 and words[0] in LEVELS:
            level = words[0]
        else:
            raise ValueError(f"unknown level '{part.strip()}' (levels, easiest first: {', '.join(LEVELS)}; "
                             f"// LAB BEGIN [level]: <instruction>, or [level, {REPEATS} <steps>])")
    return level or DEFAULT_LEVEL, repeats or ()


def names_step(word, step):
    """Whether a step named in a marker ("09" or "09_wgmma_tma") is `step` (a folder name)."""
    return word == step or word == step.split("_", 1)[0]


def check_level(level, where="--level"):
    """The level itself, or ValueError naming the known ones."""
    if level not in LEVELS:
        raise ValueError(f"{where}: unknown level '{level}' (levels, easiest first: {', '.join(LEVELS)})")
    return level


@dataclass
class Region:
    path: str          # as given to parse_regions, for messages
    begin_line: int    # 1-based line of "// LAB BEGIN"
    end_line: int      # 1-based line of "// LAB END"
    indent: str
    name: str = ""     # its task's name (lab/tasks/<step>.md)
    instruction: list = field(default_factory=list)  # its task's lines, when parsed with the step's tasks
    solution: list = field(default_factory=list)     # the code lines inside the region (markers of inner regions left out)
    level: str = DEFAULT_LEVEL
    inner: list = field(default_factory=list)        # the regions directly inside this one
    marker_lines: int = 0                            # the BEGIN line (END is one more)
    solution_lines: list = field(default_factory=list)  # the 1-based line in the file of each solution line
    repeats: tuple = ()  # a repeat region: the earlier steps whose solution it repeats (as the marker names them)

    def blanked_with(self, handed_out):
        """Whether a release that hands out `handed_out` (step folder names) may blank this region:
        always, unless it is a repeat region whose steps are none of them."""
        return not self.repeats or any(names_step(word, step) for word in self.repeats for step in handed_out)

    def todo_lines(self):
        """The student's version of the region: the instruction behind a TODO."""
        if not self.instruction:  # parsed without its step's tasks: a bug of the caller, not of the file
            raise MarkerError(self.path, self.begin_line, f"the region '{self.name}' was read without its task")
        pad = self.indent + "//" + " " * (len(TODO) - 2)
        return [self.indent + TODO + self.instruction[0]] + [pad + more for more in self.instruction[1:]]

    def walk(self):
        """This region and every region inside it, outer first."""
        yield self
        for region in self.inner:
            yield from region.walk()


def parse_regions(text, path, tasks=None):
    """The outermost regions of one file, in order (each with the regions inside it in .inner), each
    with its task's lines from `tasks` (tasks.Tasks of the file's step; None: names only). Raises
    MarkerError on the first malformed marker, a name given twice, or a region `tasks` has no task for."""
    regions = []
    open_regions = []  # the regions open at this line, outermost first
    named = {}         # {name: its BEGIN line}
    for number, line in enumerate(text.splitlines(), start=1):
        begin, end = BEGIN.match(line), END.match(line)
        current = open_regions[-1] if open_regions else None
        if begin:
            try:
                level, repeats = parse_tag(begin.group("tag"))
            except ValueError as e:
                raise MarkerError(path, number, str(e)) from None
            if current and level_rank(level) >= level_rank(current.level):
                raise MarkerError(path, number, f"a {level} region inside the {current.level} region opened at line "
                                                f"{current.begin_line} (regions nest only when the inner one is easier; "
                                                "close it with // LAB END first)")
            name = begin.group("name")
            if name in named:
                raise MarkerError(path, number, f"the region name '{name}' is used twice (also at line {named[name]}); "
                                                "each region names its own task")
            named[name] = number
            instruction = []
            if tasks is not None:
                if name not in tasks:
                    raise MarkerError(path, number, f"the region '{name}' has no task in {tasks.path} (a '## {name}' "
                                                    "heading and the paragraph that says what to write)")
                instruction = list(tasks[name])
            region = Region(path, number, 0, begin.group("indent"), name, instruction, level=level, marker_lines=1,
                            repeats=repeats)
            (current.inner if current else regions).append(region)
            open_regions.append(region)
        elif end:
            if not current:
                raise MarkerError(path, number, "LAB END without a LAB BEGIN before it")
            if not any(solution_line.strip() for solution_line in current.solution):
                raise MarkerError(path, number, f"the region opened at line {current.begin_line} is empty")
            current.end_line = number
            open_regions.pop()
        elif OLD_MARKER.search(line):
            raise MarkerError(path, number, "an instruction in the kernel: a region's task is in lab/tasks/<step>.md, "
                                            "under '## <name>', and its marker only names it: '// LAB BEGIN <name>' "
                                            "or '// LAB BEGIN <name> [level]'")
        elif LOOKS_LIKE_MARKER.search(line):
            raise MarkerError(path, number, "not a LAB marker: markers are whole lines, exactly '// LAB BEGIN <name>', "
                                            "'// LAB BEGIN <name> [level]' or '// LAB END' (a name: lower case, "
                                            "digits, _)")
        else:
            for region in open_regions:
                region.solution.append(line)
                region.solution_lines.append(number)
    if open_regions:
        raise MarkerError(path, open_regions[-1].begin_line, "LAB BEGIN is never closed by a // LAB END")
    return regions


def all_regions(regions):
    """Every region, inner ones too, in the order of their BEGIN lines."""
    return [r for outer in regions for r in outer.walk()]


def blanked_regions(regions, level=DEFAULT_LEVEL, handed_out=()):
    """The regions a release at `level` that hands out the steps `handed_out` (folder names)
    replaces by their TODO: those of that level or an easier one that no other such region holds,
    in order; a repeat region only where one of the steps it repeats is handed out too."""
    rank = level_rank(check_level(level))
    found = []
    for region in regions:
        if level_rank(region.level) <= rank and region.blanked_with(handed_out):
            found.append(region)
        else:
            found += blanked_regions(region.inner, level, handed_out)
    return found


def levels_in(regions):
    """The levels the regions use, easiest first."""
    used = {r.level for r in all_regions(regions)}
    return [level for level in LEVELS if level in used]


def released_lines(text, path, level=DEFAULT_LEVEL, handed_out=(), tasks=None):
    """(the lines of the file as a release at `level` of the steps `handed_out` hands it out,
    [(line of each TODO in them, its region)]). Every marker line is gone: a blanked region becomes
    its TODO, its task from `tasks` (the step's, tasks.load_tasks), a harder one (or a repeat region
    whose steps are not handed out) keeps its code. Raises MarkerError."""
    regions = parse_regions(text, path, tasks)
    lines = text.splitlines()
    replaced = {r.begin_line: r for r in blanked_regions(regions, level, handed_out)}
    marker_lines = set()
    for region in all_regions(regions):
        marker_lines.update(range(region.begin_line, region.begin_line + region.marker_lines))
        marker_lines.add(region.end_line)
    out, todos = [], []
    number = 1
    while number <= len(lines):
        if number in replaced:
            region = replaced[number]
            todos.append((len(out) + 1, region))
            out += region.todo_lines()
            number = region.end_line + 1
            continue
        if number not in marker_lines:
            out.append(lines[number - 1])
        number += 1
    return out, todos


def student_version(text, path, level=DEFAULT_LEVEL, handed_out=(), tasks=None):
    """(the file as a release at `level` of the steps `handed_out` hands it out, the regions it
    blanks, each TODO with its task from `tasks`). Raises MarkerError."""
    out, todos = released_lines(text, path, level, handed_out, tasks)
    trailing_newline = "\n" if text.endswith("\n") else ""
    return "\n".join(out) + trailing_newline, [region for _, region in todos]
