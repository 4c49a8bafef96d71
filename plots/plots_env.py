#!/usr/bin/env python3
"""The old path of a script: plots/plots_env.py is now plots/run/plots_env.py (plots/README.md).
Run, it says so in one line on stderr, then runs the new one with the same arguments and exit code."""
import runpy
import sys
from pathlib import Path

NEW = Path(__file__).resolve().parent / "run/plots_env.py"
if __name__ == "__main__":  # imported (the old module name), it does nothing
    print("note: plots/plots_env.py is now plots/run/plots_env.py; running that",
          file=sys.stderr, flush=True)
    sys.argv[0], sys.path[0] = str(NEW), str(NEW.parent)
    runpy.run_path(str(NEW), run_name="__main__")
