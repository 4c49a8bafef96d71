"""The course around a step: its handout for the students, and the instructor's key.

The course's files are lab/course/<step>.md, one per step (a step without one gets a handout made
from the template alone: its tasks, its README's "Predict, then measure", what is graded). A course
file is Markdown whose level-2 headings are its sections, in any order:

    # 02_block_tiling: the course                (a title: for the reader of the file)

    ## Time                   one paragraph: how long the step takes
    ## Objectives             a list: what a student can do after it
    ## Read first             a list: the step's README, the tutorials, the pages of docs/
    ## Task                   the goals and the constraints (not the lines to type)
    ## Question: <title>      one per question, three to five of them
    (the question)
    ### Answer
    (the answer: into the key, never into the handout)
    ## Predict, then measure: <title>     at least one
    (what to predict, then a ```sh block whose commands measure it: build/bin/<step> ...)
    ### Answer
    (the answer, with the figures it cites: {{figure ...}}, below)

Everything under a `### Answer` heading, up to the next `## ` heading, is the key's; the rest is the
handout's. A release writes the handout of each step it hands out to lab/handouts/<step>.md and takes
out of each handed-out step's README.md its folded answers (`<details>` ... `</details>`), which
go to the key too, with a line saying so in their place. `lab.py key` (or `release --key DIR`)
writes the key, KEY.md, beside the release, never into it.

An answer cites a measured figure as {{figure FILE column=COLUMN key=value ... [agg=median]
[format=SPEC]}}: the value of COLUMN in the last row of plots/results/FILE whose columns have those
values, or the median over those rows (format: a Python format spec such as .1f). The key is made from the committed results, so its figures are
those of the READMEs' tables.
"""
import csv
import re
from dataclasses import dataclass, field
from pathlib import Path

from .markers import MarkerError
from .rubric import performance_size, shape_text

FOLDER = Path("lab") / "course"
HANDOUTS = Path("lab") / "handouts"
RESULTS = Path("plots") / "results"
KEY_FILE = "KEY.md"
SECTIONS = ("Time", "Objectives", "Read first", "Task")
QUESTION, PREDICT, ANSWER = "Question:", "Predict, then measure:", "### Answer"
MIN_QUESTIONS, MAX_QUESTIONS = 3, 5
FIGURE = re.compile(r"\{\{figure\s+(?P<file>[\w.-]+\.csv)(?P<args>(?:\s+[\w]+=[^\s}]*)+)\s*\}\}")
DETAILS = re.compile(r"^[ \t]*<details>.*?^[ \t]*</details>[ \t]*\n?", re.DOTALL | re.MULTILINE)
SUMMARY = re.compile(r"<summary>(.*?)</summary>", re.DOTALL)
IN_THE_KEY = "*The answer is in the instructor's key.*\n"


def course_path(step):
    return FOLDER / f"{step}.md"


@dataclass
class Item:
    """A question or a predict-then-measure item: its title, its text (the handout's) and its answer
    (the key's); commands: the lines of its sh blocks."""
    kind: str
    title: str
    text: list = field(default_factory=list)
    answer: list = field(default_factory=list)
    line: int = 0

    def commands(self):
        found, inside = [], False
        for line in self.text:
            if line.strip().startswith("```"):
                inside = not inside and line.strip() in ("```sh", "```bash")
                continue
            if inside and line.strip() and not line.strip().startswith("#"):
                found.append(line.strip())
        return found


@dataclass
class Course:
    path: str
    sections: dict = field(default_factory=dict)   # {"Time": [lines], ...}
    items: list = field(default_factory=list)      # Items, in order

    @property
    def questions(self):
        return [i for i in self.items if i.kind == QUESTION]

    @property
    def predictions(self):
        return [i for i in self.items if i.kind == PREDICT]


def _trim(lines):
    while lines and not lines[0].strip():
        lines = lines[1:]
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    return lines


