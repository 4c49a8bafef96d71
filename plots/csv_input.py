"""Reading the CSV files that plots/ takes as input, with one-line errors. Standard library only:
ncu_profile.py must run where matplotlib is not installed."""
import csv
from pathlib import Path


class InputError(Exception):
    """A problem with an input file; the scripts print it as one line and exit with code 2."""


def read_rows(path, check_header, parse_row, no_rows="no data rows"):
    """The rows of the CSV file at path: check_header(path, field names) first, then each row as
    parse_row(raw dict, "<path>, line N"); both raise InputError for what they reject. A missing
    or unreadable file, or one without rows (the no_rows message), is an InputError too."""
    path = Path(path)
    try:
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            check_header(path, reader.fieldnames)
            rows = [parse_row(raw, f"{path}, line {reader.line_num}") for raw in reader]
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: cannot read: {e}") from None
    if not rows:
        raise InputError(f"{path}: {no_rows}")
    return rows
