"""GEMM test cases as text: one per line, "M N K alpha beta [random|nan [lda ldb ldc]]" (the initial
C, then the leading dimensions when the operands are not packed).

`gpu_tests --list-cases` prints the standard cases in this form (common/tests/gpu_tests.cu holds
the list), and an instructor's file of hidden cases uses it too, with # comments and blank lines.
"""
import math
from dataclasses import dataclass

from .steps import UsageError

INITIAL_C = ("random", "nan")
FP32_MAX = 3.4e38


@dataclass(frozen=True)
class Case:
    m: int
    n: int
    k: int
    alpha: float
    beta: float
    initial_c: str = "random"
    source: str = "standard"  # or "instructor": shown to the instructor only
    strides: tuple = ()  # (lda, ldb, ldc), or () for packed operands

    def arguments(self):
        """The step executable's options for this case."""
        strides = []
        for flag, value in zip(("--lda", "--ldb", "--ldc"), self.strides):
            strides += [flag, str(value)]
        return ["--m", str(self.m), "--n", str(self.n), "--k", str(self.k)] + strides + [
            "--alpha", repr(self.alpha), "--beta", repr(self.beta), "--initial-c", self.initial_c]

    def as_record(self):
        record = {"source": self.source, "m": self.m, "n": self.n, "k": self.k, "alpha": self.alpha,
                  "beta": self.beta, "initial_c": self.initial_c}
        if self.strides:
            record["lda"], record["ldb"], record["ldc"] = self.strides
        return record


def parse_cases(text, origin, source):
    """The cases in `text`; `origin` names it in errors ("file:line: ..."), UsageError when malformed."""
    cases = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        where = f"{origin}:{number}"
        words = line.split()
        if len(words) not in (5, 6, 9):
            raise UsageError(f"{where}: expected 'M N K alpha beta [random|nan [lda ldb ldc]]', got '{line}'")
        try:
            m, n, k = (int(w) for w in words[:3])
        except ValueError:
            raise UsageError(f"{where}: M, N and K must be integers, got '{' '.join(words[:3])}'") from None
        if min(m, n, k) < 1 or max(m, n, k) > 2**31 - 1:
            raise UsageError(f"{where}: M, N and K must be between 1 and 2147483647")
        try:
            alpha, beta = float(words[3]), float(words[4])
        except ValueError:
            raise UsageError(f"{where}: alpha and beta must be numbers, got '{words[3]} {words[4]}'") from None
        if not all(math.isfinite(v) and abs(v) <= FP32_MAX for v in (alpha, beta)):
            raise UsageError(f"{where}: alpha and beta must be finite FP32 values")
        initial_c = words[5] if len(words) == 6 else "random"
        if initial_c not in INITIAL_C:
            raise UsageError(f"{where}: the initial C is 'random' or 'nan', got '{initial_c}'")
        if initial_c == "nan" and beta != 0:
            raise UsageError(f"{where}: a NaN initial C needs beta 0 (otherwise every element is NaN)")
        strides = ()
        if len(words) == 9:
            try:
                strides = tuple(int(w) for w in words[6:])
            except ValueError:
                raise UsageError(f"{where}: lda, ldb and ldc must be integers, got '{' '.join(words[6:])}'") from None
            if strides[0] < k or strides[1] < n or strides[2] < n:
                raise UsageError(f"{where}: lda must be at least K, ldb and ldc at least N")
        cases.append(Case(m, n, k, alpha, beta, initial_c, source, strides))
    return cases