def parse_course(text, path, step=None):
    """The Course of a course file's text; MarkerError ("path:line: what") where it is malformed:
    an unknown section, a section given twice or missing, an item without its answer, too few or too
    many questions, no predict-then-measure item, or one without a command that runs `step`."""
    course = Course(str(path))
    current, target, seen = None, None, {}
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith("## "):
            title = line[3:].strip()
            kind = next((k for k in (QUESTION, PREDICT) if title.startswith(k)), None)
            if kind:
                current = Item(kind, title[len(kind):].strip(), line=number)
                if not current.title:
                    raise MarkerError(path, number, f"'{kind}' needs a title after it")
                course.items.append(current)
                target = current.text
            elif title in SECTIONS:
                if title in seen:
                    raise MarkerError(path, number, f"the section '{title}' is given twice (also at line {seen[title]})")
                seen[title] = number
                current, target = None, course.sections.setdefault(title, [])
            else:
                raise MarkerError(path, number, f"unknown section '{title}' (sections: {', '.join(SECTIONS)}, "
                                                f"'{QUESTION} <title>', '{PREDICT} <title>')")
        elif line.strip() == ANSWER:
            if current is None or target is current.answer:
                raise MarkerError(path, number, "an answer belongs under a question or a predict-then-measure item, "
                                                "once")
            target = current.answer
        elif line.startswith("#") and not line.startswith("# ") and not line.startswith("###"):
            raise MarkerError(path, number, f"'{line.strip()}': not a heading of a course file")
        elif target is not None:
            target.append(line)
    for title in SECTIONS:
        if not _trim(course.sections.get(title, [])):
            raise MarkerError(path, 1, f"the section '## {title}' is missing or empty")
    for item in course.items:
        item.text, item.answer = _trim(item.text), _trim(item.answer)
        if not item.text or not item.answer:
            raise MarkerError(path, item.line, f"'{item.kind} {item.title}' needs its text and, under '{ANSWER}', "
                                               "its answer")
    count = len(course.questions)
    if not MIN_QUESTIONS <= count <= MAX_QUESTIONS:
        raise MarkerError(path, 1, f"{count} question(s): a handout asks {MIN_QUESTIONS} to {MAX_QUESTIONS}")
    if not course.predictions:
        raise MarkerError(path, 1, f"no '## {PREDICT} <title>' item: a handout has at least one")
    for item in course.predictions:
        runs = [c for c in item.commands() if step is None or c.startswith(f"build/bin/{step}")]
        if not runs:
            raise MarkerError(path, item.line, f"'{PREDICT} {item.title}' has no ```sh block with the command that "
                                               f"measures it (build/bin/{step or '<step>'} ...)")
    return course


def load_course(root, step):
    """The step's Course, or None where the tree has no course file for it."""
    path = Path(root) / course_path(step)
    if not path.is_file():
        return None
    return parse_course(path.read_text(encoding="utf-8"), course_path(step).as_posix(), step)


# ---- a README's folded answers ---------------------------------------------------------------------

def split_readme(text):
    """(the README without its folded answers, [(heading the fold is under, its text)]). Each
    `<details>` ... `</details>` block is replaced by a line saying the answer is in the key."""
    answers = []
    heading = ""
    out, position = [], 0
    for match in DETAILS.finditer(text):
        before = text[position:match.start()]
        headings = [line for line in (text[:match.start()]).splitlines() if line.startswith("#")]
        heading = headings[-1].lstrip("#").strip() if headings else ""
        block = match.group(0)
        summary = SUMMARY.search(block)
        body = SUMMARY.sub("", block, count=1) if summary else block
        body = re.sub(r"</?details>", "", body).strip("\n")
        answers.append((heading, body.strip()))
        out += [before, IN_THE_KEY]
        position = match.end()
    out.append(text[position:])
    return "".join(out), answers


