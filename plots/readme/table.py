"""The generic table block: a table made from a CSV's rows the way a cell quotes one number.

A spec (a dict; readme/tables.py holds the READMEs' specs by name) says:

    csv       the results CSV (or "view:NAME", the rows a view of readme/views.py makes)
    where     {column: VALUE}: the rows it reads, VALUE as a cell's selector ("a|b", "" for empty);
              "{step}" and the like are the block's argument and options (its BEGIN line)
    latest    true: only each step's newest run (results_csv.latest_per_step)
    longest   [columns]: per value of these, only the row with the longest duration_ns
    group     [columns]: one table row per value of these, in the CSV's order; without it, one per row
    sort      [columns]: the table rows' order (numbers as numbers)
    pivot     a column whose values each get the columns of `repeat` (the size sweep: a group of
              columns per step), the headers formatted with that value's first row
    columns   [{header, column | text, where, agg, format, scale, suffix, missing, failed, align, when}]:
              column= (or a derived quantity, formats.DERIVED) quoted as a cell quotes it, with agg=
              over the table row's rows; or text=, a Python format string over the row; where= narrows
              the rows first (a long CSV such as experiments.csv); missing: the text for no value
              (default "—"); failed: the text for a row whose status is FAIL; when: an option or a
              field of the first row that must be non-empty for the column to show
    caption   a Python format string with `first`, `last` and `newest` (rows), `each` (a column's
              distinct values: each[gpu]), the argument and options: the line above the table

so a README's table names its data in one place and the filler needs no code of its own for it.
"""
import statistics

from readme.formats import DERIVED, Missing, format_value, join_range, select, value_of
from report.results_csv import latest_per_step

AGGREGATES = {"min": min, "max": max, "median": statistics.median, "geomean": statistics.geometric_mean}


def markdown_row(cells):
    return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"


def markdown_table(header, align, rows):
    return "\n".join([markdown_row(header), "|" + "|".join(align) + "|"] + [markdown_row(r) for r in rows])


class Each(dict):
    """each[column]: the distinct values of a column over the rows, sorted, joined by ", "."""

    def __init__(self, rows):
        super().__init__()
        self.rows = rows

    def __missing__(self, column):
        values = {r.get(column) for r in self.rows if r.get(column) not in (None, "")}
        return ", ".join(str(v) for v in sorted(values, key=lambda v: (isinstance(v, str), v)))


class Row(dict):
    """A row whose derived quantities (formats.DERIVED) read like its columns: {last[run_line]}."""

    def __missing__(self, key):
        if key not in DERIVED:
            raise KeyError(key)
        return DERIVED[key](self)


def _fill(template, values):
    try:
        return template.format_map(values)
    except (KeyError, IndexError, AttributeError, TypeError, ValueError) as e:
        raise Missing(f"cannot fill {template!r}: {e!r}") from None


def _key(value):
    return (0, value, "") if isinstance(value, (int, float)) else (1, 0, str(value))


def cell(column, rows, file, values):
    """The text of one column over one table row's rows."""
    rows = select(rows, file, {k: _fill(v, values) for k, v in column.get("where", {}).items()})
    missing = column.get("missing", "—")
    if "failed" in column and rows and all(r.get("status") == "FAIL" for r in rows):
        return column["failed"]
    if "text" in column:
        return _fill(column["text"], Row({**values, **rows[0]})) if rows else missing
    spec, scale, agg = column.get("format", "auto"), column.get("scale", 1.0), column.get("agg")
    found = [v for v in (value_of(r, column["column"], file) for r in rows) if v is not None and v != ""]
    if not found:
        return missing
    if not agg and len(set(map(str, found))) != 1:  # a group's rows agree on the columns it is grouped by
        raise Missing(f"{file} column '{column['column']}': {len(found)} values (expected one; agg= to combine)")
    return combine(found, agg, spec, scale) + column.get("suffix", "")


def combine(values, agg, spec="auto", scale=1.0):
    """The text of values as agg= combines them: min, max, median, geomean (of positive values),
    range ("a–b"), list ("a, b"), or none (the first)."""
    if agg == "list":
        return ", ".join(format_value(v, spec, scale) for v in values)
    if agg == "range":
        return join_range([format_value(v, spec, scale) for v in (min(values), max(values))])
    return format_value(AGGREGATES[agg](values) if agg else values[0], spec, scale)


def _groups(rows, columns):
    groups = {}
    for r in rows:
        groups.setdefault(tuple(r.get(c) for c in columns), []).append(r)
    return groups


def chosen_rows(spec, rows, values):
    """The rows of a CSV that a spec's where, latest and longest keep, in the CSV's order."""
    file = spec["csv"]
    if spec.get("latest"):
        rows = latest_per_step(rows)
    rows = select(rows, file, {k: _fill(str(v), values) for k, v in spec.get("where", {}).items()})
    if spec.get("longest"):
        rows = [max(group, key=lambda r: r.get("duration_ns") or 0.0)
                for group in _groups(rows, spec["longest"]).values()]
    if not rows:
        shown = " ".join(f"{k}={_fill(str(v), values)}" for k, v in spec.get("where", {}).items())
        raise Missing(f"{', '.join(spec.get('sources', [file]))} has no rows" + (f" with {shown}" if shown else ""))
    return rows


def _shown(columns, first, values):
    return [c for c in columns if not c.get("when") or values.get(c["when"]) or first.get(c["when"])]


def render(spec, rows, values, marker=None):
    """The Markdown of a table block: its caption, a blank line, the table. rows: the CSV's rows
    (or the view's); values: the block's argument and options by name; marker(rows): the text after
    the first cell of a table row made from those rows (the filler's mark of earlier code), or None."""
    file = spec["csv"]
    rows = chosen_rows(spec, rows, values)
    groups = _groups(rows, spec["group"]) if spec.get("group") else {(i,): [r] for i, r in enumerate(rows)}
    order = list(groups)
    if spec.get("sort"):
        order.sort(key=lambda key: [_key(value_of(groups[key][0], c, file)) for c in spec["sort"]])
    newest = max(rows, key=lambda r: r["time"]) if "time" in rows[0] else rows[-1]
    names = {**values, "first": Row(rows[0]), "last": Row(rows[-1]), "newest": Row(newest), "each": Each(rows)}
    columns = _shown(spec["columns"], rows[0], values)
    header = [_fill(c.get("header", ""), names) for c in columns]
    align = [c.get("align", "--:") for c in columns]
    pivots = []
    if spec.get("pivot"):
        pivots = list(_groups(rows, [spec["pivot"]]).items())
        for _, theirs in pivots:
            header += [_fill(c.get("header", ""), Row({**names, **theirs[0]})) for c in spec["repeat"]]
            align += [c.get("align", "--:") for c in spec["repeat"]]
    table = []
    for key in order:
        mine = groups[key]
        cells = [cell(c, mine, file, names) for c in columns]
        for (value,), _ in pivots:
            theirs = [r for r in mine if r.get(spec["pivot"]) == value]
            cells += [cell(c, theirs, file, names) for c in spec["repeat"]]
        if marker and cells:
            cells[0] = f"{cells[0]}{marker(mine)}"
        table.append(cells)
    caption = _fill(spec.get("caption", ""), names)
    return (caption + "\n\n" if caption else "") + markdown_table(header, align, table)
