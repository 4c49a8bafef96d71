"""What the lab tests share: where things are, a fresh folder per test, and small trees written
from a {path: text} dict. (Not a test module: unittest discovers test_*.py only.)"""
import shutil
import sys
import tempfile
import unittest
from pathlib import Path

LAB = Path(__file__).resolve().parents[1]
REPOSITORY = LAB.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
sys.path.insert(0, str(LAB))  # lab.py and labkit/


class TemporaryFolderTest(unittest.TestCase):
    """self.tmp: an empty folder, removed after the test."""

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="lab-test-"))

    def tearDown(self):
        shutil.rmtree(self.tmp)


def write_tree(root, files):
    """Writes {relative path: text} under root."""
    for path, text in files.items():
        target = Path(root) / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


def executable(path, text):
    """Writes a script and makes it executable."""
    path.write_text(text)
    path.chmod(0o755)
    return path


def rubric_with(**timeouts):
    """The default rubric (lab/rubric.json) with some of its timeouts changed."""
    from labkit.rubric import load_rubric
    rubric = load_rubric()
    rubric["timeouts_seconds"].update(timeouts)
    return rubric
