"""The results a README quotes: the CSVs of one results folder (plots/results by default), each
read once, as its writer defines it (any other as text); and what each built step registers.
Needs only the Python standard library.
"""
from pathlib import Path

from profiling.profile_csv import load_profile
from readme import codes
from readme.formats import Missing
from report.results_csv import InputError, load_experiments, load_rows, load_text_rows, median_per_step
from run import registrations
from shapes import shape_results

PLOTS = Path(__file__).resolve().parents[1]
RESULTS = PLOTS / "results"
CHECKOUT = PLOTS.parent  # the steps' READMEs, and the CMakeLists.txt that lists them
# The CSVs read as their writers define them; any other as text. The worklog's, one row per step and
# size: the median of its processes (median_per_step, which says how many in `processes`).
LOADERS = {"worklog.csv": lambda path: median_per_step(load_rows(path)), "sweep.csv": load_rows, "profile.csv": load_profile,
           "variant_profile.csv": load_profile, "experiments.csv": load_experiments,
           "shapes.csv": shape_results.load, "peers.csv": shape_results.load}


class Results:
    """The CSVs of one results folder, each read once when first asked for; and the registrations of
    the steps of the checkout `root`, as the built steps in `bin_dir` print them."""

    def __init__(self, folder=RESULTS, root=None, bin_dir=None):
        self.folder = Path(folder)
        self.root = Path(root) if root is not None else CHECKOUT
        self.bin_dir = Path(bin_dir) if bin_dir is not None else registrations.bin_dir(self.root)
        self._read, self._registrations = {}, {}
        self._codes = False  # not read yet (None: the checkout has no fingerprints)

    def registration(self, step):
        """What STEP registers, as its executable says; Missing when it cannot be asked."""
        if step not in self._registrations:
            try:
                self._registrations[step] = registrations.read(self.bin_dir, step)
            except registrations.RegistrationError as e:
                raise Missing(str(e)) from None
        return self._registrations[step]

    def codes(self):
        """{step: today's code} of the checkout whose plots/results this folder is (readme/codes.py),
        read once; None for a folder that is no checkout's results, or a checkout without
        fingerprints: its rows cannot be judged, and no figure is marked."""
        if self._codes is False:
            folder = self.folder.resolve()
            checkout = folder.parent.parent if (folder.name, folder.parent.name) == ("results", "plots") else None
            self._codes = codes.current_codes(checkout) if checkout else None
        return self._codes

    def rows(self, name):
        """The rows of a results CSV (None for a missing peers.csv: a run without the peers)."""
        if name not in self._read:
            if name == "peers.csv" and not (self.folder / name).exists():
                return None
            try:
                self._read[name] = LOADERS.get(name, load_text_rows)(self.folder / name)
            except InputError as e:
                raise Missing(str(e)) from None
        return self._read[name]