def readme_predict(text):
    """The README's own "## Predict, then measure" section without its fold (for a handout made
    from the template alone), or []."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip() == "## Predict, then measure"), None)
    if start is None:
        return []
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    section, _ = split_readme("\n".join(lines[start + 1:end]) + "\n")
    return _trim([line for line in section.splitlines() if line.strip() != IN_THE_KEY.strip()])


# ---- figures from the committed results ------------------------------------------------------------

def resolve_figures(text, root, where):
    """The text with each {{figure ...}} replaced by its value; MarkerError where one names no file,
    no column, or no row."""
    def value(match):
        args = dict(a.split("=", 1) for a in match.group("args").split())
        column, spec, agg = args.pop("column", None), args.pop("format", ""), args.pop("agg", "last")
        path = Path(root) / RESULTS / match.group("file")
        if column is None or not path.is_file():
            raise MarkerError(where, 0, f"{match.group(0)}: needs column= and a file of {RESULTS.as_posix()}")
        with path.open(encoding="utf-8", newline="") as f:
            rows = [r for r in csv.DictReader(f) if all(r.get(k) == v for k, v in args.items())]
        if not rows or column not in rows[-1]:
            raise MarkerError(where, 0, f"{match.group(0)}: no row of {path.name} has those values and the column")
        cell = rows[-1][column]
        if agg == "median":
            values = sorted(float(r[column]) for r in rows)
            middle = len(values) // 2
            cell = str(values[middle] if len(values) % 2 else (values[middle - 1] + values[middle]) / 2)
        if spec:
            try:
                return format(float(cell), spec)
            except ValueError:
                return cell
        return cell
    return FIGURE.sub(value, text)


# ---- the handout -----------------------------------------------------------------------------------

def _points(value):
    return f"{value:g}"


def graded_section(step, rubric, files, level):
    """What is graded, from the rubric, for one step (lines of Markdown)."""
    correctness, sanitizer, perf = rubric["correctness"], rubric["sanitizer"], rubric["performance"]
    checks = rubric.get("checks", {})
    integrity = rubric.get("integrity", {})
    size = shape_text(performance_size(rubric, step))
    total = correctness["points"] + sanitizer["points"] + perf["points"] + sum(checks.values())
    lines = [f"The grader scores this step out of {_points(total)} points, from "
             + ", ".join(f"`{f}`" for f in files) + f" alone (level {level}):", ""]
    if checks:
        lines.append(f"- **without a GPU** (your own `lab.py grade --no-gpu` too): it builds, "
                     f"{_points(checks.get('build', 0))}; only the TODOs changed, "
                     f"{_points(checks.get('integrity', 0))}; the tests that run on the CPU, "
                     f"{_points(checks.get('host_tests', 0))};")
    lines += [
        f"- **correctness**, {_points(correctness['points'])}: the share of cases that match cuBLAS, the standard "
        "ones of `gpu_tests --list-cases` and the instructor's hidden ones;",
        f"- **compute-sanitizer**, {_points(sanitizer['points'])}: {' and '.join(sanitizer['tools'])} clean on odd "
        "shapes" + (", once a case passes" if sanitizer.get("requires_a_passing_case") else "") + ";",
        f"- **performance**, {_points(perf['points'])}: your speed at {size} against the instructor's solution, "
        f"full points from {perf['full_at']:.0%} of its speed, none at {perf['zero_at']:.0%}; only when every case "
        "passes.",
        "",
    ]
    if integrity:
        lines.append("Reformatting the file is fine: the grader compares it with the handout after formatting both "
                     "with the project's `.clang-format`. Each line changed outside the TODOs costs "
                     f"{_points(integrity.get('per_changed_line', 0))} points and is named in the report; more than "
                     f"{integrity.get('refuse_above_lines', 0)} such lines and the step is refused (0).")
    else:
        lines.append("Change nothing outside the TODOs: a file that differs from the handout elsewhere is refused.")
    lines += ["", "The kit does not grade the answers to this handout's questions and predictions; your course "
              "says whether they are handed in, as the written part of the assignment, and how they count."]
    return lines


def handout_markdown(root, step, title, course, rubric, files, todos, level, readme_text=""):
    """The handout of one step (Markdown): from its course file, or from the template alone."""
    heading = f"# {step}" + (f" — {title}" if title else "") + ": handout"
    lines = [heading, ""]
    if course is None:
        lines += ["*No course file for this step yet (`lab/course/" + step + ".md`): this handout is the "
                  "template's, from the step's tasks and README.*", ""]
    sections = course.sections if course else {}

    def section(name, fallback):
        lines.extend([f"## {name}", ""] + (sections.get(name) and _trim(sections[name]) or fallback) + [""])

    section("Time", ["Plan for the step's README (an hour) and the TODOs below; your instructor sets the time."])
    section("Objectives", [f"- explain the idea of {step}, as its README states it, and the counter that shows it;",
                           "- write the code its TODOs ask for, correct on every shape."])
    section("Read first", [f"- `{step}/README.md`: the idea, the arithmetic and the measurements;",
                           "- `docs/glossary.md`, for the terms the README links."])
    section("Task", ["Write the code of each TODO (below) so that the step's tests pass on every shape."])
    lines += ["## Where you write it", ""]
    for where, instruction in todos:
        lines.append(f"- {where}: {instruction}")
    lines.append("")
    if course:
        lines += ["## Questions", ""]
        for number, item in enumerate(course.questions, start=1):
            lines += [f"{number}. **{item.title}.** " + item.text[0]] + [("   " + t) if t.strip() else ""
                                                                         for t in item.text[1:]] + [""]
        for item in course.predictions:
            lines += [f"## Predict, then measure: {item.title}", ""] + item.text + [""]
            lines += ["Write your prediction down, with the arithmetic, before you run the commands; then say "
                      "where the measurement differs and why.", ""]
    else:
        predict = readme_predict(readme_text)
        lines += ["## Predict, then measure", ""]
        lines += predict + [""] if predict else [f"Predict the TFLOP/s of your kernel at 4096³ from the README's "
                                                 "arithmetic, then measure:", "", "```sh",
                                                 f"build/bin/{step} --m 4096 --n 4096 --k 4096", "```", ""]
    lines += ["## What is graded", ""] + graded_section(step, rubric, files, level) + [""]
    return resolve_figures("\n".join(lines), root, f"the handout of {step}")


# ---- the key -----------------------------------------------------------------------------------------

def key_markdown(root, steps, commit=None):
    """KEY.md for the steps: per step, each question and predict-then-measure item with its answer,
    then the README's folded answers; figures resolved from the committed results."""
    lines = ["# Instructor's key", "",
             "Not for students: the answers to the handouts' questions, and the answers folded in the READMEs, "
             "which the release took out of the students' copy." + (f" Made from commit {commit[:12]}." if commit
                                                                       else ""), ""]
    for step in steps:
        course = load_course(root, step)
        lines += [f"## {step}", ""]
        if course:
            for number, item in enumerate(course.questions, start=1):
                lines += [f"### Question {number}: {item.title}", ""] + item.text + ["", "**Answer.**", ""]
                lines += item.answer + [""]
            for item in course.predictions:
                lines += [f"### Predict, then measure: {item.title}", ""] + item.text + ["", "**Answer.**", ""]
                lines += item.answer + [""]
        readme = Path(root) / step / "README.md"
        if readme.is_file():
            for heading, answer in split_readme(readme.read_text(encoding="utf-8"))[1]:
                lines += [f"### From {step}/README.md, \"{heading}\"", "", answer, ""]
        if not course and len(lines) and lines[-2] == f"## {step}":
            lines += ["No course file and no folded answer for this step.", ""]
    return resolve_figures("\n".join(lines), root, "KEY.md")


def answer_texts(root, steps):
    """Every answer of the steps, as text (the course files' and the READMEs' folds): what no release
    may hold."""
    found = []
    for step in steps:
        course = load_course(root, step)
        if course:
            found += [resolve_figures("\n".join(item.answer), root, course.path) for item in course.items]
        readme = Path(root) / step / "README.md"
        if readme.is_file():
            found += [answer for _, answer in split_readme(readme.read_text(encoding="utf-8"))[1]]
    return found


def sentences(text, minimum=40):
    """The sentences of a text that are long enough to be telling (for the test that no answer is in
    a release), markup collapsed."""
    flat = " ".join(re.sub(r"<!--.*?-->|[*`]", "", text, flags=re.DOTALL).split())
    return [s.strip() for s in re.split(r"(?<=[.?!:;])\s+", flat) if len(s.strip()) >= minimum]
