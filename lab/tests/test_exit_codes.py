"""Exit codes defined once: common/exit_codes.hpp is the definition, common/exit_codes.py reads it
for the Python tools, and no tool defines a code of its own.

- the parser agrees with the header, as a C++ compiler reads it (a program built from the header
  prints every value), and refuses a header it cannot read;
- no tool source (plots/**/*.py but the tests, lab/lab.py, lab/labkit/*.py) writes an exit code as
  a number: each takes them from common/exit_codes.py;
- the codes the tools document are the header's.

Run from anywhere:  python3 -m unittest discover -s lab/tests -v
"""
import os
import re
import shutil
import subprocess
import unittest

from lab_test_support import REPOSITORY, TemporaryFolderTest

from labkit import exit_codes  # noqa: E402  (common/exit_codes.py, through labkit's path)

HEADER = REPOSITORY / "common" / "exit_codes.hpp"
TOOLS = sorted(path for path in (REPOSITORY / "plots").rglob("*.py") if "tests" not in path.parts) + \
        [REPOSITORY / "lab" / "lab.py"] + sorted((REPOSITORY / "lab" / "labkit").glob("*.py"))
# Ways a tool could spell an exit code as a number instead of taking it from exit_codes.
LITERAL_CODE = [
    (r"\bEXIT_\w+\s*=\s*\d", "defines an EXIT_ constant"),
    (r"^\s*[A-Z_]*(?:EXIT|CODE|FAIL|DEVICE|GPU|ERROR|MISSING|GRADE|NCU|OK)[A-Z_]*\s*=\s*(?:\d+\s*,\s*)*\d+\b",
     "defines a numeric constant named like a code"),
    (r"\b(?:sys\.)?exit\(\s*\d", "exits with a number"),
    (r"\b(?:Stop|GradingError)\((?:\s*\d|.*,\s*\d+\s*\)\s*$)", "raises with a numeric code"),
    (r"\b(?:code|returncode|exit_code)\s*(?:[!=]=\s*\d|in\s*[({\[]\s*\d)", "compares a code with a number"),
    (r"^\s*return\s+\d+\s*(?:#.*)?$", "returns a bare number"),
]


def compiler():
    for name in (os.environ.get("CXX"), "c++", "g++", "clang++"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


class ParserTest(TemporaryFolderTest):
    def test_the_parser_reads_what_a_compiler_reads(self):
        cxx = compiler()
        if cxx is None:
            self.skipTest("no C++ compiler on PATH")
        names = list(exit_codes.CODES)
        program = self.tmp / "print_codes.cpp"
        program.write_text('#include <cstdio>\n#include "exit_codes.hpp"\nint main() {\n'
                           + "".join(f'  std::printf("{name} %d\\n", int(worklog::exit_{name}));\n' for name in names)
                           + "}\n")
        built = subprocess.run([cxx, "-std=c++17", "-I", str(HEADER.parent), str(program), "-o", str(self.tmp / "p")],
                               capture_output=True, text=True)
        self.assertEqual(built.returncode, 0, built.stderr)
        printed = subprocess.run([str(self.tmp / "p")], capture_output=True, text=True, check=True).stdout
        compiled = {name: int(value) for name, value in (line.split() for line in printed.splitlines())}
        self.assertEqual(compiled, {name: value for name, (value, _) in exit_codes.CODES.items()})

    def test_every_enumerator_of_the_header_is_parsed(self):
        text = HEADER.read_text(encoding="utf-8")
        enum = text[text.index("enum ExitCode"):]
        enum = enum[:enum.index("};")]
        self.assertEqual(sorted(re.findall(r"\bexit_(\w+)\s*=", enum)), sorted(exit_codes.CODES))

    def test_the_names_and_values_the_tools_rely_on(self):
        expected = {"EXIT_OK": 0, "EXIT_CHECK_FAILED": 1, "EXIT_BAD_ARGUMENT": 2, "EXIT_DOES_NOT_FIT": 3,
                    "EXIT_UNSUPPORTED_GPU": 4, "EXIT_CUDA_ERROR": 5, "EXIT_TOOL_MISSING": 6,
                    "EXIT_NO_COUNTER_ACCESS": 7, "EXIT_CANNOT_GRADE": 8, "EXIT_NO_DEVICE": 77}
        self.assertEqual({name: getattr(exit_codes, name) for name in expected}, expected)
        self.assertTrue(all(meaning for meaning in exit_codes.MEANING.values()), exit_codes.MEANING)

    def test_a_header_it_cannot_read_is_refused_with_file_and_line(self):
        broken = self.tmp / "exit_codes.hpp"
        broken.write_text("enum ExitCode : int {\n  exit_ok = 0,\n  exit_two = two,\n};\n")
        with self.assertRaisesRegex(ValueError, r"exit_codes\.hpp:3: not an enumerator"):
            exit_codes.parse(broken)
        broken.write_text("enum ExitCode : int {\n  exit_ok = 0,  // a\n  exit_also_ok = 0,  // b\n};\n")
        with self.assertRaisesRegex(ValueError, r"exit_codes\.hpp:3: exit_also_ok = 0 repeats a name or a value"):
            exit_codes.parse(broken)


class NoLiteralCodesTest(unittest.TestCase):
    def test_no_tool_spells_an_exit_code_as_a_number(self):
        found = []
        for path in TOOLS:
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                code = line.split("#", 1)[0] if not line.lstrip().startswith(("'", '"')) else line
                for pattern, what in LITERAL_CODE:
                    if re.search(pattern, code):
                        found.append(f"{path.relative_to(REPOSITORY)}:{number}: {what}: {line.strip()}")
        self.assertEqual(found, [])

    def test_the_pattern_finds_what_it_looks_for(self):
        planted = ["EXIT_NO_NCU, EXIT_NO_DEVICE = 3, 77", "EXIT_CANNOT_GRADE = 3", "NO_DEVICE = 77",
                   "        sys.exit(2)", "raise Stop(1, 'x')", "raise GradingError('x', 3)",
                   "    if code == 77:", "    return 1"]
        for line in planted:
            with self.subTest(line=line):
                self.assertTrue(any(re.search(pattern, line) for pattern, _ in LITERAL_CODE), line)
        for line in ["    return 1.0", "    return 32 * sectors", "x = exit_codes.EXIT_OK", "SUBSTRING_MINIMUM = 16"]:
            with self.subTest(line=line):
                self.assertFalse(any(re.search(pattern, line) for pattern, _ in LITERAL_CODE), line)

    def test_every_tool_imports_the_codes(self):
        for path in TOOLS:
            text = path.read_text(encoding="utf-8")
            if re.search(r"\bexit_codes\.EXIT_", text):
                with self.subTest(path=path.name):
                    self.assertRegex(text, r"(?m)^(import exit_codes|from (labkit|\.) import .*\bexit_codes\b)")


class DocumentedCodesTest(unittest.TestCase):
    def test_the_docstrings_list_the_headers_values(self):
        """Each "  <value>  exit_<name>: ..." line of a tool's docstring names a code by its value."""
        for path in TOOLS:
            for value, name in re.findall(r"(?m)^\s+(\d+)\s+exit_(\w+):", path.read_text(encoding="utf-8")):
                with self.subTest(path=path.name, name=name):
                    self.assertEqual(exit_codes.CODES[name][0], int(value))


if __name__ == "__main__":
    unittest.main()
