"""A Python that cannot import matplotlib, whatever this one has: a bare virtual environment
(no pip, no site packages), for the tests of what happens without matplotlib."""
import os
import subprocess
import sys
import unittest
from pathlib import Path

PLOTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PLOTS))

from run import plots_env  # noqa: E402


def make(folder):
    """Create the environment in folder; return its python. Skips the calling test when this
    Python cannot make virtual environments (Debian's without python3-venv)."""
    done = subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)],
                          capture_output=True, text=True)
    python = plots_env.venv_python(folder)
    if done.returncode != 0 or not python.exists():
        raise unittest.SkipTest(f"cannot make a virtual environment: {done.stderr.strip()}")
    if plots_env.imports_matplotlib(python):
        raise unittest.SkipTest(f"{python} imports matplotlib all the same (PYTHONPATH?)")
    return python


def offline_pip_environment(wheel_folder):
    """Environment variables under which pip installs only from wheel_folder (an empty folder:
    nothing at all), as on a machine without a package index."""
    env = dict(os.environ)
    env.update(PIP_NO_INDEX="1", PIP_FIND_LINKS=str(wheel_folder), PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("PIP_INDEX_URL", None)
    env.pop("PIP_EXTRA_INDEX_URL", None)
    return env
