"""The tasks of a step's LAB regions: what a student is asked to write in each, kept beside the course
(lab/tasks/<step>.md), not in the kernels a reader reads.

A step's sources mark each region with its name (markers.py: `// LAB BEGIN <name> [level]`); its
task is the paragraph under the heading of that name in lab/tasks/<step>.md:

    # 07_async_pipeline: what each LAB region asks for

    (anything before the first `## ` heading is for the reader of the file)

    ## start_copies

    Start this thread's 16-byte copies of the slice into a_tile and b_tile (padded rows): ...
    ... the lines go behind the region's `// TODO:` as they are here, and into LAB.md.

One paragraph a task: its lines become the lines of the TODO, so a blank line inside one, a heading
that is no region's name, a name given twice and an empty task are refused (MarkerError, "file:line:
what"), as is a region without a task and a task without a region (steps.region_files checks both).
"""
import re
from pathlib import Path

from .markers import NAME, MarkerError

FOLDER = Path("lab") / "tasks"
HEADING = re.compile(r"^##[ \t]+(?P<name>\S+)[ \t]*$")


def tasks_path(step):
    """The tasks file of a step, relative to the tree's root: lab/tasks/<step>.md."""
    return FOLDER / f"{step}.md"


class Tasks:
    """The tasks of one step: texts {region name: [lines]}, lines {region name: its heading's line}."""

    def __init__(self, path, texts=None, lines=None):
        self.path, self.texts, self.lines = str(path), dict(texts or {}), dict(lines or {})

    def __contains__(self, name):
        return name in self.texts

    def __getitem__(self, name):
        return self.texts[name]


def parse_tasks(text, path):
    """The Tasks of a tasks file's text; MarkerError ("path:line: what") when it is malformed."""
    tasks = Tasks(path)
    current = None  # the name whose paragraph is being read
    ended = False   # a blank line after its paragraph: more text would be a second paragraph

    def close():
        if current is not None and not tasks.texts[current]:
            raise MarkerError(path, tasks.lines[current], f"the task '{current}' is empty")

    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith("#"):
            heading = HEADING.match(line)
            if not line.startswith("## "):
                if current is not None:
                    raise MarkerError(path, number, "a heading among the tasks that is not '## <region name>'")
                continue  # the file's title
            if not heading or not NAME.fullmatch(heading.group("name")):
                raise MarkerError(path, number, f"'{line.strip()}' is not a task heading: '## <region name>', the "
                                                "name its // LAB BEGIN line gives (lower case, digits, _)")
            close()
            current, ended = heading.group("name"), False
            if current in tasks.texts:
                raise MarkerError(path, number, f"the task '{current}' is given twice (also at line "
                                                f"{tasks.lines[current]})")
            tasks.texts[current], tasks.lines[current] = [], number
        elif current is None:
            continue  # the file's introduction
        elif not line.strip():
            ended = bool(tasks.texts[current])
        elif ended:
            raise MarkerError(path, number, f"the task '{current}' has a second paragraph: a task is one paragraph "
                                            "(its lines are the lines of the TODO)")
        else:
            tasks.texts[current].append(line.strip())
    close()
    return tasks


def load_tasks(root, step):
    """The Tasks of `step` in tree `root`; an empty Tasks when the tree has no tasks file for it."""
    relative = tasks_path(step)
    path = Path(root) / relative
    if not path.is_file():
        return Tasks(relative.as_posix())
    return parse_tasks(path.read_text(encoding="utf-8"), relative.as_posix())
