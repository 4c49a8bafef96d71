#!/usr/bin/env python3
"""The course lab kit: student copies made from the solutions, and a grader. Instructors: see
lab/README.md. Python standard library only.

    python3 lab/lab.py release --steps 02,04 --out DIR [--keep 05] [--rubric FILE] [--source DIR] [--key DIR]
    python3 lab/lab.py key --steps 02,04 --out DIR [--source DIR]
    python3 lab/lab.py grade --submission DIR --steps 02,04 --out DIR [--reference DIR] [--level L]
                             [--handed-out STEPS] [--rubric FILE] [--cases FILE] [--work DIR] [--jobs N]
                             [--no-gpu]
    python3 lab/lab.py collect --grades DIR --out FILE.csv [--roster FILE] [--assignment NAME]
    python3 lab/lab.py check [--steps all] [--source DIR]

Steps are numbers (02) or names (02_block_tiling), comma-separated, or "all" (every step with LAB
regions). A release leaves out every step after the first one it hands out, unless --keep names
it: later steps build on earlier ones, so their code carries the solutions.
Exit codes, the worklog's own (common/exit_codes.hpp, read through common/exit_codes.py):
  0   exit_ok: done (grade: report.md, results.json and grading.json written, whatever the scores;
      with --no-gpu, the GPU parts marked as not run)
  1   exit_check_failed: check or release: a LAB marker is malformed, or a solution would leak
  2   exit_bad_argument: bad command line or input file (unknown step, step without LAB regions,
      rubric, cases; collect: a folder with no grading in it)
  4   exit_unsupported_gpu: grade: this GPU cannot run a chosen step
  8   exit_cannot_grade: grade: this machine cannot grade (a tool is missing, the reference does
      not build)
  77  exit_no_device: grade: no CUDA device (and no --no-gpu): nothing is written
"""
import argparse
import csv
import json
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from labkit import course, exit_codes, grading, release, report, uploads  # noqa: E402
from labkit.cases import parse_cases  # noqa: E402
from labkit import markers  # noqa: E402
from labkit.markers import MarkerError  # noqa: E402
from labkit.rubric import check_sizes, load_rubric  # noqa: E402
from labkit.steps import (KERNEL, UsageError, check_repeats, discover_steps, regions_of,  # noqa: E402
                          released_steps, resolve_steps)

REPOSITORY = Path(__file__).resolve().parents[1]


def fail(message, code):
    print(f"lab.py: error: {message}", file=sys.stderr)
    return code


def existing_folder(text):
    path = Path(text)
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"not a folder: {text}")
    return path


def existing_file(text):
    path = Path(text)
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"not a file: {text}")
    return path


def positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text!r}")
    return value


class Parser(argparse.ArgumentParser):
    """argparse, but a bad command line is one line and exit code 2 like every other bad input."""

    def error(self, message):
        print(f"{self.prog}: error: {message}", file=sys.stderr)  # "lab.py: ..." or "lab.py release: ..."
        sys.exit(exit_codes.EXIT_BAD_ARGUMENT)


