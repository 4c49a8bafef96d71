"""argparse value types and flags that the scripts in plots/ share. Standard library only: the
profile (ncu_profile.py) must run where matplotlib is not installed."""
import argparse


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
    """The roofline's roofs, for a GPU that make_plots.GPU_PEAKS lacks or to override it."""
    parser.add_argument("--peak-fp32", type=positive_float, help="FP32 peak in TFLOP/s (overrides the table)")
    parser.add_argument("--peak-fp16", type=positive_float, help="FP16 tensor-core peak in TFLOP/s")
    parser.add_argument("--bandwidth", type=positive_float, help="DRAM bandwidth in GB/s")
