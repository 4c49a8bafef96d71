"""argparse value types and flags that the scripts in plots/ share (make_plots.py, run_worklog.py,
ncu_profile.py, cublas_pick.py). Standard library only, like everything but charts.py."""
import argparse
from pathlib import Path


def int_at_least(minimum):
    """An argparse type: an integer no smaller than minimum."""
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}: {text!r}")
        return value
    return parse


positive_int = int_at_least(1)


def comma_list(text):
    """An argparse type: comma-separated words, blanks dropped. An empty list is accepted here, so
    that check_list() can say what the flag wanted."""
    return [word.strip() for word in text.split(",") if word.strip()]


def check_list(parser, flag, values, item, needs=None):
    """After parsing: a comma_list flag's values (None: not given) must hold at least one item;
    needs=(other flag, its value): the flag goes only with that other one. parser.error otherwise."""
    if needs and values is not None and needs[1] is None:
        parser.error(f"{flag} needs {needs[0]}")
    if values == []:
        parser.error(f"{flag}: give at least one {item}")


def positive_float(text):
    """An argparse type for the peak flags (we divide by them)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
    return value


def add_peak_arguments(parser):
    """The rooflines' roofs, for a GPU that charts.GPU_PEAKS lacks or to override it."""
    parser.add_argument("--peak-fp32", type=positive_float, help="FP32 peak in TFLOP/s (overrides the table)")
    parser.add_argument("--peak-fp16", type=positive_float, help="FP16 tensor-core peak in TFLOP/s")
    parser.add_argument("--bandwidth", type=positive_float, help="DRAM bandwidth in GB/s")


def given_peak_arguments(args):
    """The peak flags that args were given, as a command line (for make_plots)."""
    given = (("--peak-fp32", args.peak_fp32), ("--peak-fp16", args.peak_fp16), ("--bandwidth", args.bandwidth))
    return [word for flag, value in given if value is not None for word in (flag, str(value))]


def add_venv_argument(parser):
    """Where the charts' matplotlib comes from when this Python lacks it (plots_env.py)."""
    parser.add_argument("--venv", type=Path,
                        help="virtual environment for matplotlib when this Python lacks it "
                             "(default: BIN_DIR/../plots-venv)")


def parse_naming_unknown_first(parser, required, argv):
    """parser.parse_args(argv), except that an argument the parser does not know is named before a
    missing required one: `--bogus` alone says "unrecognized arguments: --bogus", not that --bin-dir
    and --out are required (argparse checks those first)."""
    def require(flag):
        for action in required:
            action.required = flag

    def error(message):  # a bad value, found while parsing: the usage line shows the required ones again
        require(True)
        type(parser).error(parser, message)

    require(False)
    parser.error = error
    try:
        args, unknown = parser.parse_known_args(argv)
    finally:
        del parser.error
        require(True)
    if unknown:
        parser.error("unrecognized arguments: " + " ".join(unknown))
    missing = [action for action in required if getattr(args, action.dest) is None]
    if missing:
        parser.error("the following arguments are required: " + ", ".join(a.option_strings[0] for a in missing))
    return args
