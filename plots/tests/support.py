"""What the tests of plots/ share: where the folders are, the import path that reaches plots/'s
folders (report, run, shapes, ...) and common/ (exit_codes), and a few constants.

Each test module imports it before the modules under test:  from support import PLOTS  # noqa
"""
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
PLOTS = TESTS.parent
ROOT = PLOTS.parent
FIXTURES = TESTS / "fixtures"
for folder in (TESTS, ROOT / "common", PLOTS):  # PLOTS ends first on the path
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"  # the first bytes of every PNG file
HEADER = "category,m,n,k,label\n"  # the header line of a shape corpus (plots/shape_corpus.csv)
