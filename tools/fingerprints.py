#!/usr/bin/env python3
"""SASS fingerprints: a hash of the machine code of every kernel each step's executable carries.

    python3 tools/fingerprints.py --bin-dir build/bin [--write | --check] [--file tools/fingerprints.csv]

For every step the build lists (BIN_DIR/worklog_steps.txt), the executable's SASS is disassembled
for the Hopper card the worklog is measured on (sm_90a for 09 on, whose kernels exist for no other
target; sm_90 for 01-08) and split into its kernels. Each kernel's listing is normalized, so that
only the code is hashed: the instruction addresses and encodings, the kernel's name (its mangled
name carries a hash of the source path in anonymous namespaces) and the slots of constant bank 4
(where the addresses of globals and strings sit, which move when a file holds other globals) are
taken out. A kernel of the harness (common/gemm_data.cu and the like: the inputs, the check, the L2
cover) is listed once, under the step name "harness", not once per step.

--write rewrites the file; --check (the default) compares the build with it and exits 1 naming every
kernel whose fingerprint is new, changed or gone, so that a change of generated code shows in review.
A build by another nvcc than the file's cannot be compared: exit 77 (CTest: skipped), with why.

A step's code is one hash over the fingerprints of all its kernels (step_codes). Every measurement
CSV of plots/results has a `code` column: the code of the step a row measured. --stamp CSV... fills
it, from this build, in each row of a step that has none (the rows a measurement on this build just
wrote; a step executable leaves the column empty), so that a figure quoted from a row can say
whether it measured today's code (plots/readme/codes.py; docs/figures.md).

The disassembler: the CUDA Toolkit's cuobjdump and nvdisasm at one pinned version, from PyPI's
wheels (REQUIRED below), in a virtual environment made in the build tree on first use (so that every
machine prints the same text), else the toolkit's own beside nvcc; exit 77 when neither can be had.
"""
import argparse
import csv
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "common"))
import exit_codes  # noqa: E402  (common/exit_codes.py)

DEFAULT_FILE = ROOT / "tools" / "fingerprints.csv"
# The disassembler's wheels when the toolkit has none: one version, so that every machine that uses
# them prints the same text.
REQUIRED = ("nvidia-cuda-cuobjdump==13.2.51", "nvidia-cuda-nvdisasm==13.2.51")
HOPPER_FIRST = 9  # steps 09 on are built for sm_90a alone
COLUMNS = ("step", "source", "kernel", "sass_sha256", "instructions")
FUNCTION = re.compile(r"^\s*Function : (\S+)\s*$")
IDENTIFIER = re.compile(r"^identifier = (.*)$")
INSTRUCTION = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s*(.*?)\s*;?\s*(?:/\*.*\*/)?\s*$")
BANK4 = re.compile(r"c\[0x4\]\[([^\]]*)\]")
SYMBOL = re.compile(r"`\(([^)]*)\)")


class Unavailable(Exception):
    """The fingerprints cannot be taken here; the message says why in one line."""


def normalize(lines):
    """The instructions of one kernel's listing, addresses, encodings and symbol slots taken out."""
    out, slots = [], {}
    for line in lines:
        match = INSTRUCTION.match(line)
        if not match or not match.group(1):
            continue
        text = re.sub(r"\s+", " ", match.group(1).rstrip(" ;"))
        text = BANK4.sub(lambda m: "c[0x4][#%d]" % slots.setdefault(m.group(1), len(slots)), text)
        text = SYMBOL.sub("`(symbol)", text)
        out.append(text)
    return out


def parse_sass(text):
    """[(source identifier, mangled kernel name, [normalized instructions])] of a cuobjdump -sass listing."""
    kernels, source, name, body = [], None, None, []

    def close():
        if name is not None:
            kernels.append((source, name, normalize(body)))

    for line in text.splitlines():
        identifier = IDENTIFIER.match(line.strip())
        function = FUNCTION.match(line)
        if identifier:
            close()
            name, body = None, []
            source = identifier.group(1).strip()
        elif function:
            close()
            name, body = function.group(1), []
        elif name is not None:
            body.append(line)
    close()
    return kernels


def demangle(names):
    """Readable names (c++filt), anonymous namespaces' path hashes already gone in its output."""
    if not names:
        return {}
    tool = shutil.which("c++filt")
    if not tool:
        return {n: n for n in names}
    done = subprocess.run([tool], input="\n".join(names) + "\n", capture_output=True, text=True, check=True)
    return dict(zip(names, done.stdout.splitlines()))


