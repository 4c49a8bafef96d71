"""Token sequences for the leak check: a removed solution must not be left anywhere in a handout,
not even renamed or reformatted.

Code is split into C/C++/CUDA tokens: comments, preprocessor lines (#pragma unroll) and loop
headers (`for (...)`, which every kernel has) are dropped, qualifiers too (`C::stage_bytes` is
`stage_bytes`), and a string or character literal is one token. A run of tokens is compared in a
normalized form: keywords and punctuation stay as they are, and every identifier (variable,
function, type, member) and every number becomes the index of its first appearance in the run.
A copy whose names were all changed consistently is then the same run, while code that merely
has the same shape, each name in its own place, is not.

Runs start where a statement starts (after `;`, `{`, `}`, `:`, `else`, `do`, or an `if`/`while`
condition), so that a match is a statement's worth of the same code rather than the tail of one
and the head of the next, which unrelated kernels share more easily. A region's solution gives a
fingerprint for every run of WINDOW tokens that starts a statement; a region whose code is shorter
gives one of its whole length if it has at least MINIMUM tokens (shorter code is too likely to
recur by chance: the line check of release.py covers it). A handout file leaks where any of its
runs is a fingerprint.

On this repository's steps, WINDOW = 16 finds each later step's reuse of an earlier step's
solution (09's TMA producer in 10) and, with runs that call nothing left out (calls_something),
nothing that is mere common shape; lab/tests/test_release.py checks both, and that a renamed copy
is found.
"""
import re
from collections import defaultdict

WINDOW = 16   # tokens per fingerprint: about one statement with its arguments
MINIMUM = 12  # a region with fewer tokens of code gives no fingerprint (the line check remains)

KEYWORDS = frozenset("""
alignas alignof asm auto bool break case catch char char16_t char32_t class const const_cast constexpr continue
decltype default delete do double dynamic_cast else enum explicit extern false float for friend goto if inline int
long mutable namespace new noexcept nullptr operator private protected public register reinterpret_cast return
short signed sizeof static static_assert static_cast struct switch template this throw true try typedef typeid
typename union unsigned using virtual void volatile wchar_t while
__global__ __device__ __host__ __shared__ __constant__ __forceinline__ __launch_bounds__ __restrict__
pragma unroll include define
""".split())

# Comments, then the tokens: strings and characters, numbers, identifiers, multi-character
# operators, any other single character. (Raw strings are rare in kernels: taken as ordinary ones.)
COMMENT = re.compile(r"""(?P<literal>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')|//[^\n]*|/\*.*?\*/""", re.DOTALL)
TOKEN = re.compile(r"""
    (?P<string>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')
  | (?P<number>0[xX][0-9a-fA-F]+[uUlL]*|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[uUlLfF]*)
  | (?P<name>[A-Za-z_]\w*)
  | (?P<op>::|->|<<=|>>=|<<|>>|<=|>=|==|!=|&&|\|\||\+\+|--|[-+*/%&|^]=)
  | (?P<other>[^\s\w])
""", re.VERBOSE)
C_FAMILY = (".cu", ".cuh", ".cpp", ".cc", ".cxx", ".c", ".hpp", ".hh", ".h")

NAME, NUMBER, STRING, FIXED = "n", "#", "s", "="


class Token:
    __slots__ = ("kind", "text", "line")

    def __init__(self, kind, text, line):
        self.kind, self.text, self.line = kind, text, line


def tokenize(text, path=""):
    """The tokens of `text`, each with its 1-based line. Comments are dropped in C-family files
    (elsewhere `//` may be code: Python's floor division, a URL)."""
    if path.endswith(C_FAMILY):
        text = COMMENT.sub(lambda m: m.group("literal") or "\n" * m.group(0).count("\n") or " ", text)
    tokens, line, position = [], 1, 0
    for match in TOKEN.finditer(text):
        line += text.count("\n", position, match.start())
        position = match.start()
        kind = match.lastgroup
        value = match.group(0)
        if kind == "name":
            tokens.append(Token(FIXED if value in KEYWORDS else NAME, value, line))
        elif kind == "number":
            tokens.append(Token(NUMBER, value, line))
        elif kind == "string":
            tokens.append(Token(STRING, "", line))
        else:
            tokens.append(Token(FIXED, value, line))
    return drop_loop_headers(drop_preprocessor_lines(drop_qualifiers(tokens)))


def drop_loop_headers(tokens):
    """Without `for (...)`: loop headers recur in every kernel (the line check ignores them too);
    what a loop does is in its body."""
    kept, index = [], 0
    while index < len(tokens):
        if tokens[index].text == "for" and index + 1 < len(tokens) and tokens[index + 1].text == "(":
            depth, index = 0, index + 1
            while index < len(tokens):
                depth += {"(": 1, ")": -1}.get(tokens[index].text, 0)
                index += 1
                if depth == 0:
                    break
            continue
        kept.append(tokens[index])
        index += 1
    return kept


