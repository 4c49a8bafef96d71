"""The configuration of a step, read from its source: the `constexpr` lines that hold its tile sizes.

Steps 07 on keep their knobs in `struct Config` (`static constexpr int NAME = VALUE;`, one a line);
01 to 06 in file-scope `constexpr int` lines (`constexpr int a = 1, b = 2;`), which the launcher
passes to the kernel's template; the library's constants (fragment_size, wgmma_m, ...) in headers of
common/. A value is an integer, `true`/`false`, or an expression of integers and names read before it
(`1 << 30`, `block_tile_m / 2`); anything else (`sizeof(__half)`) is left out, so that a picture asks
only for what it can read. A type a Config names (`using rule = stream_k::EveryTileInParts<2>;`, the
split-K and stream-K steps' schedule rule and fixup) reads as its name without the namespace, its
template arguments evaluated ("EveryTileInParts<2>"). The headers' `inline constexpr` and
`std::size_t` constants read too; menu_items reads step 15's menu (tile_per_shape.cu's
`item<rows, cols, cluster>(…)` lines) and menu_entry_config an entry's knobs. Standard library
only: the tests read it without matplotlib.
"""
import ast
import operator
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# One declaration: optional `static` or `inline`, `constexpr`, a type (int, bool, long long,
# std::size_t or an enumeration), then `name = value` pairs up to the `;`.
INTEGER_TYPES = ("int", "bool", "long long", "std::size_t")
DECLARATION = re.compile(r"^[ \t]*(?:(?:static|inline)[ \t]+)*constexpr[ \t]+(int|bool|long long|std::size_t|[A-Z]\w*)"
                         r"[ \t]+(.*)", re.MULTILINE | re.DOTALL)
PAIR = re.compile(r"([A-Za-z_]\w*)\s*=\s*([^,]+)")
# A type alias: `using name = [namespace::]Type;` or `... Type<arguments>;` (arguments: integers or
# names read before it), the whole statement up to its `;`.
ALIAS = re.compile(r"^[ \t]*using[ \t]+([A-Za-z_]\w*)\s*=\s*((?:\w+\s*::\s*)*)(\w+)\s*(?:<(.*)>)?\s*$",
                   re.MULTILINE | re.DOTALL)
OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
             ast.FloorDiv: operator.floordiv, ast.LShift: operator.lshift, ast.Mod: operator.mod}


def evaluate(text, known):
    """The value of a C++ constant expression of integers, true/false and known names; None when it
    holds anything else. Integer division as C++'s for the non-negative values configurations hold."""
    text = text.split("//")[0].strip().replace("true", "True").replace("false", "False")
    text = re.sub(r"(?<![/])/(?![/])", "//", text)  # C++ integer division
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError:
        return None

    def value(node):
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, bool)):
            return node.value
        if isinstance(node, ast.Name) and node.id in known:
            return known[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in OPERATORS:
            left, right = value(node.left), value(node.right)
            return None if left is None or right is None else OPERATORS[type(node.op)](left, right)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            inner = value(node.operand)
            return None if inner is None else -inner
        return None

    return value(tree)


def alias_value(match, known):
    """The name a type alias (ALIAS's match) reads as: "Type", or "Type<2>" with its template
    arguments evaluated; None when an argument is not an integer expression of known names."""
    _, _, name, arguments = match.groups()
    if arguments is None:
        return name
    values = [evaluate(" ".join(argument.split()), known) for argument in arguments.split(",")]
    if any(value is None or isinstance(value, bool) for value in values):
        return None
    return f"{name}<{', '.join(str(value) for value in values)}>"


def declarations(lines, known=None):
    """The constants declared in lines, in order, as {name: value}; `known` names may be used. A
    declaration may span lines; an enumerator (`Kind::value`) gives its name ("value"), a type alias
    (`using rule = stream_k::LastWaveInParts;`) the type's (alias_value)."""
    found = dict(known or {})
    values = {}
    text = "\n".join(line.split("//")[0] for line in lines)
    for statement in text.split(";"):
        alias = ALIAS.search(statement)
        if alias:
            result = alias_value(alias, found)
            if result is not None:
                found[alias.group(1)] = values[alias.group(1)] = result
            continue
        match = DECLARATION.search(statement)
        if not match:
            continue
        kind, body = match.groups()
        for name, expression in PAIR.findall(body):
            expression = " ".join(expression.split())
            if kind in INTEGER_TYPES:
                result = evaluate(expression, found)
            else:
                enumerator = re.fullmatch(re.escape(kind) + r"::(\w+)", expression)
                result = enumerator.group(1) if enumerator else None
            if result is not None:
                found[name] = values[name] = result
    return values


def struct_body(text, name):
    """The lines between `struct NAME {` (or `struct NAME : Base {`) and its closing brace."""
    match = re.search(r"^struct\s+" + re.escape(name) + r"\b[^{;]*\{", text, re.MULTILINE)
    if not match:
        raise KeyError(f"no struct {name}")
    depth, start = 1, match.end()
    for position in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[position], 0)
        if depth == 0:
            return text[start:position].splitlines()
    raise ValueError(f"struct {name} does not close")