def find_nvcc():
    return shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if Path("/usr/local/cuda/bin/nvcc").exists() else None)


def find_disassembler(venv, nvcc):
    """The folder holding cuobjdump and nvdisasm: the pinned wheels' in `venv` (installed there on
    first use), else, where no package index answers, the toolkit's beside nvcc."""
    venv = Path(venv)
    python = venv / "bin" / "python"

    def wheel_bin():
        found = sorted(venv.glob("lib/python*/site-packages/nvidia/cu*/bin"))
        return next((f for f in found if (f / "cuobjdump").exists() and (f / "nvdisasm").exists()), None)

    if wheel_bin():
        return wheel_bin()
    log = venv.with_name(venv.name + ".log")
    print(f"fingerprints: installing {' '.join(REQUIRED)} into {venv} (log: {log})")
    steps = [[sys.executable, "-m", "venv", str(venv)],
             [str(python), "-m", "pip", "install", "--disable-pip-version-check", "--timeout", "20", "--retries", "1",
              *REQUIRED]]
    venv.parent.mkdir(parents=True, exist_ok=True)
    failed = None
    with open(log, "w", encoding="utf-8") as log_file:
        for command in steps:
            if subprocess.run(command, stdout=log_file, stderr=subprocess.STDOUT).returncode != 0:
                failed = f"`{' '.join(command[-2:])}` failed (log: {log})"
                break
    if not failed and wheel_bin():
        return wheel_bin()
    beside = Path(nvcc).resolve().parent if nvcc else None
    if beside and (beside / "cuobjdump").exists() and (beside / "nvdisasm").exists():
        print(f"fingerprints: the pinned disassembler could not be installed ({failed}): using the toolkit's")
        return beside
    raise Unavailable(f"no cuobjdump: not beside nvcc, and {failed or 'the wheels hold none'}")


def tool_version(tool):
    """'13.2.51' of `cuobjdump --version` (or nvcc's)."""
    done = subprocess.run([str(tool), "--version"], capture_output=True, text=True)
    found = re.findall(r"V(\d+\.\d+\.\d+)", done.stdout)
    return found[-1] if found else "unknown"


def disassemble(tools, executable, arch):
    env = dict(os.environ, PATH=f"{tools}{os.pathsep}{os.environ.get('PATH', '')}")
    done = subprocess.run([str(tools / "cuobjdump"), "-sass", "-arch", arch, str(executable)], capture_output=True,
                          text=True, env=env)
    if done.returncode != 0:
        raise Unavailable(f"cuobjdump -sass -arch {arch} {executable} failed: {done.stderr.strip()[:200]}")
    return done.stdout


def relative_source(identifier, source_dir):
    path = Path(identifier)
    try:
        return path.resolve().relative_to(source_dir).as_posix()
    except (ValueError, OSError):
        return path.as_posix()


def source_dir_of(bin_dir):
    """The source tree the build in bin_dir was configured from (its CMakeCache.txt), else this one."""
    cache = Path(bin_dir).resolve().parent / "CMakeCache.txt"
    if cache.exists():
        found = re.search(r"^CMAKE_HOME_DIRECTORY:INTERNAL=(.*)$", cache.read_text(errors="replace"), re.MULTILINE)
        if found:
            return Path(found.group(1).strip()).resolve()
    return ROOT


def steps_of(bin_dir):
    listing = Path(bin_dir) / "worklog_steps.txt"
    if not listing.exists():
        raise Unavailable(f"{listing} is missing: build the steps first")
    return [line.strip() for line in listing.read_text().splitlines() if line.strip() and not line.startswith("#")]


def fingerprint_rows(bin_dir, tools, source_dir):
    """The rows of the fingerprints file for the build in bin_dir."""
    harness_sources = {"common/" + name for name in ("gemm_data.cu", "harness_timing.cu")}
    rows, harness = [], {}
    for step in steps_of(bin_dir):
        arch = "sm_90a" if int(step[:2]) >= HOPPER_FIRST else "sm_90"
        kernels = parse_sass(disassemble(tools, Path(bin_dir) / step, arch))
        names = demangle(sorted({name for _, name, _ in kernels}))
        for identifier, name, body in kernels:
            source = relative_source(identifier, source_dir)
            digest = hashlib.sha256("\n".join(body).encode()).hexdigest()[:16]
            row = {"step": step, "source": source, "kernel": names.get(name, name), "sass_sha256": digest,
                   "instructions": str(len(body))}
            if source in harness_sources:
                harness[(source, row["kernel"])] = dict(row, step="harness")
            else:
                rows.append(row)
    rows.sort(key=lambda r: (r["step"], r["source"], r["kernel"]))
    return rows + [harness[key] for key in sorted(harness)]


