#!/usr/bin/env python3
"""The measured figures of README.md, the steps' READMEs (and pages beside them) and docs/*.md, written from
plots/results/*.csv.

    python3 plots/readme_blocks.py [--results plots/results] [--root DIR] --check | --write [FILE...]

A README holds no hand-copied measurement. A table or figure that comes from the results is a
generated block, two marker lines with what BLOCKS makes of the results between them:

    <!-- BEGIN generated: NAME -->
    <!-- written by plots/readme_blocks.py from plots/results/X.csv; do not edit -->
    (the block's Markdown)
    <!-- END generated: NAME -->

NAME is a block of BLOCKS, alone (`results_table`) or with an argument (`measured/04_outer_product`).
A block that has choices to make takes them on its BEGIN line, as KEY=VALUE words after NAME (a
VALUE with no spaces, lists separated by commas); the END line names the block alone:

    <!-- BEGIN generated: counters/09_wgmma_tma compare=08_mma_ldmatrix rows=instructions,issue,tensor -->

So a step's choices (which counters its README shows, what it compares them with, which variants
its table measures) live in its own README, and nothing here lists the steps: the build's list
(the add_worklog_step() lines of CMakeLists.txt) is the only one. A block's options are the keyword
arguments of its function, given with @block(..., options={KEY: default}) (REQUIRED: no default).
A number that prose keeps is a quoted cell, all on one line and never at the start of one (a line
that starts with an HTML comment ends the paragraph in Markdown):

    ... at <!-- cell: sweep.csv step=04_outer_product n=2049 column=pct_cublas format=.1f -->59.5<!-- /cell -->% of cuBLAS

After `cell:` come the CSV file (in the results folder), then KEY=VALUE words: `column=` the column
(or one of DERIVED's quantities) to quote, required; `agg=` min, max, median, range ("a–b") or list
("a, b, c") when the selectors match several rows; `scale=` a divisor applied first; `format=` a Python
format spec (`.1f`, `,.0f`) or one of FORMATS' names (default `auto`). Every other KEY=VALUE selects
rows by that column: VALUE matches the cell as a number when both are numbers, else as text; `a|b`
matches either, and an empty VALUE an empty cell. Without agg= the selectors must match one row.
Rendered Markdown shows only the number (HTML comments are invisible); --write fills the text of
blocks and cells, --check says which differ, and plots/tests/test_readme_blocks.py fails when a
committed README differs from what the committed CSVs give.

experiments.csv holds the figures of one-off runs (variants, 8192³, repeated processes, the
mma.sync peak) that no driver writes: recorded by hand, one number a row, never rewritten by a run.
Its `run` column is the process (1, 2, 3) or, where only the range over the processes was kept,
`min` and `max`.

run_worklog.py --publish and ncu_profile.py --publish call refresh() after copying their results:
when the folder is a checkout's plots/results, its READMEs are rewritten from them.

A new block is a function of the results (a Results) returning Markdown, registered with
@block(NAME, "its.csv", ...) (argument="what" for NAME/ARGUMENT names); it raises Missing, with a
message, for what the results lack. A new results CSV needs nothing here to be quoted by cells.
What a step registers (its .adds and its variants' descriptions) is asked of its built executable
(`--list-variants`, plots/registrations.py: --bin-dir, default $WORKLOG_BIN_DIR or build/bin), never
written here again: a variant table's "what changes" column is the registration's text.

Exit codes (common/exit_codes.hpp, read through common/exit_codes.py): 0 exit_ok, every block and
cell is current (--check) or written (--write); 1 exit_check_failed, --check found some that differ;
2 exit_bad_argument, bad input: a marker or cell that cannot be read, an unknown block, a missing
CSV or row (nothing written), or bad arguments. Needs only the Python standard library.
"""
import argparse
import csv
import difflib
import math
import re
import statistics
import sys
from collections import namedtuple
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parents[2] / "common")]
import exit_codes  # noqa: E402  (common/exit_codes.py: the codes of common/exit_codes.hpp)
from run import registrations  # noqa: E402
from shapes import shape_results  # noqa: E402
from profiling.profile_csv import CUBLAS, limited_by_step, load_profile  # noqa: E402
from report.results_csv import (InputError, TIMING_WORDS, cublas_name, headline_size, latest_per_step,  # noqa: E402
                         load_rows, precision_label, read_rows, size_of)
from report.results_table import build_table, fmt_ms, fmt_pct, fmt_tflops  # noqa: E402

PLOTS = Path(__file__).resolve().parents[1]
RESULTS = PLOTS / "results"
CHECKOUT = PLOTS.parent  # the steps' kernel.cu files, and the CMakeLists.txt that lists them

BEGIN = re.compile(r"<!-- BEGIN generated: (\S+)((?: \S+)*) -->")
END = re.compile(r"<!-- END generated: (\S+) -->")
ANY_MARKER = re.compile(r"<!--\s*(BEGIN|END)\b", re.IGNORECASE)  # what a mistyped marker still starts with
CELL = re.compile(r"<!-- cell: (.*?) -->(.*?)<!-- /cell -->")
ANY_CELL = re.compile(r"<!--\s*/?cell\b", re.IGNORECASE)
FENCE = re.compile(r"^\s*(```|~~~)")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
NOTE = "<!-- written by plots/readme_blocks.py from {}; do not edit -->"


class BlockError(Exception):
    """A README or a result the blocks cannot use, said in one line ("FILE:LINE: what")."""


class Missing(Exception):
    """A block or cell asks for something the results do not have; wrapped into a BlockError
    that says where."""


# ---- The results ------------------------------------------------------------------------------

class Results:
    """The CSVs of one results folder, each read once when first asked for; and the registrations
    of the steps of the checkout `root` (default: this one), which the blocks quote, as the built
    steps in `bin_dir` print them (default: registrations.bin_dir(root))."""

    def __init__(self, folder=RESULTS, root=None, bin_dir=None):
        self.folder = Path(folder)
        self.root = Path(root) if root is not None else CHECKOUT
        self.bin_dir = Path(bin_dir) if bin_dir is not None else registrations.bin_dir(self.root)
        self._read = {}
        self._registrations = {}

    def registration(self, step):
        """What STEP registers, as its executable says (registrations.Registration); Missing when it cannot be asked."""
        if step not in self._registrations:
            try:
                self._registrations[step] = registrations.read(self.bin_dir, step)
            except registrations.RegistrationError as e:
                raise Missing(str(e)) from None
        return self._registrations[step]

    def _once(self, name, load):
        if name not in self._read:
            try:
                self._read[name] = load(self.folder / name)
            except InputError as e:
                raise Missing(str(e)) from None
        return self._read[name]

    def worklog(self):
        return self._once("worklog.csv", load_rows)

    def sweep(self):
        return self._once("sweep.csv", load_rows)

    def profile(self):
        return self._once("profile.csv", load_profile)

    def variant_profile(self):
        """ncu_profile.py --variants' rows: profile.csv's columns, a variant's name as its step."""
        return self._once("variant_profile.csv", load_profile)

    def experiments(self):
        return self._once("experiments.csv", load_experiments)

    def shapes(self):
        return self._once("shapes.csv", shape_results.load)

    def peers(self):
        """peers.csv's rows, or None where the folder has none (a worklog run without the peers)."""
        return self._once("peers.csv", shape_results.load) if (self.folder / "peers.csv").exists() else None

    def rows(self, name):
        """The rows of any results CSV, for cells: the known ones read and checked as their
        writers define them, any other (a later CSV) as text."""
        known = {"worklog.csv": self.worklog, "sweep.csv": self.sweep, "profile.csv": self.profile,
                 "experiments.csv": self.experiments, "shapes.csv": self.shapes, "peers.csv": self.peers,
                 "variant_profile.csv": self.variant_profile}
        if name in known:
            return known[name]()
        return self._once(name, load_text_rows)


# The CSVs of profile.csv's columns (ncu_profile.py; variant_profile.csv with --variants): DERIVED applies.
PROFILES = ("profile.csv", "variant_profile.csv")

EXPERIMENT_COLUMNS = "experiment date gpu step variant m n k run metric value source".split()


