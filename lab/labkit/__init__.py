"""The course lab kit: student copies made from the solutions (release) and a grader (grade).

lab/lab.py is the command line; lab/README.md explains the kit to instructors.

The kit's exit codes, and those of the step executables it runs, are the worklog's, defined once in
common/exit_codes.hpp and read through common/exit_codes.py (which every student copy carries too):
`from labkit import exit_codes`.
"""
import sys
from pathlib import Path

_COMMON = Path(__file__).resolve().parents[2] / "common"
if str(_COMMON) not in sys.path:
    sys.path.insert(0, str(_COMMON))

import exit_codes  # noqa: E402,F401  (common/exit_codes.py)
