"""Runs one test module of python/tests with unittest, for CTest (python/CMakeLists.txt).

    python3 python/tests/run_tests.py test_library

Exits 0 when every test passed or skipped, 1 (exit_check_failed) when any failed. When every test of
the module skipped (no PyTorch, no GPU), it prints one line "SKIPPED: <the reasons>", which CTest's
SKIP_REGULAR_EXPRESSION turns into a skipped test: a module that ran nothing is never reported passed.
The reasons unittest prints itself are written so that they never hold that word in capitals.
"""
import sys
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]  # the test modules, and worklog_torch beside them

from worklog_torch._library import exit_codes  # noqa: E402


def main(module):
    suite = unittest.defaultTestLoader.loadTestsFromName(module)
    result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    sys.stdout.flush()
    if not result.wasSuccessful():
        return exit_codes.EXIT_CHECK_FAILED
    if result.testsRun == 0:
        print(f"{module}: no test ran", file=sys.stderr)
        return exit_codes.EXIT_CHECK_FAILED
    if len(result.skipped) == result.testsRun:
        print("SKIPPED: " + "; ".join(sorted({reason for _, reason in result.skipped})))
    return exit_codes.EXIT_OK


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
