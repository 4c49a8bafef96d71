#!/usr/bin/env python3
"""A Python that can draw the charts: this one when it imports matplotlib, otherwise the one of a
virtual environment in the build tree, made on first use with plots/requirements.txt installed
into it (pip's output goes to VENV.log beside it).

    python3 plots/run/plots_env.py --venv BUILD/plots-venv [--requirements FILE] -- ARGS...

runs `PYTHON ARGS...` with such a Python (CTest runs the plot tests this way) and exits with
its exit code, or with 77 ("skipped" to CTest) after one line saying why when no such Python can
be had (no package index, no venv module). make_plots.draw_results() uses python_with_matplotlib().
"""
import argparse
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "common"))
import exit_codes  # noqa: E402  (common/exit_codes.py: the codes of common/exit_codes.hpp)

REQUIREMENTS = Path(__file__).resolve().parents[1] / "requirements.txt"
NO_MATPLOTLIB = 77  # the command-line exit code when no Python with matplotlib can be had


class Unavailable(Exception):
    """No Python with matplotlib could be had; the message says why in one line."""


def imports_matplotlib(python):
    """Whether this interpreter can import matplotlib (asked in a child process, so that a
    fresh installation counts)."""
    try:
        return subprocess.run([str(python), "-c", "import matplotlib"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL).returncode == exit_codes.EXIT_OK
    except OSError:
        return False


def venv_python(venv):
    return Path(venv) / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def build_tree_venv(bin_dir):
    """The drivers' default virtual environment: plots-venv in the build tree, beside BIN_DIR."""
    return Path(bin_dir).resolve().parent / "plots-venv"


def _last_line(text):
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def python_with_matplotlib(venv, requirements=REQUIREMENTS, python=sys.executable, say=print):
    """The path of a Python that imports matplotlib: `python` itself when it does; else venv's,
    which is made from `python` (when missing) and has `requirements` installed into it (when it
    cannot import matplotlib yet). say() gets one line before the installation starts.
    Raises Unavailable when neither works."""
    if imports_matplotlib(python):
        return Path(python)
    venv = Path(venv)
    in_venv = venv_python(venv)
    if in_venv.exists() and imports_matplotlib(in_venv):
        return in_venv
    log = venv.with_name(venv.name + ".log")
    say(f"matplotlib is not installed for {python}: installing {requirements} into {venv} "
        f"(pip's output: {log})")
    steps = [("creating the virtual environment", [str(python), "-m", "venv", str(venv)]),
             ("pip install", [str(in_venv), "-m", "pip", "install", "--disable-pip-version-check",
                              "-r", str(requirements)])]
    try:
        venv.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "w", encoding="utf-8") as log_file:
            for what, command in steps:
                log_file.write("$ " + " ".join(command) + "\n")
                log_file.flush()
                done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                      errors="replace")
                log_file.write(done.stdout)
                if done.returncode != exit_codes.EXIT_OK:
                    raise Unavailable(f"{what} failed: {_last_line(done.stdout)} (log: {log})")
    except OSError as e:
        raise Unavailable(f"cannot set up {venv}: {e}") from None
    if not imports_matplotlib(in_venv):
        raise Unavailable(f"matplotlib still does not import in {venv} after pip install (log: {log})")
    return in_venv


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if "--" not in argv:
        print("plots_env: error: usage: plots_env.py --venv DIR [--requirements FILE] -- ARGS...",
              file=sys.stderr)
        return exit_codes.EXIT_BAD_ARGUMENT
    split = argv.index("--")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--venv", required=True, type=Path, help="the virtual environment to use or make")
    parser.add_argument("--requirements", type=Path, default=REQUIREMENTS, help="what to install into it")
    args = parser.parse_args(argv[:split])
    try:
        python = python_with_matplotlib(args.venv, args.requirements,
                                        say=lambda line: print(f"plots_env: {line}", flush=True))
    except Unavailable as e:
        print(f"plots_env: no Python with matplotlib, so nothing run: {e}", flush=True)
        return NO_MATPLOTLIB
    sys.stdout.flush()
    return subprocess.run([str(python), *argv[split + 1:]]).returncode


if __name__ == "__main__":
    sys.exit(main())