def load_experiments(path):
    """experiments.csv: the value as a number, m, n, k as integers or None."""
    def check_header(path, header):
        missing = [c for c in EXPERIMENT_COLUMNS if c not in (header or [])]
        if missing:
            raise InputError(f"{path}: missing columns: {', '.join(missing)}")

    def parse(raw, where):
        row = dict(raw)
        try:
            row["value"] = float(raw["value"])
            for column in "mnk":
                row[column] = int(raw[column]) if raw[column].strip() else None
        except ValueError:
            raise InputError(f"{where}: value, m, n and k must be numbers") from None
        return row

    return read_rows(path, check_header, parse)


def load_text_rows(path):
    def check_header(path, header):
        if not header:
            raise InputError(f"{path}: empty CSV (no header line)")

    return read_rows(path, check_header, lambda raw, where: dict(raw))


# ---- Quantities and formats -------------------------------------------------------------------

def _number(row, column):
    value = row.get(column)
    if value is None or value == "":
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return value


def fma_instructions(row):
    """Warp FFMA instructions of an FP32 GEMM: M·N·K / 32."""
    return _number(row, "m") * _number(row, "n") * _number(row, "k") / 32


def _ratio(a, b):
    return None if a is None or not b else a / b


# Quantities of a profile.csv row that are not a column of it.
DERIVED = {
    "dram_bytes": lambda r: (None if r["dram_read_bytes"] is None or r["dram_write_bytes"] is None
                             else r["dram_read_bytes"] + r["dram_write_bytes"]),
    "fma_instructions": fma_instructions,
    "instructions_per_fma": lambda r: _ratio(r["instructions"], fma_instructions(r)),
    "shared_ld_per_fma": lambda r: _ratio(r["shared_ld_instructions"], fma_instructions(r)),
    "shared_instructions": lambda r: (None if r["shared_ld_instructions"] is None
                                      else r["shared_ld_instructions"] + (r["shared_st_instructions"] or 0)),
    "conflict_pct": lambda r: None if r["shared_bank_conflicts"] is None or not r["shared_wavefronts"]
    else 100 * r["shared_bank_conflicts"] / r["shared_wavefronts"],
}


def significant(value, digits):
    """value to `digits` significant digits, trailing zeros kept: 3.40, 0.0625, 447."""
    if value == 0:
        return "0"
    decimals = digits - 1 - math.floor(math.log10(abs(value)))
    rounded = round(value, decimals)
    if rounded and math.floor(math.log10(abs(rounded))) != math.floor(math.log10(abs(value))):
        decimals -= 1  # 999.7 became 1000: one digit fewer after the point
    return f"{rounded:.{max(0, decimals)}f}"


def with_unit(value, digits, units):
    """value with the largest unit (factor, suffix) it reaches: 4.33 GB, 396 MB, 21.2 M."""
    if value == 0:
        return "0"
    rounded = float(significant(value, digits))
    for factor, suffix in units:
        if abs(rounded) >= factor:
            return f"{significant(value / factor, digits)}{suffix}"
    return significant(value, digits)


BYTE_UNITS = ((1e12, " TB"), (1e9, " GB"), (1e6, " MB"), (1e3, " kB"), (1, " B"))
COUNT_UNITS = ((1e9, " G"), (1e6, " M"), (1e3, " k"))


def _auto(value):
    """Two decimals below 10, one below 1000, none above: 0.22, 30.4, 738.9, 1234."""
    return f"{value:.2f}" if abs(value) < 10 else f"{value:.1f}" if abs(value) < 1000 else f"{value:.0f}"


FORMATS = {
    "auto": _auto,
    "ms": fmt_ms,                                   # as the results table: 3 significant digits
    "tflops": fmt_tflops,                           # as the results table: 4.51, 38.4
    "sig3": lambda v: significant(v, 3),
    "bytes": lambda v: with_unit(v, 3, BYTE_UNITS),   # 4.33 GB
    "bytes4": lambda v: with_unit(v, 4, BYTE_UNITS),  # 1.373 GB
    "count": lambda v: with_unit(v, 3, COUNT_UNITS),  # 21.2 M
}


def format_value(value, spec="auto", scale=1.0):
    """A number (or a text, as it is) as a cell or a table shows it."""
    if isinstance(value, str):
        return value
    if value is None:
        raise Missing("no value (empty or n/a)")
    value = value / scale
    if spec in FORMATS:
        return FORMATS[spec](value)
    try:
        return format(value, spec)
    except ValueError:
        raise Missing(f"bad format {spec!r} (a Python format spec or one of {', '.join(FORMATS)})") from None


def join_range(texts):
    """"a–b" from the texts of the smallest and the largest value; one text when they agree."""
    return texts[0] if texts[0] == texts[-1] else f"{texts[0]}–{texts[-1]}"


# ---- Choosing rows ------------------------------------------------------------------------------

def matches(value, wanted):
    """Whether a CSV value (number, text or None) is the selector's VALUE (`a|b`: either)."""
    for choice in wanted.split("|"):
        if value is None or value == "":
            if choice in ("", "n/a"):
                return True
            continue
        if isinstance(value, (int, float)):
            try:
                if float(choice) == value:
                    return True
            except ValueError:
                pass
            continue
        if str(value) == choice:
            return True
    return False


def select(rows, file, selectors):
    """The rows of a CSV whose columns match every selector; Missing for an unknown column."""
    if rows:
        for column in selectors:
            if column not in rows[0]:
                raise Missing(f"{file} has no column '{column}'")
    return [r for r in rows if all(matches(r.get(c), v) for c, v in selectors.items())]


def value_of(row, column, file):
    if column in row:
        return _number(row, column) if not isinstance(row[column], (int, float)) else row[column]
    if column in DERIVED and file in PROFILES:
        return DERIVED[column](row)
    raise Missing(f"{file} has no column '{column}'" + (" (nor a derived quantity of that name)"
                                                        if file in PROFILES else ""))


def one(rows, what):
    if len(rows) != 1:
        raise Missing(f"{what}: {'no row' if not rows else f'{len(rows)} rows'} (expected one)")
    return rows[0]


# ---- Cells --------------------------------------------------------------------------------------

CELL_OPTIONS = {"column", "agg", "scale", "format"}
AGGREGATES = ("min", "max", "median", "range", "list")


def parse_cell_spec(spec):
    """`FILE KEY=VALUE...` -> (file, options, selectors). Raises Missing for what cannot be read."""
    words = spec.split()
    if not words or "=" in words[0]:
        raise Missing("a cell starts with the CSV file it quotes, e.g. 'cell: worklog.csv ...'")
    file, options, selectors = words[0], {}, {}
    if not file.endswith(".csv") or "/" in file:
        raise Missing(f"'{file}' is not the name of a CSV in the results folder")
    for word in words[1:]:
        key, equals, value = word.partition("=")
        if not equals or not key:
            raise Missing(f"'{word}' is not KEY=VALUE")
        target = options if key in CELL_OPTIONS else selectors
        if key in target:
            raise Missing(f"'{key}=' given twice")
        target[key] = value
    if not options.get("column"):
        raise Missing("a cell needs column=")
    if options.get("agg", "") not in ("",) + AGGREGATES:
        raise Missing(f"agg= must be one of {', '.join(AGGREGATES)}")
    if "scale" in options:
        try:
            options["scale"] = float(options["scale"])
        except ValueError:
            raise Missing(f"scale= must be a number, not {options['scale']!r}") from None
        if not options["scale"]:
            raise Missing("scale= must not be 0")
    return file, options, selectors


def render_cell(spec, results):
    """The text a cell shows."""
    file, options, selectors = parse_cell_spec(spec)
    rows = select(results.rows(file), file, selectors)
    column, agg = options["column"], options.get("agg")
    spec_, scale = options.get("format", "auto"), options.get("scale", 1.0)
    where = f"{file} " + " ".join(f"{k}={v}" for k, v in selectors.items())
    if not agg:
        return format_value(value_of(one(rows, where), column, file), spec_, scale)
    if not rows:
        raise Missing(f"{where}: no row")
    values = [value_of(r, column, file) for r in rows]
    if any(v is None or isinstance(v, str) for v in values):
        raise Missing(f"{where}: agg={agg} needs a number in every row's '{column}'")
    if agg == "list":
        return ", ".join(format_value(v, spec_, scale) for v in values)
    if agg == "range":
        return join_range([format_value(v, spec_, scale) for v in (min(values), max(values))])
    chosen = {"min": min, "max": max, "median": statistics.median}[agg](values)
    return format_value(chosen, spec_, scale)


# ---- Blocks -------------------------------------------------------------------------------------