def drop_preprocessor_lines(tokens):
    """Without the lines that start with # (#pragma unroll, #include): not code a solution is in."""
    skip_lines = {t.line for i, t in enumerate(tokens) if t.text == "#" and (i == 0 or tokens[i - 1].line != t.line)}
    return [t for t in tokens if t.line not in skip_lines]


def drop_qualifiers(tokens):
    """Without the qualifiers before a name: `C :: stage_bytes` and `:: f` become `stage_bytes`, `f`."""
    kept, index = [], 0
    while index < len(tokens):
        token = tokens[index]
        follows = tokens[index + 1:index + 3]
        if token.kind == NAME and len(follows) == 2 and follows[0].text == "::" and follows[1].kind == NAME:
            index += 2  # the qualifier and its ::
            continue
        if token.text == "::" and follows and follows[0].kind == NAME:
            index += 1
            continue
        kept.append(token)
        index += 1
    return kept


def statement_starts(tokens, limit):
    """The indexes below limit where a statement begins: the first token, each token after `;`,
    `{`, `}`, `:` (a label, a case; a ternary's second half too, harmlessly), `else` or `do`, and
    the body of an `if`, `while` or `switch` after its condition. Fingerprints start there, so
    that a match is a statement's worth of the same code, not the tail of one and the head of the
    next, which two unrelated kernels share more easily."""
    starts = set()
    for index, token in enumerate(tokens):
        if index == 0 or tokens[index - 1].text in (";", "{", "}", ":", "else", "do"):
            starts.add(index)
        if token.text in ("if", "while", "switch"):
            opening = index + 1
            if opening < len(tokens) and tokens[opening].text == "constexpr":
                opening += 1
            if opening < len(tokens) and tokens[opening].text == "(":
                depth = 0
                for later in range(opening, len(tokens)):
                    depth += {"(": 1, ")": -1}.get(tokens[later].text, 0)
                    if depth == 0:
                        starts.add(later + 1)
                        break
    return sorted(i for i in starts if i < limit)


def shape(tokens):
    """What a sequence looks like with every name, number and string alike: a cheap first test."""
    return tuple(t.kind if t.kind != FIXED else t.text for t in tokens)


def normalized(tokens):
    """The sequence with each name and each number replaced by the index of its first appearance
    (names and numbers counted apart); strings are all alike."""
    first = {}
    out = []
    for token in tokens:
        if token.kind in (NAME, NUMBER):
            key = (token.kind, token.text)
            out.append(token.kind + str(first.setdefault(key, len(first))))
        else:
            out.append(token.kind if token.kind == STRING else token.text)
    return tuple(out)


def calls_something(run):
    """Whether the run calls a function (a name followed by `(`). A run that calls nothing is index
    arithmetic of the kind every kernel has (`const int r = e / width, c = e % width; tile[r]`, which
    a WMMA staging loop and a tile load share), too common to call a copy; the line check of
    release.py still covers such lines."""
    return any(a.kind == NAME and b.text == "(" for a, b in zip(run, run[1:]))


class Fingerprints:
    """The normalized runs of tokens of removed solutions, each with where it comes from."""

    def __init__(self):
        self.by_shape = defaultdict(dict)  # length -> {shape: {normalized: origin}}

    def add_code(self, tokens, origin_of):
        """Fingerprints of one region's code: `tokens`, and origin_of(token) -> 'path:line'."""
        if len(tokens) < MINIMUM:
            return
        length = min(WINDOW, len(tokens))
        table = self.by_shape[length]
        for start in statement_starts(tokens, len(tokens) - length + 1):
            run = tokens[start:start + length]
            if not calls_something(run):
                continue
            table.setdefault(shape(run), {}).setdefault(normalized(run), origin_of(run[0]))

    def __bool__(self):
        return bool(self.by_shape)

    def find(self, tokens):
        """[(line of the first token, origin)] of every run of `tokens` that is a fingerprint; runs
        that overlap count once, at the first."""
        found, covered_until = [], -1
        kinds = shape(tokens)
        for length, table in self.by_shape.items():
            for start in statement_starts(tokens, len(tokens) - length + 1):
                candidates = table.get(kinds[start:start + length])
                if not candidates:
                    continue
                origin = candidates.get(normalized(tokens[start:start + length]))
                if origin and start > covered_until:
                    found.append((tokens[start].line, origin))
                if origin:
                    covered_until = start + length - 1
        return sorted(set(found))
