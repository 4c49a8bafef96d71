"""LAB regions: the part of a step's kernel.cu that a student writes.

A region is marked in the solution with comment lines of their own:

    // LAB BEGIN: what to write (one line)
    // LAB: optional further lines of the instruction, right after BEGIN
    ...the solution...
    // LAB END

In the student's copy the region becomes its instruction behind a TODO, at the indentation of the
BEGIN line. Regions do not nest. Any other comment that starts with "LAB" is a typo of a marker and
is refused, so that a misspelled END cannot silently swallow the rest of a file.
"""
import re
from dataclasses import dataclass, field

BEGIN = re.compile(r"^(?P<indent>[ \t]*)// LAB BEGIN:(?P<text>.*)$")
CONTINUATION = re.compile(r"^[ \t]*// LAB:(?P<text>.*)$")
END = re.compile(r"^[ \t]*// LAB END[ \t]*$")
# Anything that looks like a marker: a comment whose text starts with the word LAB.
LOOKS_LIKE_MARKER = re.compile(r"//\s*LAB\b")

TODO = "// TODO: "


class MarkerError(Exception):
    """A malformed region, located as path:line."""

    def __init__(self, path, line, message):
        super().__init__(f"{path}:{line}: {message}")
        self.path, self.line, self.message = path, line, message


@dataclass
class Region:
    path: str          # as given to parse_regions, for messages
    begin_line: int    # 1-based line of "// LAB BEGIN:"
    end_line: int      # 1-based line of "// LAB END"
    indent: str
    instruction: list = field(default_factory=list)  # the BEGIN text, then each "// LAB:" line
    solution: list = field(default_factory=list)     # the lines strictly inside the region

    def todo_lines(self):
        """The student's version of the region: the instruction behind a TODO."""
        pad = self.indent + "//" + " " * (len(TODO) - 2)
        return [self.indent + TODO + self.instruction[0]] + [pad + more for more in self.instruction[1:]]


def parse_regions(text, path):
    """The regions of one file, in order. Raises MarkerError on the first malformed marker."""
    regions = []
    current = None
    instruction_open = False  # "// LAB:" lines may follow BEGIN until the first other line
    for number, line in enumerate(text.splitlines(), start=1):
        begin, continuation, end = BEGIN.match(line), CONTINUATION.match(line), END.match(line)
        if begin:
            if current:
                raise MarkerError(path, number, f"LAB BEGIN inside the region opened at line {current.begin_line} "
                                                "(regions do not nest; close it with // LAB END first)")
            instruction = begin.group("text").strip()
            if not instruction:
                raise MarkerError(path, number, "LAB BEGIN needs an instruction: // LAB BEGIN: <what to write>")
            current = Region(path, number, 0, begin.group("indent"), [instruction])
            instruction_open = True
        elif continuation:
            if not (current and instruction_open):
                raise MarkerError(path, number, "a '// LAB:' line continues an instruction, so it must follow "
                                                "// LAB BEGIN or another '// LAB:' line")
            more = continuation.group("text").strip()
            if not more:
                raise MarkerError(path, number, "empty '// LAB:' line")
            current.instruction.append(more)
        elif end:
            if not current:
                raise MarkerError(path, number, "LAB END without a LAB BEGIN before it")
            if not any(solution_line.strip() for solution_line in current.solution):
                raise MarkerError(path, number, f"the region opened at line {current.begin_line} is empty")
            current.end_line = number
            regions.append(current)
            current = None
        elif LOOKS_LIKE_MARKER.search(line):
            raise MarkerError(path, number, "not a LAB marker: markers are whole lines, exactly '// LAB BEGIN: "
                                            "<instruction>', '// LAB: <more instruction>' or '// LAB END'")
        elif current:
            current.solution.append(line)
            instruction_open = False
    if current:
        raise MarkerError(path, current.begin_line, "LAB BEGIN is never closed by a // LAB END")
    return regions


def student_version(text, path):
    """(the file with every region replaced by its TODO, the regions). Raises MarkerError."""
    regions = parse_regions(text, path)
    lines = text.splitlines()
    out = []
    previous_end = 0
    for region in regions:
        out += lines[previous_end:region.begin_line - 1]
        out += region.todo_lines()
        previous_end = region.end_line
    out += lines[previous_end:]
    trailing_newline = "\n" if text.endswith("\n") else ""
    return "\n".join(out) + trailing_newline, regions