Generator = namedtuple("Generator", "render sources argument options")
BLOCKS = {}  # base name -> Generator
REQUIRED = object()  # an option without a default: the BEGIN line must give it


def block(name, *sources, argument=None, options=None):
    """Register a block generator: render(results) -> Markdown, or render(results, argument) for
    names `name/ARGUMENT` (argument: what ARGUMENT is, for messages), with its options as keyword
    arguments (options: {KEY: default, or REQUIRED}; the values are the BEGIN line's text).
    sources: the CSVs it reads."""
    def register(render):
        BLOCKS[name] = Generator(render, sources, argument, dict(options or {}))
        return render
    return register


def block_options(generator, words):
    """{KEY: VALUE} of a BEGIN line's words after the name, defaults filled in; Missing for a word
    that is not KEY=VALUE, a key given twice or unknown, and a required key left out."""
    given = {}
    for word in words.split():
        key, equals, value = word.partition("=")
        if not equals or not key:
            raise Missing(f"'{word}' is not KEY=VALUE")
        if key in given:
            raise Missing(f"'{key}=' given twice")
        if key not in generator.options:
            known = ", ".join(f"{k}=" for k in generator.options) or "none"
            raise Missing(f"unknown option '{key}=' (this block's options: {known})")
        given[key] = value
    missing = [k for k, default in generator.options.items() if default is REQUIRED and k not in given]
    if missing:
        raise Missing(f"needs {', '.join(f'{k}=' for k in missing)} on its BEGIN line")
    return {k: given.get(k, default) for k, default in generator.options.items()}


def _words(value):
    """A comma-separated option's items."""
    return [item for item in value.split(",") if item]


def generator_of(name):
    """(generator, argument) for a block name; Missing for an unknown one."""
    base, slash, argument = name.partition("/")
    generator = BLOCKS.get(base)
    if generator is None or bool(slash) != bool(generator.argument):
        known = ", ".join(sorted(b + (f"/{g.argument}" if g.argument else "") for b, g in BLOCKS.items()))
        raise Missing(f"unknown block '{name}' (known: {known})")
    if slash and not argument:
        raise Missing(f"block '{name}' needs its {generator.argument}")
    return generator, (argument if slash else None)


def render_block(name, results, options=""):
    """The text between a block's BEGIN and END lines (`options`: the KEY=VALUE words after its
    name there): the note line, then its Markdown between blank lines."""
    generator, argument = generator_of(name)
    chosen = block_options(generator, options)
    body = (generator.render(results, argument, **chosen) if generator.argument
            else generator.render(results, **chosen))
    sources = ", ".join(f"plots/results/{s}" for s in generator.sources)
    return f"{NOTE.format(sources)}\n\n{body.rstrip()}\n\n"


def _cells(*cells):
    return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"


def _table(header, align, rows):
    return "\n".join([_cells(*header), "|" + "|".join(align) + "|"] + [_cells(*r) for r in rows])


def _shape(size):
    return "×".join(map(str, size))


def _run_line(row):
    """GPU, CUDA, date and timing of a results row, for a block's caption."""
    timing = TIMING_WORDS.get(row.get("timing") or "")
    return (f"{row['gpu']} ({row['sm_count']} SMs), CUDA {row['cuda_runtime']} (driver "
            f"{row['cuda_driver']}), {row['time']:%Y-%m-%d}" + (f", timing {timing}" if timing else ""))


@block("shapes", "shapes.csv")
def shapes(results):
    """README's Shapes section: per category and engine, the geometric mean and minimum of % of cuBLAS."""
    return shape_results.category_table(results.shapes())


@block("shapes_roofline", "shapes.csv")
def shapes_roofline(results):
    """README's Shapes section: the memory-bound rows, % of cuBLAS beside the DRAM fraction."""
    return shape_results.roofline_table(results.shapes())


@block("results_table", "worklog.csv", "profile.csv", "peers.csv")
def results_table(results):
    """table.md, as make_plots writes it with profile.csv and peers.csv beside worklog.csv."""
    return build_table(results.worklog(), limited_by_step(results.profile()), results.peers())


def _step_rows(rows, step, file):
    found = [r for r in latest_per_step(rows) if r["step"] == step]
    if not found:
        raise Missing(f"{file} has no row of step '{step}'")
    return found


@block("measured", "worklog.csv", argument="step")
def measured(results, step):
    """A step's row(s) of worklog.csv: time, TFLOP/s, cuBLAS beside it, and the speed-up over the
    step run before it."""
    all_rows = latest_per_step(results.worklog())
    mine = _step_rows(all_rows, step, "worklog.csv")
    lines = [f"`run_worklog.py` on {_run_line(mine[-1])}; the step and "
             f"{cublas_name(mine[-1]['precision'])} timed in alternation in the same process "
             "(`plots/results/worklog.csv`):", ""]
    table = []
    previous_name = None
    for row in mine:
        group = [r for r in results.worklog() if size_of(r) == size_of(row)]
        order = list(dict.fromkeys(r["step"] for r in group))
        at = order.index(step)
        previous = next(r for r in reversed(group) if r["step"] == order[at - 1]) if at else None
        previous_name = previous["step"] if previous else previous_name
        failed = row["status"] == "FAIL"
        speedup = "—"
        if previous and not failed and previous["status"] != "FAIL":
            speedup = f"{previous['ms'] / row['ms']:.2f}×"
            if previous["precision"] != row["precision"]:
                speedup += f" (vs {precision_label(previous['precision'])})"
        cublas = "—" if row["cublas_tflops"] is None else fmt_tflops(row["cublas_tflops"])
        table.append([_shape(size_of(row)), precision_label(row["precision"]),
                      "—" if failed else fmt_ms(row["ms"]), "—" if failed else fmt_tflops(row["tflops"]),
                      cublas, "—" if failed else fmt_pct(row["pct_cublas"]), speedup, row["status"]])
    header = ["M×N×K", "precision", "median ms", "TFLOP/s", "cuBLAS TFLOP/s", "% of cuBLAS",
              f"speed-up over {previous_name}" if previous_name else "speed-up over previous step", "check"]
    return "\n".join(lines) + "\n" + _table(header, ["---", "---", "--:", "--:", "--:", "--:", "--:", "---"], table)


def _sweep_steps(rows):
    return list(dict.fromkeys(r["step"] for r in rows))


@block("sweep", "sweep.csv")
def sweep(results):
    """The size sweep: per N, each swept step's TFLOP/s beside cuBLAS's and its % of cuBLAS."""
    rows = [r for r in latest_per_step(results.sweep()) if r["m"] == r["n"] == r["k"]]
    if not rows:
        raise Missing("sweep.csv has no square (N×N×N) rows")
    steps = _sweep_steps(rows)
    by = {(r["step"], r["n"]): r for r in rows}
    header, align = ["N"], ["--:"]
    for step in steps:
        precision = next(r["precision"] for r in rows if r["step"] == step)
        header += [f"{step} ({precision_label(precision)})", cublas_name(precision), "% of cuBLAS"]
        align += ["--:", "--:", "--:"]
    table = []
    for n in sorted({r["n"] for r in rows}):
        cells = [str(n)]
        for step in steps:
            r = by.get((step, n))
            if r is None or r["status"] == "FAIL":
                cells += ["—", "—" if r is None or r["cublas_tflops"] is None else fmt_tflops(r["cublas_tflops"]), "—"]
            else:
                cells += [fmt_tflops(r["tflops"]), "—" if r["cublas_tflops"] is None else fmt_tflops(r["cublas_tflops"]),
                          fmt_pct(r["pct_cublas"])]
        table.append(cells)
    newest = max(rows, key=lambda r: r["time"])
    return (f"TFLOP/s at M = N = K = N, each step beside cuBLAS timed in the same process; "
            f"{_run_line(newest)} (`plots/results/sweep.csv`):\n\n" + _table(header, align, table))


@block("sweep_points", "sweep.csv", argument="step")
def sweep_of_step(results, step):
    """One step's points of the size sweep."""
    mine = sorted((r for r in _step_rows(results.sweep(), step, "sweep.csv") if r["m"] == r["n"] == r["k"]),
                  key=lambda r: r["n"])
    table = [[str(r["n"]), "—" if r["status"] == "FAIL" else fmt_ms(r["ms"]),
              "—" if r["status"] == "FAIL" else fmt_tflops(r["tflops"]),
              "—" if r["cublas_tflops"] is None else fmt_tflops(r["cublas_tflops"]),
              "—" if r["status"] == "FAIL" else fmt_pct(r["pct_cublas"]), r["status"]] for r in mine]
    return (f"The size sweep (M = N = K = N), {_run_line(mine[-1])}, against "
            f"{cublas_name(mine[-1]['precision'])} in the same process (`plots/results/sweep.csv`):\n\n"
            + _table(["N", "median ms", "TFLOP/s", "cuBLAS TFLOP/s", "% of cuBLAS", "check"],
                     ["--:", "--:", "--:", "--:", "--:", "---"], table))


