"""What the build lists and what each step registers, read from the sources, so that the README
tooling describes nothing a second time.

    steps(root)          the steps, in order: the add_worklog_step() lines of root/CMakeLists.txt
    read(root, step)     the Registration of root/STEP/kernel.cu
    parse(text, path)    the Registration of a kernel.cu's text

A step registers itself once, at the end of its kernel.cu (common/step.hpp):

    WORKLOG_REGISTER_STEP(Step<__half>{"07_async_pipeline", launch}
                              .adds("cp.async pipeline, "
                                    "tiles shared in smem")
                              .variant("stages3", "3 pipeline stages", launch_stages3))

A Registration holds the step's name (the first string of its Step{...}), what it adds (the
.adds(...) string) and its variants in their order of registration, each with its description (the
second argument of .variant(...)). Adjacent string literals are one string, as in C++; comments and
preprocessor lines are not read. An argument that is not made of string literals (a named constant)
is a RegistrationError, as is a kernel.cu without exactly one registration. Standard library only.
"""
import re
from collections import namedtuple
from pathlib import Path

KERNEL = "kernel.cu"
MACRO = "WORKLOG_REGISTER_STEP"
STEP_LINE = re.compile(r"^[ \t]*add_worklog_step[ \t]*\([ \t\n]*(\d\d_[A-Za-z0-9_]+)", re.MULTILINE)

# variants: {name: description} in the order of registration; line: where the registration starts.
Registration = namedtuple("Registration", "step adds variants path line")


class RegistrationError(Exception):
    """A kernel.cu whose registration cannot be read, said in one line ("path:line: what")."""