def step_codes(rows):
    """{step: its code}: the first 16 hex digits of a SHA-256 over the sorted (kernel, fingerprint)
    pairs of every kernel of the step's executable (the harness's left out: they are no step's). A
    change to any kernel a step can launch, its variants' and the library's included, changes it."""
    pairs = {}
    for r in rows:
        if r["step"] != "harness":
            pairs.setdefault(r["step"], []).append(f"{r['kernel']}\t{r['sass_sha256']}")
    return {step: hashlib.sha256("\n".join(sorted(p)).encode()).hexdigest()[:16] for step, p in pairs.items()}


STEP_NAME = re.compile(r"^(\d\d_[A-Za-z0-9_]+)(/\S*)?$")  # a step, or a step's variant "NN_name/variant"


def stamp(path, codes):
    """Fills the `code` column of one CSV (added last when it has none) in each row that names a step
    of `codes` (its step or engine column: NN_name or NN_name/variant) and has no code yet. Returns
    how many rows it stamped; the file is rewritten only when that is not 0 or the column was added."""
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        header, rows = list(reader.fieldnames or []), list(reader)
    if not header:
        raise Unavailable(f"{path}: no header line")
    name_column = next((c for c in ("step", "engine") if c in header), None)
    if name_column is None:
        raise Unavailable(f"{path}: no step or engine column to tell which step a row measured")
    added = "code" not in header
    if added:
        header.append("code")
    stamped = 0
    for row in rows:
        match = STEP_NAME.match(row.get(name_column) or "")
        if not row.get("code") and match and match.group(1) in codes:
            row["code"] = codes[match.group(1)]
            stamped += 1
    if stamped or added:
        with open(path, "w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=header, lineterminator="\n")
            writer.writeheader()
            writer.writerows({c: row.get(c) or "" for c in header} for row in rows)
    return stamped


def write(path, rows, header):
    with open(path, "w", encoding="utf-8", newline="") as out:
        for line in header:
            out.write(f"# {line}\n")
        writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def read(path):
    text = Path(path).read_text(encoding="utf-8")
    header = [line[2:] for line in text.splitlines() if line.startswith("# ")]
    rows = list(csv.DictReader(io.StringIO("\n".join(line for line in text.splitlines() if not line.startswith("#")))))
    return header, rows


def header_for(nvcc_version, tools):
    return [
        "SASS fingerprints of every kernel in each step's executable: written by tools/fingerprints.py --write,",
        "checked by the fingerprints test. sm_90a for steps 09 on, sm_90 for 01-08; harness kernels once.",
        f"nvcc {nvcc_version}",
    ]


def compare(committed, built):
    """Lines naming every difference between two lists of rows (empty: the same)."""
    key = lambda r: (r["step"], r["source"], r["kernel"])  # noqa: E731
    old, new = {key(r): r for r in committed}, {key(r): r for r in built}
    lines = []
    for k in sorted(set(old) | set(new)):
        if k not in new:
            lines.append(f"gone:    {k[0]}  {k[2]}  ({k[1]})")
        elif k not in old:
            lines.append(f"new:     {k[0]}  {k[2]}  ({k[1]}) {new[k]['sass_sha256']}")
        elif old[k]["sass_sha256"] != new[k]["sass_sha256"]:
            lines.append(f"changed: {k[0]}  {k[2]}  ({k[1]}) {old[k]['sass_sha256']} -> {new[k]['sass_sha256']}"
                         f" ({old[k]['instructions']} -> {new[k]['instructions']} instructions)")
    return lines


def match_report(before, after):
    """Every kernel of `after` matched by fingerprint with `before` (a restructure's proof): per step,
    how many of its kernels have a fingerprint the same step had before, how many one that another
    step had (code moved between files or steps), how many are new; and the kernels of before that
    no step has now."""
    by_step = {}
    for r in before:
        by_step.setdefault(r["step"], set()).add(r["sass_sha256"])
    anywhere = {r["sass_sha256"] for r in before}
    now = {r["sass_sha256"] for r in after}
    lines, steps = [], sorted({r["step"] for r in after} | set(by_step))
    for step in steps:
        rows = [r for r in after if r["step"] == step]
        same = sum(r["sass_sha256"] in by_step.get(step, set()) for r in rows)
        moved = sum(r["sass_sha256"] not in by_step.get(step, set()) and r["sass_sha256"] in anywhere for r in rows)
        new = [r for r in rows if r["sass_sha256"] not in anywhere]
        dropped = len(by_step.get(step, set()) - {r["sass_sha256"] for r in rows})
        lines.append(f"{step}: {len(rows)} kernels, {same} as this step had them, {moved} as another step had them, "
                     f"{len(new)} new; {dropped} fingerprint(s) of this step's before not in it now")
        lines += [f"    new: {r['kernel']} ({r['source']}) {r['sass_sha256']}" for r in new]
    gone = sorted({(r["kernel"], r["sass_sha256"]) for r in before if r["sass_sha256"] not in now})
    lines.append(f"fingerprints of before that no step has now: {len(gone)}")
    lines += [f"    gone: {kernel} {digest}" for kernel, digest in gone]
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description="SASS fingerprints of every step's kernels: write or check them.")
    parser.add_argument("--bin-dir", required=True, help="the build's bin folder (the steps and worklog_steps.txt)")
    parser.add_argument("--file", default=str(DEFAULT_FILE), help="the fingerprints file (default: %(default)s)")
    parser.add_argument("--venv", help="where to install the pinned disassembler when the toolkit has none "
                                       "(default: BIN_DIR/../sass-venv)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="rewrite the file from this build")
    mode.add_argument("--check", action="store_true", help="compare this build with the file (the default)")
    mode.add_argument("--stamp", nargs="+", metavar="CSV", help="fill the code column of these measurement CSVs "
                                                                 "from this build, in the rows of steps that have none")
    mode.add_argument("--match", metavar="BEFORE", help="match this build's kernels by fingerprint with an earlier "
                                                          "fingerprints file (a restructure's proof), whatever their names")
    args = parser.parse_args(argv)
    bin_dir = Path(args.bin_dir)
    try:
        nvcc = find_nvcc()
        tools = find_disassembler(args.venv or bin_dir.resolve().parent / "sass-venv", nvcc)
        version = f"{tool_version(nvcc) if nvcc else 'unknown'}, cuobjdump {tool_version(tools / 'cuobjdump')}"
        rows = fingerprint_rows(bin_dir, tools, source_dir_of(bin_dir))
    except Unavailable as e:
        print(f"fingerprints: SKIPPED: {e}")
        return exit_codes.EXIT_NO_DEVICE  # 77: CTest's "skipped"
    if args.write:
        write(args.file, rows, header_for(version, tools))
        print(f"fingerprints: wrote {len(rows)} kernels to {args.file}")
        return exit_codes.EXIT_OK
    if args.match:
        print("\n".join(match_report(read(args.match)[1], rows)))
        return exit_codes.EXIT_OK
    if args.stamp:
        codes = step_codes(rows)
        try:
            for path in args.stamp:
                print(f"fingerprints: {path}: {stamp(path, codes)} row(s) stamped with this build's code")
        except (OSError, Unavailable) as e:
            print(f"fingerprints: error: {e}", file=sys.stderr)
            return exit_codes.EXIT_BAD_ARGUMENT
        return exit_codes.EXIT_OK
    header, committed = read(args.file)
    committed_version = next((line[len("nvcc "):] for line in header if line.startswith("nvcc ")), "unknown")
    if committed_version != version:
        print(f"fingerprints: SKIPPED: {args.file} was written with nvcc {committed_version}, this build with nvcc "
              f"{version}: the code of two compilers (or the text of two disassemblers) cannot be compared")
        return exit_codes.EXIT_NO_DEVICE
    differences = compare(committed, rows)
    if differences:
        print(f"fingerprints: {len(differences)} kernel(s) differ from {args.file}:")
        print("\n".join(differences))
        print("If the change of generated code is meant, rewrite the file: python3 tools/fingerprints.py "
              f"--bin-dir {args.bin_dir} --write")
        return exit_codes.EXIT_CHECK_FAILED
    print(f"fingerprints: all {len(rows)} kernels as in {args.file}")
    return exit_codes.EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