# ---- Blocks from profile.csv --------------------------------------------------------------------

def _profile_row(results, step, precision=None):
    """The longest-running kernel of a step (cuBLAS: of a precision) in profile.csv."""
    rows = [r for r in results.profile() if r["step"] == step and (precision is None or r["precision"] == precision)]
    if not rows:
        raise Missing(f"profile.csv has no row of {step}" + (f" {precision}" if precision else ""))
    return max(rows, key=lambda r: r["duration_ns"] or 0.0)


def _pct(value):
    return "n/a" if value is None else f"{_auto(value)}%"


def _stalls(row):
    return ", ".join(f"`{row[name]}` {_auto(row[name + '_per_issue'])}" for name in ("top_stall", "second_stall")
                     if row[name] is not None and row[name + "_per_issue"] is not None) or "n/a"


def _conflicts(row):
    conflicts, wavefronts = row["shared_bank_conflicts"], row["shared_wavefronts"]
    if conflicts is None or wavefronts is None:
        return "n/a"
    text = f"{conflicts:,.0f} / {with_unit(wavefronts, 3, COUNT_UNITS)}"
    return text + (f" ({_auto(DERIVED['conflict_pct'](row))}%)" if conflicts and wavefronts else "")


def _or_na(function):
    def show(row):
        try:
            value = function(row)
        except TypeError:  # a missing count in the arithmetic
            return "n/a"
        return "n/a" if value is None else value
    return show


def _bytes(column, digits=3):
    return _or_na(lambda r: with_unit(DERIVED[column](r) if column in DERIVED else r[column], digits, BYTE_UNITS))


# The rows a step README's counter table may have: label, and the text of a profile.csv row.
COUNTER_ROWS = {
    "dram_bytes": ("DRAM bytes (read + write)", _bytes("dram_bytes")),
    "dram_read_bytes": ("DRAM bytes read", _bytes("dram_read_bytes")),
    "l2_bytes": ("L2 bytes", _bytes("l2_bytes")),
    "l2_bytes4": ("L2 bytes", _bytes("l2_bytes", 4)),
    "instructions": ("warp instructions", _or_na(lambda r: with_unit(r["instructions"], 3, COUNT_UNITS))),
    "instructions_per_fma": ("warp instructions per FMA instruction",
                             _or_na(lambda r: significant(DERIVED["instructions_per_fma"](r), 3))),
    "shared_ld_per_fma": ("shared load instructions per FMA instruction",
                          _or_na(lambda r: f"{DERIVED['shared_ld_per_fma'](r):g}")),
    "shared_wavefronts": ("shared wavefronts", _or_na(lambda r: with_unit(r["shared_wavefronts"], 3, COUNT_UNITS))),
    "conflicts": ("shared bank conflicts / wavefronts", _conflicts),
    "occupancy": ("achieved occupancy", lambda r: _pct(r["achieved_occupancy_pct"])),
    "occupancy_registers": ("achieved occupancy (registers per thread)",
                            lambda r: f"{_pct(r['achieved_occupancy_pct'])} ({r['registers_per_thread']:.0f})"
                            if r["registers_per_thread"] is not None else _pct(r["achieved_occupancy_pct"])),
    "issue": ("issue slots busy", lambda r: _pct(r["issue_active_pct"])),
    "l1": ("L1/shared busy", lambda r: _pct(r["l1_throughput_pct"])),
    "l2_busy": ("L2 busy", lambda r: _pct(r["l2_throughput_pct"])),
    "dram_busy": ("DRAM busy", lambda r: _pct(r["dram_throughput_pct"])),
    "tensor": ("tensor pipe busy", lambda r: _pct(r["tensor_pipe_pct"])),
    "stalls": ("top stalls (warps per issued instruction)", _stalls),
    "limited_by": ("limited by", lambda r: r["limited_by"] or "n/a"),
}
def _column_name(row):
    return cublas_name(row["precision"]) if row["step"] == CUBLAS else row["step"]


@block("counters", "profile.csv", argument="step",
       options={"compare": REQUIRED, "precision": "", "rows": REQUIRED})
def counters(results, step, compare, precision, rows):
    """A step's Nsight Compute counters beside those of what its README compares it with: compare=
    a step, or cuBLAS with precision= (fp32, fp16); rows= the rows, keys of COUNTER_ROWS."""
    rows = _words(rows)
    unknown = [key for key in rows if key not in COUNTER_ROWS]
    if unknown or not rows:
        raise Missing(f"unknown counter row(s) {', '.join(unknown) or '(none given)'} in rows= "
                      f"(known: {', '.join(COUNTER_ROWS)})")
    mine, theirs = _profile_row(results, step), _profile_row(results, compare, precision or None)
    table = [[COUNTER_ROWS[key][0], COUNTER_ROWS[key][1](theirs), COUNTER_ROWS[key][1](mine)] for key in rows]
    caption = (f"Nsight Compute, {mine['gpu']}, {_shape(int(mine[c]) for c in 'mnk')}, one profiled launch "
               "each, caches flushed before it (`plots/results/profile.csv`)")
    if any(key.endswith("per_fma") for key in rows):
        caption += "; an FMA instruction is one warp FFMA, M·N·K / 32 of them"
    return caption + ":\n\n" + _table(["", _column_name(theirs), _column_name(mine)], ["---", "---", "---"], table)


@block("profile_summary", "profile.csv")
def profile_summary(results):
    """Every profiled step and cuBLAS: time, bytes and intensity at DRAM and L2, the tensor pipe,
    what limits it and the counter that shows it: the measured roofline as numbers, and the counters
    behind the ladder's plain words."""
    rows = results.profile()
    longest = {}
    for r in rows:
        key = (r["step"], r["precision"])
        if key not in longest or (r["duration_ns"] or 0) > (longest[key]["duration_ns"] or 0):
            longest[key] = r
    table = []
    for r in longest.values():
        name = f"{CUBLAS} {precision_label(r['precision'])}" if r["step"] == CUBLAS else r["step"]
        table.append([name, "n/a" if r["duration_ns"] is None else fmt_ms(r["duration_ns"] / 1e6),
                      "n/a" if r["tflops"] is None else fmt_tflops(r["tflops"]),
                      _bytes("dram_bytes")(r), "n/a" if r["dram_flop_per_byte"] is None else f"{r['dram_flop_per_byte']:.0f}",
                      _bytes("l2_bytes")(r), "n/a" if r["l2_flop_per_byte"] is None else _auto(r["l2_flop_per_byte"]),
                      _pct(r["tensor_pipe_pct"]), r["limited_by"] or "n/a", limiting_counter(r) or "n/a"])
    first = next(iter(longest.values()))
    return (f"Nsight Compute, {first['gpu']}, {_shape(int(first[c]) for c in 'mnk')}, one profiled launch each, "
            "caches flushed before it (`plots/results/profile.csv`):\n\n"
            + _table(["step", "ms", "TFLOP/s", "DRAM bytes", "FLOP per DRAM byte", "L2 bytes", "FLOP per L2 byte",
                      "tensor pipe busy", "limited by (measured)", "the counter that shows it"],
                     ["---", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "---", "---"], table))


# ---- The ladder: README.md's first table ---------------------------------------------------------

# The counter that shows each verdict of profile_csv.limited_by: (profile.csv column, its words).
LIMIT_COUNTERS = (("tensor pipe", "tensor_pipe_pct", "tensor pipe busy"),
                  ("memory bandwidth (DRAM)", "dram_throughput_pct", "DRAM busy"),
                  ("memory bandwidth (L2)", "l2_throughput_pct", "L2 busy"),
                  ("memory bandwidth (L1/shared)", "l1_throughput_pct", "L1/shared busy"),
                  ("memory bandwidth", "memory_throughput_pct", "memory busy"))


