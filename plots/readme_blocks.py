#!/usr/bin/env python3
"""plots/readme_blocks.py is now plots/readme/filler.py: this old path says so in one line on stderr and runs
the new one with the same arguments, whose exit code it returns (plots/README.md: the layout)."""
import runpy
import sys
from pathlib import Path

NEW = Path(__file__).resolve().parent / "readme/filler.py"
print("note: plots/readme_blocks.py is now plots/readme/filler.py: running python3 plots/readme/filler.py", file=sys.stderr, flush=True)
sys.argv[0], sys.path[0] = str(NEW), str(NEW.parent)
runpy.run_path(str(NEW), run_name="__main__")