def file_scope_lines(text):
    """The lines of text outside every function and struct body: namespace scope, where 01 to 06
    declare the constants their launchers pass to the kernels' templates."""
    kept, depth_stack = [], []
    scopes = 0  # braces open that are not namespaces
    for line in text.splitlines():
        if scopes == 0 and not line.startswith((" ", "\t")):
            kept.append(line)
        for match in re.finditer(r"namespace\s*[\w:]*\s*\{|\{|\}", line.split("//")[0]):
            token = match.group(0)
            if token == "}":
                if depth_stack and depth_stack.pop() == "scope":
                    scopes -= 1
            elif token.startswith("namespace"):
                depth_stack.append("namespace")
            else:
                depth_stack.append("scope")
                scopes += 1
    return kept


def step_config(step, root=ROOT):
    """The configuration of step (a folder name such as "07_async_pipeline"): its `struct Config`
    when its kernel.cu has one, else the file-scope constants of its kernel.cu."""
    text = (Path(root) / step / "kernel.cu").read_text(encoding="utf-8")
    if re.search(r"^struct\s+Config\b", text, re.MULTILINE):
        return declarations(struct_body(text, "Config"))
    return declarations(file_scope_lines(text))


def header_constants(path, root=ROOT):
    """The file-scope constants of a header of the library (path relative to the repository)."""
    return declarations(file_scope_lines((Path(root) / path).read_text(encoding="utf-8")))


def swap_widths(root=ROOT):
    """The widths of the swap kernel's block tile (its wgmma's n) by M, from with_width in
    common/sm90/swap_kernel.cuh: [(largest M, width), ...] and the width for any larger M."""
    text = (Path(root) / "common/sm90/swap_kernel.cuh").read_text(encoding="utf-8")
    body = text[text.index("decltype(auto) with_width"):]
    body = body[:body.index("\n}")]
    bounded = [(int(m), int(w)) for m, w in
               re.findall(r"if \(m <= (\d+)\) return f\(std::integral_constant<int, (\d+)>\{\}\);", body)]
    rest = re.findall(r"\n\s*return f\(std::integral_constant<int, (\d+)>\{\}\);", body)
    if not bounded or not rest:
        raise ValueError("with_width in common/sm90/swap_kernel.cuh no longer reads as a list of widths")
    return bounded, int(rest[-1])


def swap_width(m, root=ROOT):
    """The width with_width picks for M rows."""
    bounded, widest = swap_widths(root)
    return next((width for most, width in bounded if m <= most), widest)


def struct_config(path, name, known=None, root=ROOT):
    """The constants of `struct NAME` in a file of the repository (path relative to it), `known`
    names (a template's arguments: {"rows": 128}) usable in their values but not returned."""
    return declarations(struct_body((Path(root) / path).read_text(encoding="utf-8"), name), known)


MENU_SOURCE = "common/sm90/tile_per_shape.cu"
MENU_ITEM = re.compile(r'item<\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*>\(\s*"((?:[^"\\]|\\.)*)"\s*\)')


def menu_items(root=ROOT):
    """Step 15's menu, in its order, from menu_items() in common/sm90/tile_per_shape.cu (one
    `item<rows, cols, cluster>("description")` an entry): [{"name", "rows", "cols", "cluster",
    "description"}, ...], each named as entry_name names it (menu_<rows>x<cols>_c<cluster>)."""
    text = (Path(root) / MENU_SOURCE).read_text(encoding="utf-8")
    start = text.index("const std::vector<Entry>& menu_items()")
    body = text[start:text.index("\n}", start)]
    entries = [{"name": f"menu_{rows}x{cols}_c{cluster}", "rows": int(rows), "cols": int(cols),
                "cluster": int(cluster), "description": description}
               for rows, cols, cluster, description in MENU_ITEM.findall(body)]
    if not entries:
        raise ValueError(f"menu_items in {MENU_SOURCE} no longer reads as a list of item<rows, cols, cluster>(…)")
    return entries


def menu_entry_config(entry, root=ROOT):
    """The configuration of one entry of the menu: Common's knobs under Tile<rows, cols, cluster>'s
    (block_tile_m, block_tile_n, cluster_size), as tile_per_shape.cu's Tile derives them."""
    common = struct_config(MENU_SOURCE, "Common", root=root)
    tile = struct_config(MENU_SOURCE, "Tile", {"rows": entry["rows"], "cols": entry["cols"],
                                                "cluster": entry["cluster"]}, root=root)
    return dict(common, **tile)