def limiting_counter(row):
    """The one counter of a profile.csv row that shows what limits the kernel (its limited_by), in
    words with its value: "tensor pipe busy 85.7%", "L2 busy 81.0%", "issue slots busy 75.2%",
    "29.1 warps stalled on long_scoreboard per issued instruction". Also a cell's column
    (limiting_counter)."""
    verdict = row.get("limited_by") or ""
    for name, column, words in LIMIT_COUNTERS:
        if verdict == name and row.get(column) is not None:
            return f"{words} {_auto(row[column])}%"
    if verdict == "issue":
        issue, sm = row.get("issue_active_pct"), row.get("sm_throughput_pct")
        if issue is not None and (sm is None or issue >= sm):
            return f"issue slots busy {_auto(issue)}%"
        if sm is not None:
            return f"SM busy {_auto(sm)}%"
    if verdict == "shared-memory bank conflicts" and DERIVED["conflict_pct"](row) is not None:
        return f"{_auto(DERIVED['conflict_pct'](row))}% of the shared wavefronts are bank conflicts"
    if verdict.startswith("latency") and row.get("top_stall") and row.get("top_stall_per_issue") is not None:
        return f"{_auto(row['top_stall_per_issue'])} warps stalled on {row['top_stall']} per issued instruction"
    return None


DERIVED["limiting_counter"] = limiting_counter


def _longest_kernels(results):
    """{(step, precision): the step's longest-running kernel in profile.csv}."""
    longest = {}
    for r in results.profile():
        key = (r["step"], r["precision"])
        if key not in longest or (r["duration_ns"] or 0) > (longest[key]["duration_ns"] or 0):
            longest[key] = r
    return longest


# What holds a kernel back, for a reader new to the profiler: each verdict of profile_csv.limited_by
# in plain words (a "latency (waiting for X)" verdict reads "waiting for X"). The counter behind the
# verdict is profile_summary's last column, one link away from the ladder.
PLAIN_LIMITS = {"tensor pipe": "the tensor cores themselves",
                "shared-memory bank conflicts": "threads queueing on the same shared-memory banks",
                "issue": "issuing instructions",
                "memory bandwidth (DRAM)": "moving data from DRAM",
                "memory bandwidth (L2)": "moving data through the L2 cache",
                "memory bandwidth (L1/shared)": "moving data through L1/shared memory",
                "memory bandwidth": "moving data",
                "latency": "waiting, with no unit busy"}


def plain_limit(verdict):
    """A limited_by verdict in plain words (PLAIN_LIMITS); an unknown one as it is."""
    waiting = re.fullmatch(r"latency \(waiting for (.+)\)", verdict or "")
    return f"waiting for {waiting.group(1)}" if waiting else PLAIN_LIMITS.get(verdict, verdict)


def _pays(results, spec, order):
    """{step: cell} for the ladder's option pays=STEP:SHAPE,...: the step's % of cuBLAS on the shape
    it was written for, from shapes.csv, beside the ladder's step before it. SHAPE is MxNxK, or
    `corpus`: the geometric mean over every shape of the corpus (each shape once: a shape listed in
    two categories is one measurement)."""
    rows = [r for r in results.shapes() if shape_results.counted(r)]

    def on(engine, shape):
        if shape == "corpus":
            by_shape = {}
            for r in rows:
                if r["engine"] == engine:
                    by_shape.setdefault((r["m"], r["n"], r["k"]), r["pct_cublas"])
            if not by_shape:
                raise Missing(f"pays=: shapes.csv has no passed row of {engine}")
            return shape_results.geometric_mean(by_shape.values()), len(by_shape)
        found = [r["pct_cublas"] for r in rows if r["engine"] == engine and (r["m"], r["n"], r["k"]) == shape]
        if not found:
            raise Missing(f"pays=: shapes.csv has no passed row of {engine} at {_shape(shape)}")
        return found[0], 1

    cells = {}
    for item in _words(spec):
        step, _, wanted = item.partition(":")
        if step not in order or order.index(step) == 0:
            raise Missing(f"pays=: '{step}' is not a step of the ladder after its first")
        if wanted == "corpus":
            shape = wanted
        else:
            try:
                shape = tuple(int(x) for x in wanted.split("x"))
            except ValueError:
                shape = ()
            if len(shape) != 3:
                raise Missing(f"pays=: '{item}' is not STEP:MxNxK or STEP:corpus")
        before = order[order.index(step) - 1]
        (mine, count), (theirs, _) = on(step, shape), on(before, shape)
        where = (f"geometric mean over the corpus's {count} shapes" if shape == "corpus"
                 else f"at {_shape(shape)}")
        cells[step] = f"{shape_results.fmt_pct(mine)} {where} ({before[:2]}: {shape_results.fmt_pct(theirs)})"
    return cells


@block("ladder", "worklog.csv", "profile.csv", "shapes.csv", options={"counters": "", "pays": ""})
def ladder(results, counters, pays):
    """One row per step at the worklog's size: what it adds (the registry's words), its precision,
    TFLOP/s, % of cuBLAS in that precision and what holds it back in plain words (linked to
    counters=, the anchor of the table that gives the counter behind it); then cuBLAS in each
    precision, the yardsticks. With pays=STEP:SHAPE,... a last column gives those steps' % of
    cuBLAS on the shapes they were written for (shapes.csv; _pays): the steps that add nothing at
    the worklog's size say there why they exist."""
    rows = latest_per_step(results.worklog())
    if not rows:
        raise Missing("worklog.csv has no rows")
    size = headline_size(rows)
    mine = [r for r in rows if size_of(r) == size]
    order = list(dict.fromkeys(r["step"] for r in results.worklog() if size_of(r) == size))
    mine.sort(key=lambda r: order.index(r["step"]))
    profiled = _longest_kernels(results)

    def verdict(step, precision):
        row = profiled.get((step, precision))
        if row is None:
            return ["(not profiled)"]
        words = plain_limit(row["limited_by"]) if row["limited_by"] else "n/a"
        return [f"[{words}]({counters})" if counters and row["limited_by"] else words]

    paid = _pays(results, pays, order) if pays else None

    def yardstick(precision):
        cublas = [r["cublas_tflops"] for r in mine if r["precision"] == precision and r["cublas_tflops"]]
        if not cublas:
            return []
        steps = [r["step"][:2] for r in mine if r["precision"] == precision]
        return [[cublas_name(precision), f"the yardstick of {steps[0]}–{steps[-1]}" if len(steps) > 1
                 else f"the yardstick of {steps[0]}", precision_label(precision),
                 fmt_tflops(statistics.median(cublas)), "100%"] + verdict(CUBLAS, precision)
                + ([""] if paid is not None else [])]

    # A step the build has but this run did not measure keeps its row, said as such, after the last
    # measured one: the ladder lists every step, and no figure of another run (another GPU, another
    # day) is mixed into this one's.
    try:
        built = registrations.steps(results.root)
    except registrations.RegistrationError:
        built = []
    unmeasured = []
    for step in built:
        if step not in order:
            try:
                adds = results.registration(step).adds
            except Missing:
                adds = ""
            unmeasured.append([f"[{step}]({step}/)", adds, "", "not in this run", "—", "its README measures it"]
                              + ([""] if pays else []))

    table = []
    for at, r in enumerate(mine):
        failed = r["status"] == "FAIL"
        table.append([f"[{r['step']}]({r['step']}/)", r["adds"], precision_label(r["precision"]),
                      "—" if failed else fmt_tflops(r["tflops"]), "—" if failed else fmt_pct(r["pct_cublas"])]
                     + verdict(r["step"], r["precision"]) + ([paid.get(r["step"], "")] if paid is not None else []))
        if at + 1 == len(mine):
            table += unmeasured
        if at + 1 == len(mine) or mine[at + 1]["precision"] != r["precision"]:
            table += yardstick(r["precision"])  # cuBLAS after the last step it measures
    newest = max(mine, key=lambda r: r["time"])
    header = ["step", "what it adds", "precision", "TFLOP/s", "% of cuBLAS", "what holds it back (measured)"]
    align = ["---", "---", "---", "--:", "--:", "---"]
    caption = (f"{_shape(size)}, {_run_line(newest)}; each step and cuBLAS timed in alternation in one process "
               "(`plots/results/worklog.csv`), what holds it back from Nsight Compute's counters "
               "(`plots/results/profile.csv`); cuBLAS's TFLOP/s is the median over the steps' runs")
    if paid is not None:
        header.append("on the shapes it is for: % of cuBLAS (the step before)")
        align.append("---")
        caption += (f"; the last column from the shape corpus (`plots/results/shapes.csv`; "
                    f"{shape_results.run_caption(results.shapes())})")
    return caption + ":\n\n" + _table(header, align, table)