def steps(root):
    """The steps the build makes, in its order: the first argument of each add_worklog_step() line of
    root/CMakeLists.txt (the build's list, which CMake also writes to worklog_steps.txt)."""
    path = Path(root) / "CMakeLists.txt"
    try:
        return STEP_LINE.findall(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise RegistrationError(f"{path}: {e.strerror or e}") from None


# ---- C++ tokens --------------------------------------------------------------------------------

Token = namedtuple("Token", "kind text line")  # kind: string, name, number, punct

TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<raw>(?:u8|[uUL])?R"(?P<delim>[^()\\\s"]{0,16})\((?P<raw_body>.*?)\)(?P=delim)")
  | (?P<string>(?:u8|[uUL])?"(?P<body>(?:[^"\\\n]|\\.)*)")
  | (?P<char>(?:u8|[uUL])?'(?:[^'\\\n]|\\.)+')
  | (?P<number>\.?\d(?:[eEpP][+-]|'(?=\w)|[\w.])*)
  | (?P<name>[A-Za-z_]\w*)
  | (?P<punct>::|->|\.\.\.|[^\s\w])
""", re.VERBOSE | re.DOTALL)
DIRECTIVE = re.compile(r"[ \t]*#(?:[^\n\\]|\\.)*", re.DOTALL)  # a preprocessor line, continuations included
ESCAPE = re.compile(r"\\(?:([0-7]{1,3})|x([0-9A-Fa-f]+)|u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))", re.DOTALL)
SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v",
                  "\\": "\\", "'": "'", '"': '"', "?": "?"}


def _unescape(body):
    def one(m):
        octal, hexadecimal, short, long, simple = m.groups()
        if simple is not None:
            return SIMPLE_ESCAPES.get(simple, simple)
        return chr(int(octal, 8) if octal else int(hexadecimal or short or long, 16))
    return ESCAPE.sub(one, body)


def tokens(text, path="kernel.cu"):
    """The C++ tokens of a source text, without comments and preprocessor lines; a string token's
    text is its value (escapes decoded)."""
    found, at, line, line_start = [], 0, 1, True
    while at < len(text):
        if line_start:
            directive = DIRECTIVE.match(text, at)
            if directive and directive.group(0).lstrip().startswith("#"):
                line += directive.group(0).count("\n")
                at = directive.end()
                line_start = False
                continue
        m = TOKEN.match(text, at)
        if not m:
            raise RegistrationError(f"{path}:{line}: cannot read the C++ here: {text[at:at + 20]!r}")
        kind = next(k for k in ("space", "comment", "raw", "string", "char", "number", "name", "punct")
                    if m.group(k) is not None)
        if kind == "raw":
            found.append(Token("string", m.group("raw_body"), line))
        elif kind == "string":
            found.append(Token("string", _unescape(m.group("body")), line))
        elif kind not in ("space", "comment"):
            found.append(Token(kind, m.group(0), line))
        newlines = m.group(0).count("\n")
        line += newlines
        if newlines:
            line_start = True
        elif kind not in ("space", "comment"):
            line_start = False
        at = m.end()
    return found


# ---- The registration ----------------------------------------------------------------------------

def _strings(tokens_, at, path, what):
    """(the concatenated value of the adjacent string literals at tokens_[at], the index after them)."""
    end = at
    while end < len(tokens_) and tokens_[end].kind == "string":
        end += 1
    if end == at:
        where = tokens_[at].line if at < len(tokens_) else tokens_[-1].line
        raise RegistrationError(f"{path}:{where}: {what} is not a string literal")
    return "".join(t.text for t in tokens_[at:end]), end


def _arguments(tokens_, open_at, path):
    """The index of the ')' that closes the '(' at tokens_[open_at]."""
    depth = 0
    for index in range(open_at, len(tokens_)):
        if tokens_[index].text == "(":
            depth += 1
        elif tokens_[index].text == ")":
            depth -= 1
            if depth == 0:
                return index
    raise RegistrationError(f"{path}:{tokens_[open_at].line}: {MACRO}( has no closing parenthesis")


def _is_call(tokens_, index, method):
    """Whether tokens_[index:] is `.method(`."""
    return (index + 2 < len(tokens_) and tokens_[index].text == "." and tokens_[index + 1].kind == "name"
            and tokens_[index + 1].text == method and tokens_[index + 2].text == "(")


def parse(text, path="kernel.cu"):
    """The Registration of a kernel.cu's text; RegistrationError ("path:line: what") when it has no
    registration, more than one, or one whose name, .adds or a variant's name or description is not
    made of string literals."""
    all_tokens = tokens(text, path)
    calls = [i for i, t in enumerate(all_tokens) if t.kind == "name" and t.text == MACRO
             and i + 1 < len(all_tokens) and all_tokens[i + 1].text == "("]
    if len(calls) != 1:
        raise RegistrationError(f"{path}: {'no' if not calls else len(calls)} {MACRO}(...) statements "
                                "(a kernel.cu registers its step once)")
    start = calls[0] + 1
    body = all_tokens[start + 1:_arguments(all_tokens, start, path)]
    brace = next((i for i, t in enumerate(body) if t.text == "{"), None)
    if brace is None:
        raise RegistrationError(f"{path}:{all_tokens[calls[0]].line}: no Step<...>{{\"NAME\", launcher}} in {MACRO}")
    step, _ = _strings(body, brace + 1, path, "the step's name")
    adds, variants = None, {}
    for index in range(len(body)):
        if _is_call(body, index, "adds"):
            if adds is not None:
                raise RegistrationError(f"{path}:{body[index].line}: .adds(...) given twice")
            adds, _ = _strings(body, index + 3, path, ".adds(...)'s argument")
        elif _is_call(body, index, "variant"):
            name, after = _strings(body, index + 3, path, "a variant's name")
            if after >= len(body) or body[after].text != ",":
                raise RegistrationError(f"{path}:{body[index].line}: .variant(\"{name}\", ...) has no description")
            description, _ = _strings(body, after + 1, path, f"the description of the variant '{name}'")
            if name in variants:
                raise RegistrationError(f"{path}:{body[index].line}: the variant '{name}' is registered twice")
            variants[name] = description
    if adds is None:
        raise RegistrationError(f"{path}:{all_tokens[calls[0]].line}: the step '{step}' has no .adds(...)")
    return Registration(step, adds, variants, str(path), all_tokens[calls[0]].line)


def read(root, step):
    """The Registration of root/STEP/kernel.cu, checked to register STEP."""
    path = Path(root) / step / KERNEL
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise RegistrationError(f"{path}: {e.strerror or e}") from None
    registration = parse(text, path)
    if registration.step != step:
        raise RegistrationError(f"{path}:{registration.line}: registers '{registration.step}', not '{step}'")
    return registration
