"""Tests that the pinned requirements stay true to the committed results: plots/constraints.txt pins
the matplotlib that drew the committed charts, plots/requirements-peers.txt the PyTorch and Triton
that the committed results name. Standard library only; no GPU.

Run from anywhere:  python3 -m unittest discover -s plots/tests -v
"""
import re
import struct
import unittest

from support import PLOTS, PNG_SIGNATURE  # noqa: E402  (first: it sets the import path)

RESULTS = PLOTS / "results"


def pins(path):
    """{package: version} of the `name==version` lines of a requirements or constraints file."""
    found = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, version = line.split("==")
            found[name.strip()] = version.strip()
    return found


def png_texts(path):
    """The keyword -> text of a PNG's tEXt chunks (matplotlib writes "Software" there)."""
    data = path.read_bytes()
    if not data.startswith(PNG_SIGNATURE):
        raise ValueError(f"{path} is not a PNG")
    texts, at = {}, len(PNG_SIGNATURE)
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        if kind == b"tEXt":
            keyword, _, text = data[at + 8:at + 8 + length].partition(b"\0")
            texts[keyword.decode("latin-1")] = text.decode("latin-1")
        at += 12 + length  # length, type, data, CRC
    return texts


class PinnedRequirementsTest(unittest.TestCase):
    def test_constraints_pin_the_matplotlib_of_the_committed_charts(self):
        pinned = pins(PLOTS / "constraints.txt")
        self.assertEqual(list(pinned), ["matplotlib"])
        charts = sorted(RESULTS.glob("*.png"))
        self.assertTrue(charts)
        for chart in charts:
            with self.subTest(chart=chart.name):
                software = png_texts(chart).get("Software", "")
                match = re.match(r"Matplotlib version([0-9][0-9.]*)", software)
                self.assertIsNotNone(match, f"{chart.name} names no matplotlib: {software!r}")
                self.assertEqual(match.group(1), pinned["matplotlib"])

    def test_peer_requirements_pin_the_versions_the_results_name(self):
        pinned = pins(PLOTS / "requirements-peers.txt")
        self.assertEqual(sorted(pinned), ["torch", "triton"])
        named = {"torch": set(), "triton": set()}
        for csv_file in RESULTS.glob("*.csv"):
            text = csv_file.read_text(encoding="utf-8")
            # A local version (+cu130: PyTorch's CUDA 13.0 build) is not part of what pip's == compares.
            named["torch"] |= set(re.findall(r"PyTorch ([0-9][0-9.]*[0-9])", text))
            named["triton"] |= set(re.findall(r"Triton ([0-9][0-9.]*[0-9])", text))
        self.assertEqual(named, {"torch": {pinned["torch"]}, "triton": {pinned["triton"]}})

    def test_the_requirements_the_build_installs_still_accept_the_pin(self):
        # plots/requirements.txt is a lower bound (older Pythons); the pinned version must satisfy it.
        minimum = pins_at_least(PLOTS / "requirements.txt")["matplotlib"]
        pinned = pins(PLOTS / "constraints.txt")["matplotlib"]
        self.assertGreaterEqual(version_tuple(pinned), version_tuple(minimum))


def pins_at_least(path):
    """{package: version} of the `name>=version` lines of a requirements file."""
    found = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, version = line.split(">=")
            found[name.strip()] = version.strip()
    return found


def version_tuple(text):
    return tuple(int(part) for part in text.split("."))


if __name__ == "__main__":
    unittest.main()