# ---- Blocks from experiments.csv ----------------------------------------------------------------

def _experiment(results, experiment, **selectors):
    rows = [r for r in results.experiments() if r["experiment"] == experiment
            and all(matches(r.get(c), str(v)) for c, v in selectors.items())]
    return rows


def _values(rows, metric, **selectors):
    return [r["value"] for r in rows if r["metric"] == metric
            and all(matches(r.get(c), str(v)) for c, v in selectors.items())]


def _range(values, show):
    if not values:
        return "—"
    return join_range([show(min(values)), show(max(values))])


def _percent(values, spec="{:.1f}"):
    """"a–b%" over the values, "—" without any."""
    return _range(values, spec.format) + ("%" if values else "")


# How rows of experiments.csv were timed, from their `source`: those recorded under the timing modes
# say "cold (L2 flushed"; the older ones were timed by CUDA events with nothing queued before each run,
# the operands left in L2 by the run before.
COLD_SOURCE = "cold (L2 flushed"
BEFORE_THE_MODES = "timing warm, by CUDA events with nothing queued before each run (before the timing modes)"


def _experiment_caption(rows):
    dates = sorted({r["date"] for r in rows})
    gpus = sorted({r["gpu"] for r in rows})
    cold = [COLD_SOURCE in (r.get("source") or "") for r in rows]
    timing = TIMING_WORDS["cold"] if all(cold) else BEFORE_THE_MODES if not any(cold) else "timing cold and warm"
    if all(cold):
        timing = "timing " + timing
    return f"{', '.join(gpus)}, {', '.join(dates)}, {timing}"


@block("timing_validation", "timing_validation.csv")
def timing_validation(results):
    """plots/validate_timing.py's rows: the harness's % of cuBLAS, cold and warm, beside Nsight
    Compute's ratio of kernel times with its caches flushed, and whether they agree."""
    rows = results.rows("timing_validation.csv")
    if not rows:
        raise Missing("timing_validation.csv has no rows")
    table = []
    for r in rows:
        shape = f"{r['m']}×{r['n']}×{r['k']}"
        table.append([shape, f"{float(r['harness_step_us']):.2f}", f"{float(r['harness_cublas_us']):.2f}",
                      f"{float(r['harness_pct']):.1f}%", f"{float(r['warm_pct']):.1f}%",
                      f"{float(r['ncu_step_us']):.2f}", f"{float(r['ncu_cublas_us']):.2f}"
                      + (f" ({r['ncu_cublas_kernels']} kernels)" if r["ncu_cublas_kernels"] not in ("", "1") else ""),
                      f"{float(r['ncu_pct']):.1f}%", f"{float(r['ratio_gap_pct']):+.1f}%", r["agrees"]])
    agree = len({(r["m"], r["n"], r["k"]) for r in rows if r["agrees"] == "yes"})
    shapes = len({(r["m"], r["n"], r["k"]) for r in rows})
    dates = sorted({r["date"] for r in rows})
    return (f"{rows[0]['step']} and cuBLAS, {', '.join(sorted({r['gpu'] for r in rows}))}, {', '.join(dates)} "
            f"(`plots/results/timing_validation.csv`, remade by `plots/validate_timing.py`); the harness's median "
            f"of 30 rounds, timed by the kernels' timestamps, cold and warm; Nsight Compute's median of 5 launches "
            f"with its caches flushed; {agree} of {shapes} shapes agree (a shape listed twice was measured twice):\n\n"
            + _table(["shape", "harness: step µs", "cuBLAS µs", "% of cuBLAS, cold", "warm",
                      "Nsight Compute: step µs", "cuBLAS µs", "% of cuBLAS", "gap", "agree"],
                     ["---", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "---"], table))


@block("at_8192", "experiments.csv")
def at_8192(results):
    """The tensor-core steps at 8192³, one process each in one session."""
    rows = _experiment(results, "one_process_each", variant="", n=8192)
    if not rows:
        raise Missing("experiments.csv has no one_process_each rows at n=8192")
    steps = list(dict.fromkeys(r["step"] for r in rows))
    table = []
    for step in steps:
        mine = [r for r in rows if r["step"] == step]
        table.append([step, _range(_values(mine, "ms"), lambda v: significant(v, 3)),
                      _range(_values(mine, "tflops"), lambda v: f"{v:.1f}"),
                      _percent(_values(mine, "pct_cublas"))])
    return (f"8192×8192×8192, one process per step in one session, each step and cuBLAS timed in "
            f"alternation; {_experiment_caption(rows)}; recorded by hand "
            "(`plots/results/experiments.csv`, experiment `one_process_each`):\n\n"
            + _table(["step", "median ms", "TFLOP/s", "% of cuBLAS"], ["---", "--:", "--:", "--:"], table))


STEP_NAME = re.compile(r"^\d\d_[A-Za-z0-9_]+$")  # a step's directory, as the build names it
LABELS = ("names", "flags")


def variant_rows(step, rows):
    """The (step, variant) pairs of a variant table's rows= words: STEP (a step itself), VARIANT (a
    variant of the table's step) or STEP/VARIANT; Missing for an empty or malformed list."""
    pairs = []
    for word in _words(rows):
        named, slash, variant = word.partition("/")
        if slash:
            if not STEP_NAME.match(named) or not variant:
                raise Missing(f"rows=: '{word}' is not STEP/VARIANT")
            pairs.append((named, variant))
        else:
            pairs.append((word, "") if STEP_NAME.match(word) else (step, word))
    if not pairs:
        raise Missing("rows= names no row")
    return pairs


def _variant_label(step, s, v, labels):
    """A row's first cell: `VARIANT` and (the step) (labels=names), or `--variant VARIANT` and the
    step's name (labels=flags); another step by its name."""
    if v:
        return f"`{v}`" if labels == "names" else f"`--variant {v}`"
    return "(the step)" if s == step and labels == "names" else s


@block("variants", "experiments.csv", argument="step",
       options={"rows": REQUIRED, "experiment": "one_process_each", "labels": "names"})
def variants(results, step, rows, experiment, labels):
    """A step's variants against the step at 4096³ and 8192³, TFLOP/s (and % of cuBLAS where
    recorded), from one session: one process each (one_process_each, recorded by hand), or the range
    over several processes (plots/record_variants.py, which measures the rows of this block).
    rows= the table's rows in order (variant_rows: a step, or a variant, by its name); experiment=
    the rows of experiments.csv it reads; labels= how the first column names them (names, flags).
    What a row changes is what its kernel.cu registers: a variant's description, a step's .adds."""
    if labels not in LABELS:
        raise Missing(f"labels= must be one of {', '.join(LABELS)}")
    pairs = variant_rows(step, rows)
    what = {}
    for s, v in pairs:
        registration = results.registration(s)
        if v and v not in registration.variants:
            raise Missing(f"{registration.path} registers no variant '{v}' (it registers: "
                          f"{', '.join(registration.variants) or 'none'})")
        what[s, v] = registration.variants[v] if v else registration.adds
    sizes = (4096, 8192)
    everything = _experiment(results, experiment)
    with_pct = all(_values([r for r in everything if r["step"] == s and r["variant"] == v], "pct_cublas")
                   for s, v in pairs)  # a % column only where every row has one
    header, align = ["variant", "what changes"], ["---", "---"]
    for n in sizes:
        header += [f"{n}³ TFLOP/s"] + ([f"{n}³ % of cuBLAS"] if with_pct else [])
        align += ["--:"] + (["--:"] if with_pct else [])
    table, used = [], []
    for s, v in pairs:
        mine = [r for r in everything if r["step"] == s and r["variant"] == v]
        if not mine:
            raise Missing(f"experiments.csv has no {experiment} rows of {s} variant '{v}'")
        used += mine
        cells = [_variant_label(step, s, v, labels), what[s, v]]
        for n in sizes:
            cells.append(_range(_values(mine, "tflops", n=n), lambda x: f"{x:.1f}"))
            if with_pct:
                cells.append(_percent(_values(mine, "pct_cublas", n=n)))
        table.append(cells)
    processes = sorted({r["run"] for r in used if r["run"]})
    if len(processes) > 1:
        how = (f"M = N = K, each row in {len(processes)} processes of its own, taken in turn in one session (the "
               f"range over them), step and cuBLAS timed in alternation in each; {_experiment_caption(used)}; "
               f"`plots/record_variants.py` (`plots/results/experiments.csv`, experiment `{experiment}`)")
    else:
        how = (f"M = N = K, each in its own process in one session, step and cuBLAS timed in alternation; "
               f"{_experiment_caption(used)}; recorded by hand (`plots/results/experiments.csv`, experiment "
               f"`{experiment}`)")
    return how + ":\n\n" + _table(header, align, table)


