"""The worklog's exit codes for the Python tools, read from their one definition, exit_codes.hpp.

    import exit_codes            # with common/ on sys.path
    exit_codes.EXIT_NO_DEVICE    # 77
    exit_codes.MEANING[77]       # "no CUDA device (77 is what CTest is told means "skipped")"

Each enumerator `exit_<name> = <value>,` of the header becomes EXIT_<NAME>; a header this parser
cannot read raises ValueError naming the file and line, so a tool never runs with a wrong code.
"""
import re
from pathlib import Path

HEADER = Path(__file__).with_name("exit_codes.hpp")
_ENUMERATOR = re.compile(r"^\s*exit_([a-z_]+)\s*=\s*(\d+)\s*,\s*(?://\s*(.*))?$")


def parse(path=HEADER):
    """{name: (value, meaning)} for every enumerator of the ExitCode enum in `path`."""
    codes, inside = {}, False
    for number, line in enumerate(Path(path).read_text().splitlines(), 1):
        if re.match(r"^\s*enum ExitCode\b", line):
            inside = True
            continue
        if not inside:
            continue
        if line.strip().startswith("};"):
            break
        if not line.strip() or line.strip().startswith("//"):
            continue
        match = _ENUMERATOR.match(line)
        if not match:
            raise ValueError(f"{path}:{number}: not an enumerator of the form 'exit_name = value,  // meaning'")
        name, value, meaning = match.group(1), int(match.group(2)), (match.group(3) or "").strip()
        if name in codes or value in [v for v, _ in codes.values()]:
            raise ValueError(f"{path}:{number}: exit_{name} = {value} repeats a name or a value")
        codes[name] = (value, meaning)
    if not codes:
        raise ValueError(f"{path}: no 'enum ExitCode' with enumerators found")
    return codes


CODES = parse()
MEANING = {value: meaning for value, meaning in CODES.values()}
globals().update({f"EXIT_{name.upper()}": value for name, (value, _) in CODES.items()})
