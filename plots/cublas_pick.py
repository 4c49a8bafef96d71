#!/usr/bin/env python3
"""plots/cublas_pick.py is now plots/shapes/cublas_pick.py: this old path says so in one line on stderr and runs
the new one with the same arguments, whose exit code it returns (plots/README.md: the layout)."""
import runpy
import sys
from pathlib import Path

NEW = Path(__file__).resolve().parent / "shapes/cublas_pick.py"
print("note: plots/cublas_pick.py is now plots/shapes/cublas_pick.py: running python3 plots/shapes/cublas_pick.py", file=sys.stderr, flush=True)
sys.argv[0], sys.path[0] = str(NEW), str(NEW.parent)
runpy.run_path(str(NEW), run_name="__main__")