def variant_tables(root=CHECKOUT):
    """{step: its variant table's (step, variant) rows} for each step of the build (CMakeLists.txt)
    whose README has a `variants/STEP` block, read from that block's BEGIN line: what
    plots/record_variants.py measures. BlockError for a README or a block that cannot be read."""
    tables = {}
    try:
        steps = registrations.steps(root)
    except registrations.RegistrationError as e:
        raise BlockError(str(e)) from None
    for step in steps:
        readme = Path(root) / step / "README.md"
        if not readme.is_file():
            continue
        for found in find(readme.read_text(encoding="utf-8"), str(readme)):
            if found.kind == "block" and found.name == f"variants/{step}":
                try:
                    tables[step] = variant_rows(step, block_options(BLOCKS["variants"], found.options)["rows"])
                except Missing as e:
                    raise BlockError(f"{readme}:{found.line}: {e}") from None
    return tables


@block("three_processes", "experiments.csv", options={"steps": REQUIRED})
def three_processes(results, steps):
    """Steps in three separate processes each (steps=, comma-separated, the README's own step
    last): % of cuBLAS in each, and the last step's time."""
    steps = _words(steps)
    if not steps:
        raise Missing("steps= names no step")
    rows = [r for r in _experiment(results, "three_processes") if r["step"] in steps]
    if not rows:
        raise Missing(f"experiments.csv has no three_processes rows of {', '.join(steps)}")
    last = steps[-1]
    header = ["M = N = K"] + [f"**{s}**" if s == last else s for s in steps] + [f"{last[:2]}: ms, TFLOP/s"]
    table = []
    for n in sorted({r["n"] for r in rows}):
        cells = [str(n)]
        for step in steps:
            pct = [r["value"] for r in rows if r["step"] == step and r["n"] == n and r["metric"] == "pct_cublas"
                   and r["run"] in ("1", "2", "3")]
            text = ", ".join(f"{v:.1f}" for v in pct) + "%" if pct else "—"
            cells.append(f"**{text}**" if step == last and pct else text)
        mine = [r for r in rows if r["step"] == last and r["n"] == n]
        cells.append(f"{_range(_values(mine, 'ms'), lambda v: significant(v, 3))} ms, "
                     f"{_range(_values(mine, 'tflops'), lambda v: f'{v:.0f}')}")
        table.append(cells)
    return (f"% of cuBLAS in each of three separate processes, the step and cuBLAS timed in alternation; "
            f"{_experiment_caption(rows)}; recorded by hand (`plots/results/experiments.csv`, experiment "
            "`three_processes`):\n\n" + _table(header, ["--:"] + ["--:"] * len(steps) + ["---"], table))


@block("runs", "worklog.csv", "experiments.csv", argument="step")
def runs(results, step):
    """A step at several sizes: the worklog's run, three separate processes, one unaligned run."""
    table = []
    worklog = [r for r in latest_per_step(results.worklog()) if r["step"] == step]
    three = _experiment(results, "three_processes", step=step)
    unaligned = _experiment(results, "unaligned_4097", step=step)
    for n in sorted({r["n"] for r in three} | {r["n"] for r in worklog}):
        for r in worklog:
            if r["n"] == n and r["m"] == r["k"] == n:
                table.append([str(n), fmt_ms(r["ms"]), fmt_tflops(r["tflops"]), f"**{fmt_pct(r['pct_cublas'])}**",
                              "`run_worklog.py` (`worklog.csv`)"])
        mine = [r for r in three if r["n"] == n]
        if mine:
            table.append([str(n), _range(_values(mine, "ms"), lambda v: significant(v, 3)),
                          _range(_values(mine, "tflops"), lambda v: f"{v:.0f}"),
                          _percent(_values(mine, "pct_cublas")), "three processes"])
    for n in sorted({r["n"] for r in unaligned}):
        mine = [r for r in unaligned if r["n"] == n]
        cublas = _values(mine, "cublas_tflops")
        table.append([f"{n} (unaligned)", _range(_values(mine, "ms"), lambda v: significant(v, 4)),
                      _range(_values(mine, "tflops"), lambda v: f"{v:.1f}"),
                      _percent(_values(mine, "pct_cublas")),
                      "one process" + (f" (cuBLAS {_range(cublas, lambda v: f'{v:.1f}')} TFLOP/s)" if cublas else "")])
    if not table:
        raise Missing(f"neither worklog.csv nor experiments.csv has runs of '{step}'")
    used = three + unaligned
    caption = "M = N = K; the step and cuBLAS timed in alternation in the same process, median of 20 runs"
    if used:
        caption += f"; the runs besides the worklog's: {_experiment_caption(used)}, recorded by hand " \
                   "(`plots/results/experiments.csv`)"
    return caption + ":\n\n" + _table(["M = N = K", "median ms", "TFLOP/s", "% of cuBLAS", "source"],
                                      ["---", "--:", "--:", "--:", "---"], table)


H100_VERSIONS = {"persistent_row_major": "persistent grid, tiles in row-major order",
                 "persistent_grouped_16rows": "+ grouped tile order (16 rows)",
                 "clusters": "+ clusters of 2, B multicast", "": "+ TMA-store epilogue (the step)"}


@block("h100_exploration", "experiments.csv")
def h100_exploration(results):
    """10's techniques in the first exploration, on an H100, timed one after the other."""
    rows = _experiment(results, "h100_exploration")
    if not rows:
        raise Missing("experiments.csv has no h100_exploration rows")
    table = []
    for step, variant in dict.fromkeys((r["step"], r["variant"]) for r in rows):
        mine = [r for r in rows if r["step"] == step and r["variant"] == variant]
        table.append([H100_VERSIONS.get(variant, variant or step)] +
                     [_range(_values(mine, "tflops", n=n), lambda v: f"{v:.0f}") for n in (4096, 8192)])
    return (f"TFLOP/s, each version and cuBLAS timed one after the other (before the harness "
            f"alternated them); {_experiment_caption(rows)}; recorded by hand "
            "(`plots/results/experiments.csv`, experiment `h100_exploration`):\n\n"
            + _table(["version", "4096³", "8192³"], ["---", "--:", "--:"], table))


@block("fastcu", "experiments.csv")
def fastcu(results):
    """pranjalssh/fast.cu's ladder, rebuilt and run by us."""
    rows = _experiment(results, "fastcu")
    if not rows:
        raise Missing("experiments.csv has no fastcu rows")
    table = []
    for variant in dict.fromkeys(r["variant"] for r in rows):
        mine = [r for r in rows if r["variant"] == variant]
        table.append([variant.replace("_", " "), _range(_values(mine, "tflops"), lambda v: f"{v:.0f}"),
                      _percent(_values(mine, "pct_cublas"), "{:.0f}")])
    sizes = sorted({r["n"] for r in rows})
    return (f"{', '.join(map(str, sizes))}³, BF16 in and out with FP32 accumulation, its own harness and its "
            f"own cuBLAS call; {_experiment_caption(rows)}; recorded by hand (`plots/results/experiments.csv`, "
            "experiment `fastcu`):\n\n"
            + _table(["fast.cu kernel, cumulative", "TFLOP/s", "% of its cuBLAS"], ["---", "--:", "--:"], table))


# ---- Finding blocks and cells in a README -------------------------------------------------------

# kind: block or cell; start, end: offsets of the text; options: a block's KEY=VALUE words ("" for a cell).
Found = namedtuple("Found", "kind name line start end options", defaults=("",))


def _masked(line):
    """The line with its code spans blanked (same length), so that markers shown as code are not read."""
    return CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)