def parse_args(argv):
    parser = Parser(prog="lab.py", description=__doc__.split("\n\n")[0],
                    formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n\n", 1)[1])
    commands = parser.add_subparsers(dest="command", required=True, parser_class=Parser)

    rel = commands.add_parser("release", help="write a student copy of the repository")
    rel.add_argument("--steps", required=True, help="steps to hand out: 02,04 or all")
    rel.add_argument("--out", required=True, type=Path, help="new (or empty) folder for the copy")
    rel.add_argument("--rubric", type=existing_file, help="rubric to describe in LAB.md (default lab/rubric.json)")
    rel.add_argument("--source", type=existing_folder, default=REPOSITORY,
                     help="tree with the solutions to copy (default: this repository)")
    rel.add_argument("--level", default=markers.DEFAULT_LEVEL, choices=markers.LEVELS,
                     help="difficulty: the regions of this level and easier ones become TODOs (default "
                          f"{markers.DEFAULT_LEVEL}; `check` prints the lines each level asks for)")
    rel.add_argument("--key", type=Path,
                     help="also write the instructor's key (KEY.md: the answers the copy leaves out) into this "
                          "folder, which must not be inside --out")
    rel.add_argument("--keep", default="",
                     help="later steps to copy as they are (by default every step after the first one handed out "
                          "is left out: its code carries the solutions); the leak check still applies")

    grade = commands.add_parser("grade", help="grade a submission's kernels")
    grade.add_argument("--submission", required=True, type=existing_folder,
                       help="the student's folder: a copy of the repository, or any folder with STEP/kernel.cu")
    grade.add_argument("--steps", required=True, help="steps to grade: 02,04 or all")
    grade.add_argument("--out", required=True, type=Path, help="folder for report.md, results.json, grading.json")
    grade.add_argument("--reference", type=existing_folder, default=REPOSITORY,
                       help="tree with the solutions, harness and tests (default: this repository)")
    grade.add_argument("--rubric", type=existing_file, help="rubric file (default lab/rubric.json)")
    grade.add_argument("--cases", type=existing_file, help="instructor's extra cases: 'M N K alpha beta [random|nan]'")
    grade.add_argument("--work", type=Path, help="folder for the builds, kept and reused between gradings "
                                                 "(default: a temporary folder, removed)")
    grade.add_argument("--jobs", type=positive_int, default=4, help="cases and sanitizer runs at once (default 4)")
    grade.add_argument("--level", default=markers.DEFAULT_LEVEL, choices=markers.LEVELS,
                       help="the level the steps were handed out at: a kernel may differ from that handout only "
                            f"in its TODOs (default {markers.DEFAULT_LEVEL})")
    grade.add_argument("--handed-out", default="",
                       help="the steps the release handed out together, when they are more than those graded (such "
                            "as all): a later step's code that repeats an earlier step's solution was a TODO where "
                            "that step was handed out too (default: the graded steps)")
    grade.add_argument("--no-gpu", action="store_true",
                       help="grade without a GPU: only the TODOs changed, no foreign kernel, the build and the "
                            "host tests; the GPU parts are marked as not run")

    key = commands.add_parser("key", help="write the instructor's key of the steps: the answers a release leaves out")
    key.add_argument("--steps", required=True, help="steps: 02,04 or all")
    key.add_argument("--out", required=True, type=Path, help="folder for KEY.md (not a student copy)")
    key.add_argument("--source", type=existing_folder, default=REPOSITORY,
                     help="tree with the course files and READMEs (default: this repository)")

    collect = commands.add_parser("collect", help="one CSV for the class from a folder of gradings")
    collect.add_argument("--grades", required=True, type=existing_folder,
                         help="folder whose subfolders are grade --out folders (one per student)")
    collect.add_argument("--out", required=True, type=Path, help="the CSV file to write")
    collect.add_argument("--roster", type=existing_file,
                         help="CSV mapping each grading folder (column 'submission') to the student's name, email, "
                              "sid, canvas_id, sis_user_id, sis_login_id, section (labkit/uploads.py)")
    collect.add_argument("--assignment", default="GEMM lab",
                         help="the assignment's name in the LMS file's header (Canvas: 'Name (ID)' fills an existing "
                              "assignment; default 'GEMM lab')")
    collect.add_argument("--gradescope", type=Path,
                         help="Gradescope's score import file (default: beside --out, NAME.gradescope.csv)")
    collect.add_argument("--lms", type=Path,
                         help="the LMS gradebook import file, Canvas's CSV (default: beside --out, NAME.canvas.csv)")

    check = commands.add_parser("check", help="check the LAB markers, and that releasing each step leaks nothing")
    check.add_argument("--steps", default="all", help="steps to check (default: every step)")
    check.add_argument("--source", type=existing_folder, default=REPOSITORY,
                       help="tree to check (default: this repository)")
    return parser.parse_args(argv)


def command_release(args):
    rubric = load_rubric(args.rubric)
    source = args.source.resolve()
    steps = resolve_steps(source, args.steps)
    check_sizes(rubric, discover_steps(source), str(args.rubric or "lab/rubric.json"))
    keep = resolve_steps(source, args.keep, require_regions=False) if args.keep.strip() else []
    if args.out.exists() and (not args.out.is_dir() or any(args.out.iterdir())):
        raise UsageError(f"--out {args.out} exists and is not an empty folder")
    if args.key is not None:
        key_dir, out_dir = args.key.resolve(), args.out.resolve()
        if key_dir == out_dir or out_dir in key_dir.parents:
            raise UsageError(f"--key {args.key} is inside --out {args.out}: the key must not go to the students")
    try:
        plan = release.release(source, steps, args.out, rubric, keep, level=args.level)
    except release.LeakError as e:
        for leak in e.leaks:
            print(f"  {leak}", file=sys.stderr)
        leaked = release.leaked_steps(e.leaks, discover_steps(source))
        earlier = [s for s in leaked if s < min(steps)]
        kept = [s for s in leaked if s in keep]
        hint = "move the LAB markers"
        if earlier:
            hint = (f"hand out {', '.join(earlier)} with it (--steps {','.join(s[:2] for s in sorted(earlier + steps))}), "
                    "or " + hint)
        if kept:
            hint = f"leave {', '.join(kept)} out (no --keep), hand it out too, or " + hint
        return fail(f"{e}; nothing was written ({hint} so that no solution is left outside the regions)",
                    exit_codes.EXIT_CHECK_FAILED)
    withheld = f"; left out, as later steps: {', '.join(plan.withheld)}" if plan.withheld else ""
    written = len(set(plan.paths) | {Path(p) for p in plan.replaced()}) + 1
    print(f"wrote {args.out}: {written} files; {len(plan.regions)} region(s) replaced by TODOs in "
          + ", ".join(steps) + f" (level {plan.level})" + withheld + "; instructions for students in LAB.md, "
          "a handout per step in lab/handouts/")
    if args.key is not None:
        write_key(source, steps, args.key)
    return exit_codes.EXIT_OK


def write_key(source, steps, folder):
    folder.mkdir(parents=True, exist_ok=True)
    text = course.key_markdown(source, steps, release.source_commit(source))
    (folder / course.KEY_FILE).write_text(text, encoding="utf-8")
    print(f"wrote {folder / course.KEY_FILE}: the instructor's key of {', '.join(steps)} (keep it from the students)")


def command_key(args):
    source = args.source.resolve()
    steps = resolve_steps(source, args.steps)
    if released_steps(source):
        raise UsageError(f"{source} is a student copy: its course files and answers are not in it")
    write_key(source, steps, args.out)
    return exit_codes.EXIT_OK


def joint_release_is_clean(source, steps, rubric, level=markers.DEFAULT_LEVEL):
    """True when handing out `steps` together is a release that can be made and leaks nothing (a
    later step among them can hand shapes to a step that such a release leaves out: not a release)."""
    try:
        return not release.Plan(source, steps, rubric, level=level).leaks()
    except UsageError:
        return False


def lines_per_level(regions, handed_out=()):
    """{level: solution lines a release at that level asks for}, every level: of the step alone, or
    handed out with `handed_out` (then its repeat regions of those steps count too)."""
    return {level: sum(len(r.solution) for r in markers.blanked_regions(regions, level, handed_out))
            for level in markers.LEVELS}


def repeated_steps(regions, every_step):
    """The steps (folder names) that the repeat regions among `regions` name, in order."""
    words = {word for r in markers.all_regions(regions) for word in r.repeats}
    return [s for s in every_step if any(markers.names_step(word, s) for word in words)]


def joint_release_leaks(source, steps, rubric):
    """[(level, leaks)] of the release of `steps` together, at every level (a level that blanks the
    same regions as the one before it has the same leaks: not computed again)."""
    found, previous = [], None
    for level in markers.LEVELS:
        plan = release.Plan(source, steps, rubric, level=level)
        blanked = [(r.path, r.begin_line) for r in plan.regions]
        found.append((level, found[-1][1] if blanked == previous else plan.leaks()))
        previous = blanked
    return found


def distinct_levels(regions):
    """The levels whose releases blank different regions: the easiest, and each harder one that
    blanks something more (releases at the others are the same as the one before)."""
    found, previous = [], None
    for level in markers.LEVELS:
        blanked = [r.begin_line for r in markers.blanked_regions(regions, level)]
        if blanked != previous:
            found.append(level)
        previous = blanked
    return found


def command_check(args):
    """For authors of steps: every marker well formed, and releasing each step leaks nothing, at
    every level that blanks something more: alone, or, where its solution repeats an earlier
    step's code, together with that step (said so). Prints the lines each level asks for."""
    source = args.source.resolve()
    steps = resolve_steps(source, args.steps, require_regions=False)
    rubric = load_rubric()
    problems = 0
    handed_out = released_steps(source)
    every_step = discover_steps(source)
    for step in steps:
        regions = regions_of(source, step)
        if not regions:
            print(f"{step}: no LAB regions " + ("(handed out in this copy: its solution is not here)"
                                                if step in handed_out else "(it cannot be handed out)"))
            continue
        check_repeats(source, step)
        per_level = lines_per_level(regions)
        count = len([r for r in markers.all_regions(regions) if not r.repeats])
        levels = ", ".join(f"{level} {lines}" for level, lines in per_level.items())
        headline = (f"{step}: {count} region(s), {per_level[markers.LEVELS[-1]]} solution line(s) "
                    f"(lines per level: {levels})")
        notes, shown = [], []
        repeated = repeated_steps(regions, every_step)
        if repeated:
            repeats = len([r for r in markers.all_regions(regions) if r.repeats])
            with_them = ", ".join(f"{level} {lines}"
                                  for level, lines in lines_per_level(regions, [step] + repeated).items())
            notes.append(f"{repeats} more region(s) repeat the solution of {', '.join(repeated)}, blanked only where "
                         f"one of them is handed out too (then lines per level: {with_them})")
        for level in distinct_levels(regions):
            plan = release.Plan(source, [step], rubric, level=level)
            leaks = plan.leaks()
            later = f"its release leaves out {', '.join(plan.withheld)}" if plan.withheld else ""
            if later and later not in notes:
                notes.append(later)
            at = "" if level == markers.DEFAULT_LEVEL else f" at level {level}"
            earlier = [s for s in release.leaked_steps(leaks, every_step) if s < step]
            if leaks and earlier and joint_release_is_clean(source, sorted(earlier + [step]), rubric, level):
                notes.append(f"hand it out with {', '.join(earlier)}{at}, whose code its solution repeats")
                shown += leaks
                continue
            if leaks:
                notes.append(f"{len(leaks)} LEAK(S){at}")
                shown += leaks
                problems += len(leaks)
        print(headline + "".join(f"; {note}" for note in notes))
        for leak in dict.fromkeys(shown):
            print(f"  {leak}")
    lab_steps = [s for s in every_step if regions_of(source, s) and s not in handed_out]
    if args.steps.strip() == "all" and len(lab_steps) > 1:
        # Not a failure of check, which guarantees each step alone (with the earlier steps it names):
        # whether every step can go out at once, and at which levels, depends on the repeat regions.
        found = joint_release_leaks(source, lab_steps, rubric)
        clean = [level for level, leaks in found if not leaks]
        refused = [f"{len(leaks)} leak(s) at level {level}" for level, leaks in found if leaks]
        print(f"all {len(lab_steps)} lab steps together (--steps all): "
              + "; ".join(([f"leaks nothing at level {', '.join(clean)}"] if clean else [])
                          + ([", ".join(refused) + " (refused: a later step's code repeats an earlier step's "
                              "solution outside its repeat regions)"] if refused else [])))
        for leak in dict.fromkeys(leak for _, leaks in found for leak in leaks):
            print(f"  {leak}")
    return exit_codes.EXIT_CHECK_FAILED if problems else exit_codes.EXIT_OK


def gradable_steps(reference, spec):
    """The chosen steps, and those among them that the reference holds only as released
    skeletons (a student grading their own copy): those are graded without the reference's speed."""
    released = released_steps(reference)
    if spec.strip() == "all" and released:
        return [s for s in discover_steps(reference) if s in released], released
    steps = resolve_steps(reference, spec, require_regions=False)
    for step in steps:
        if step not in released and not regions_of(reference, step):
            raise UsageError(f"{step} has no LAB regions in {reference}/{step}/: it is not a lab step")
    return steps, [s for s in steps if s in released]


def command_grade(args):
    rubric = load_rubric(args.rubric)
    reference = args.reference.resolve()
    steps, self_check = gradable_steps(reference, args.steps)
    check_sizes(rubric, discover_steps(reference), str(args.rubric or "lab/rubric.json"))
    handed_out = None
    if args.handed_out.strip():
        handed_out = resolve_steps(reference, args.handed_out, require_regions=False)
    if handed_out is not None and not set(steps) <= set(handed_out):
        raise UsageError(f"--handed-out {args.handed_out}: the graded steps must be among the steps handed out")
    instructor_cases = []
    if args.cases:
        instructor_cases = parse_cases(args.cases.read_text(encoding="utf-8"), str(args.cases), "instructor")
    if args.out.exists() and not args.out.is_dir():
        raise UsageError(f"--out {args.out} is not a folder")
    for tool in ("cmake", "ctest"):
        if not shutil.which(tool):
            return fail(f"{tool} is not on PATH: the grader builds and runs the tests with it",
                        exit_codes.EXIT_CANNOT_GRADE)
    gpu = None
    if not args.no_gpu:
        devices, gpu = grading.cuda_devices()
        if devices == 0:
            return fail(f"{gpu}: grading runs the kernels, so it needs a CUDA GPU (--no-gpu grades what can be "
                        "graded without one)", exit_codes.EXIT_NO_DEVICE)

    args.out.mkdir(parents=True, exist_ok=True)
    work = args.work or Path(tempfile.mkdtemp(prefix="lab-grade-"))
    grader = grading.Grader(args.submission, reference, steps, rubric, instructor_cases, work, args.jobs, self_check,
                            level=args.level, use_gpu=not args.no_gpu, handed_out=handed_out)
    grader.gpu = gpu
    try:
        record = grader.grade(args.out / "logs")
    except grading.GradingError as e:
        return fail(str(e), e.exit_code)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    write_outputs(record, args.out)
    return exit_codes.EXIT_OK


def write_outputs(record, out):
    """grading.json (the raw record), report.md and results.json (scored from it)."""
    scores = report.score_record(record)
    (out / "grading.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    (out / "report.md").write_text(report.markdown_report(record, scores), encoding="utf-8")
    results = report.gradescope_results(record, scores)
    (out / "results.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"{results['output']}\nwrote {out / 'report.md'} and {out / 'results.json'}")


def command_collect(args):
    """class.csv: a row per grading found under --grades (a folder holding grading.json)."""
    gradings = sorted(p.parent for p in args.grades.glob("*/grading.json"))
    if (args.grades / "grading.json").is_file():
        gradings.insert(0, args.grades)
    if not gradings:
        raise UsageError(f"{args.grades} holds no grading (no grading.json in it or in a folder of it)")
    rows = []
    for folder in gradings:
        try:
            record = json.loads((folder / "grading.json").read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise UsageError(f"{folder / 'grading.json'}: not a grading ({e})") from None
        rows.append(report.class_row(folder.name, record))
    columns = report.class_columns(rows)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=columns, restval="")
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {args.out}: {len(rows)} grading(s), {len(columns)} column(s)")
    roster = uploads.read_roster(args.roster)
    gradescope = args.gradescope or args.out.with_name(args.out.stem + ".gradescope.csv")
    lms = args.lms or args.out.with_name(args.out.stem + ".canvas.csv")
    for warning in uploads.write_uploads(rows, roster, gradescope, lms, args.assignment):
        print(f"lab.py collect: {warning}", file=sys.stderr)
    print(f"wrote {gradescope} (Gradescope's score import) and {lms} (Canvas's gradebook import)")
    return exit_codes.EXIT_OK


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        return {"release": command_release, "grade": command_grade, "check": command_check,
                "collect": command_collect, "key": command_key}[args.command](args)
    except UsageError as e:
        return fail(str(e), exit_codes.EXIT_BAD_ARGUMENT)
    except MarkerError as e:
        return fail(str(e), exit_codes.EXIT_CHECK_FAILED)


if __name__ == "__main__":
    sys.exit(main())
