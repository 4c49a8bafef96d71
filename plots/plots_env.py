#!/usr/bin/env python3
"""plots/plots_env.py is now plots/run/plots_env.py: this old path says so in one line on stderr and runs
the new one with the same arguments, whose exit code it returns (plots/README.md: the layout)."""
import runpy
import sys
from pathlib import Path

NEW = Path(__file__).resolve().parent / "run/plots_env.py"
print("note: plots/plots_env.py is now plots/run/plots_env.py: running python3 plots/run/plots_env.py", file=sys.stderr, flush=True)
sys.argv[0], sys.path[0] = str(NEW), str(NEW.parent)
runpy.run_path(str(NEW), run_name="__main__")