def find(text, path="README.md"):
    """The generated blocks and quoted cells of a README, in order, as Found (the offsets of the text
    that the writer replaces). Raises BlockError ("path:line: ...") for an unbalanced, nested,
    mistyped or unknown marker and for a cell that cannot be read; code (fenced, or in backticks)
    is not read."""
    found, open_block, fenced, offset = [], None, False, 0
    for number, line in enumerate(text.splitlines(keepends=True), 1):
        where = f"{path}:{number}"
        start_of_line, offset = offset, offset + len(line)
        bare = line.rstrip("\r\n")
        if FENCE.match(bare):
            fenced = not fenced
            continue
        if fenced:
            continue
        masked = _masked(bare)
        begin, end = BEGIN.fullmatch(masked.strip()), END.fullmatch(masked.strip())
        if begin:
            if open_block:
                raise BlockError(f"{where}: BEGIN generated: {begin.group(1)} inside the block "
                                 f"'{open_block.name}' opened on line {open_block.line}")
            try:
                generator = generator_of(begin.group(1))[0]
            except Missing as e:
                raise BlockError(f"{where}: {e}") from None
            try:
                block_options(generator, begin.group(2))
            except Missing as e:
                raise BlockError(f"{where}: block '{begin.group(1)}': {e}") from None
            open_block = Found("block", begin.group(1), number, offset, None, begin.group(2).strip())
            continue
        if end:
            if not open_block:
                raise BlockError(f"{where}: END generated: {end.group(1)} without a BEGIN")
            if end.group(1) != open_block.name:
                raise BlockError(f"{where}: END generated: {end.group(1)} closes BEGIN generated: "
                                 f"{open_block.name} (line {open_block.line})")
            found.append(open_block._replace(end=start_of_line))
            open_block = None
            continue
        if ANY_MARKER.search(masked):
            raise BlockError(f"{where}: not a marker: a line of its own, exactly "
                             "'<!-- BEGIN generated: NAME -->' (or '<!-- BEGIN generated: NAME KEY=VALUE... -->') "
                             "or '<!-- END generated: NAME -->'")
        if open_block:
            continue  # the block's text is the writer's
        cells = list(CELL.finditer(masked))
        if len(ANY_CELL.findall(masked)) != 2 * len(cells):
            raise BlockError(f"{where}: a cell is '<!-- cell: FILE KEY=VALUE... -->TEXT<!-- /cell -->', all on "
                             "one line")
        for cell in cells:
            if not masked[:cell.start()].strip():
                raise BlockError(f"{where}: a cell must not start a line (Markdown would end the paragraph "
                                 "there): put a word before it")
            try:
                parse_cell_spec(cell.group(1))
            except Missing as e:
                raise BlockError(f"{where}: {e}") from None
            found.append(Found("cell", cell.group(1), number, start_of_line + cell.start(2),
                               start_of_line + cell.end(2)))
    if open_block:
        raise BlockError(f"{path}:{open_block.line}: BEGIN generated: {open_block.name} has no END")
    return found


def render(found, results, path="README.md"):
    """The text a block or cell should hold; BlockError ("path:line: ...") when the results lack it."""
    try:
        return (render_block(found.name, results, found.options) if found.kind == "block"
                else render_cell(found.name, results))
    except Missing as e:
        what = f"block '{found.name}'" if found.kind == "block" else f"cell '{found.name}'"
        raise BlockError(f"{path}:{found.line}: {what}: {e}") from None


def rewritten(text, results, path="README.md"):
    """The README's text with every block and cell as the results give it."""
    pieces, at = [], 0
    for f in find(text, path):
        pieces += [text[at:f.start], render(f, results, path)]
        at = f.end
    return "".join(pieces) + text[at:]


Difference = namedtuple("Difference", "path line kind name committed expected")


def check(text, results, path="README.md"):
    """The blocks and cells whose text differs from what the results give, as Differences."""
    return [Difference(path, f.line, f.kind, f.name, text[f.start:f.end], expected)
            for f in find(text, path) for expected in [render(f, results, path)] if text[f.start:f.end] != expected]


def rewrite(path, results):
    """Rewrite one README in place; returns whether it changed."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    new = rewritten(text, results, str(path))
    if new != text:
        path.write_text(new, encoding="utf-8")
    return new != text


def readmes(root):
    """README.md, every directory's README.md (one level down), a step's other pages beside its code
    (NN_name/*.md) and the pages of docs/ under root."""
    root = Path(root)
    beside = sorted(p for p in root.glob("[0-9][0-9]_*/*.md") if p.name != "README.md")
    return [p for p in [root / "README.md", *sorted(root.glob("*/README.md")), *beside, *sorted(root.glob("docs/*.md"))]
            if p.is_file()]


def _relative(path, root):
    try:
        return Path(path).resolve().relative_to(root)
    except (TypeError, ValueError):
        return path


def describe(difference, root=None):
    """A difference in a few lines: where, and a diff of the block or the two cell texts."""
    path = Path(difference.path)
    shown = _relative(path, root)
    if difference.kind == "cell":
        return (f"{shown}:{difference.line}: cell '{difference.name}' reads {difference.committed!r}; "
                f"the results give {difference.expected!r}")
    diff = difflib.unified_diff(difference.committed.splitlines(), difference.expected.splitlines(),
                                "committed", "from the results", lineterm="", n=0)
    return f"{shown}:{difference.line}: block '{difference.name}' differs:\n" + "\n".join(
        "    " + line for line in list(diff)[2:])


def check_all(files, results):
    """(Differences, texts) over the files; BlockError at the first that cannot be read."""
    differences, texts = [], {}
    for path in files:
        texts[path] = Path(path).read_text(encoding="utf-8")
        differences += check(texts[path], results, str(path))
    return differences, texts


def write_all(files, results):
    """Rewrite the files, all or none: every one is rendered before the first is written. Returns
    the paths that changed."""
    new = {}
    for path in files:
        text = Path(path).read_text(encoding="utf-8")
        new[path] = (text, rewritten(text, results, str(path)))
    changed = [path for path, (old, text) in new.items() if old != text]
    for path in changed:
        Path(path).write_text(new[path][1], encoding="utf-8")
    return changed


def refresh(results_dir, who, bin_dir=None):
    """After `who --publish DIR`: when DIR is a checkout's plots/results (its READMEs at DIR/../..),
    rewrite their blocks and cells from DIR, the steps' registrations asked of the executables in
    bin_dir. Says what it did in lines starting "<who>:"; returns False when the READMEs could not be
    rewritten (they are then left as they were)."""
    folder = Path(results_dir).resolve()
    root = folder.parent.parent
    if folder.name != "results" or folder.parent.name != "plots" or not (root / "README.md").is_file():
        return True
    try:
        changed = write_all(readmes(root), Results(folder, root, bin_dir))
    except BlockError as e:
        print(f"{who}: warning: the READMEs' measured figures were not rewritten: {e}", file=sys.stderr, flush=True)
        return False
    for path in changed:
        print(path, flush=True)
    print(f"{who}: {len(changed)} README(s) rewritten from {folder}" if changed
          else f"{who}: the READMEs' measured figures already match {folder}", flush=True)
    return True


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=RESULTS, help="the results folder (default: plots/results)")
    parser.add_argument("--root", type=Path, help="the checkout whose READMEs to read (default: RESULTS/../..)")
    parser.add_argument("--bin-dir", type=Path, help="the built step executables, whose registrations the READMEs "
                        f"quote (default: ${registrations.BIN_DIR_VARIABLE}, else ROOT/build/bin)")
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--check", action="store_true", help="exit 1, saying where, when a block or cell is stale")
    what.add_argument("--write", action="store_true", help="rewrite every block and cell from the results")
    parser.add_argument("files", nargs="*", type=Path, help="the READMEs (default: README.md, */README.md and docs/*.md)")
    args = parser.parse_args(argv)
    root = (args.root or args.results.resolve().parent.parent).resolve()
    files = args.files or readmes(root)
    results = Results(args.results, root, args.bin_dir)
    try:
        if args.write:
            for path in write_all(files, results):
                print(path)
            return exit_codes.EXIT_OK
        differences, _ = check_all(files, results)
    except (BlockError, OSError) as e:
        print(f"readme_blocks: error: {e}", file=sys.stderr)
        return exit_codes.EXIT_BAD_ARGUMENT
    for difference in differences:
        print(describe(difference, root), file=sys.stderr)
    if differences:
        print(f"readme_blocks: {len(differences)} block(s) or cell(s) differ from {args.results}; rewrite them "
              f"with: python3 {_relative(Path(__file__), root)} "
              f"--results {args.results} --write", file=sys.stderr)
        return exit_codes.EXIT_CHECK_FAILED
    return exit_codes.EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
