"""Scores from a grading record (grading.json), and the two files made from them: report.md for the
instructor and results.json in the Gradescope autograder format.

Everything here is arithmetic on the record, so recorded gradings (lab/tests/fixtures) test it
without a GPU.
"""
from dataclasses import dataclass, field

from .rubric import performance_fraction, shape_text, sizes_text

CASE_SOURCES = (("standard", "standard cases"), ("instructor", "instructor cases"))


def _round(points):
    return round(points + 0.0, 2)


@dataclass
class Part:
    """One scored part of a step: a Gradescope test. status: "passed" or "failed" for a check
    worth no points (Gradescope shows it so), else None."""
    name: str
    score: float
    max_score: float
    output: str
    visibility: str = "visible"
    status: str = None
    pending: float = 0.0  # without a GPU: the points this part is worth, which the GPU grading scores


@dataclass
class StepScore:
    step: str
    parts: list = field(default_factory=list)

    @property
    def score(self):
        return _round(sum(p.score for p in self.parts))

    @property
    def max_score(self):
        return _round(sum(p.max_score for p in self.parts))

    @property
    def pending(self):
        return _round(sum(p.pending for p in self.parts))


def _case_counts(cases):
    passed = sum(1 for c in cases if c["status"] == "pass")
    return passed, len(cases)


def _case_line(number, case, show_shape):
    status = "pass" if case["status"] == "pass" else case["status"].upper()
    what = case_label(case) if show_shape else f"case {number}"
    return f"{what}: {status}" + (f" ({case['detail']})" if case.get("detail") else "")


def case_label(case):
    nan = ", C = NaN" if case.get("initial_c") == "nan" else ""
    return f"{case['m']}×{case['n']}×{case['k']}, α = {case['alpha']:g}, β = {case['beta']:g}{nan}"


def _not_built(result):
    """Why a step was not built: the compiler refused it, the grader did (integrity), or the
    submission has no kernel for it."""
    return {"no kernel": "not built", "refused": "refused"}.get(result["compile"].get("reason"), "did not compile")


def _check_parts(result, rubric=None):
    """The checks: integrity (only the TODOs changed, no kernel but the step's own), the build and
    the host tests, each a Gradescope test with a status. With the rubric's "checks" (a grading
    recorded before it had them has none), the build, "only the TODOs changed" and the host tests
    are worth points, in both modes, once the submission has written something in its TODOs; and
    lines changed outside the TODOs cost the rubric's price each."""
    step = result["step"]
    checks = (rubric or {}).get("checks") or {}
    parts = []
    todos_only = next((c for c in result.get("integrity", []) if c["check"] == "only the TODOs changed"), None)
    wrote = todos_only is None or todos_only.get("wrote_code", True)
    empty = "no points: the TODOs are as handed out (nothing written)"

    def worth(key, passed_share):
        points = checks.get(key, 0)
        return (_round(points * passed_share) if wrote else 0.0), _round(points)

    for check in result.get("integrity", []):
        if check["status"] == "not run":
            continue
        if check is todos_only and checks:
            share = 1.0 if check["status"] == "pass" else 0.0
            score, maximum = worth("integrity", share)
            output = ("pass" + (f" ({check['detail']})" if check.get("detail") else "") if check["status"] == "pass"
                      else f"{check['status'].upper()}: {check['detail']}")
            if not wrote and maximum:
                output += f"\n{empty}"
            parts.append(Part(f"{step}: integrity, {check['check']}", score, maximum, output,
                              status="passed" if check["status"] == "pass" else "failed"))
            continue
        parts.append(Part(f"{step}: integrity, {check['check']}", 0.0, 0.0,
                          check["status"] if check["status"] == "pass" else f"FAIL: {check['detail']}",
                          status="passed" if check["status"] == "pass" else "failed"))
    no_gpu = result.get("mode") == "no-gpu"
    if no_gpu or checks:
        built = result["compile"]["ok"]
        score, maximum = worth("build", 1.0 if built else 0.0)
        output = "compiles and links" if built else f"{_not_built(result)}:\n{result['compile'].get('error', '')}".rstrip()
        if built and not wrote and maximum:
            output += f"\n{empty}"
        parts.append(Part(f"{step}: builds", score, maximum, output, status="passed" if built else "failed"))
        host = result.get("host_tests")
        title = f"{step}: host tests" + (" (no GPU)" if no_gpu else "")
        if host is None:
            parts.append(Part(title, 0.0, _round(checks.get("host_tests", 0)), f"not run: {_not_built(result)}",
                              status="failed"))
        else:
            ok = sum(1 for r in host if r["status"] == "pass")
            score, maximum = worth("host_tests", ok / len(host) if host else 1.0)
            lines = [f"{ok} of {len(host)} host tests pass"] + [
                f"{r['test']}: {r['status'].upper()}" + (f" ({r['detail']})" if r.get("detail") else "")
                for r in host if r["status"] != "pass"]
            if not wrote and maximum:
                lines.append(empty)
            parts.append(Part(title, score, maximum, "\n".join(lines), status="passed" if ok == len(host) else "failed"))
    return parts


def _penalty_part(result, rubric, scored_so_far):
    """Lines changed outside the TODOs (integrity status "changed"): the rubric's price per line,
    never below a step score of 0."""
    todos_only = next((c for c in result.get("integrity", []) if c["check"] == "only the TODOs changed"), None)
    if not todos_only or todos_only["status"] != "changed":
        return None
    lines = len(todos_only.get("changed_lines", []))
    price = (rubric.get("integrity") or {}).get("per_changed_line", 0)
    cost = min(_round(lines * price), max(scored_so_far, 0.0))
    return Part(f"{result['step']}: integrity, {lines} line(s) changed outside the TODOs", -cost, 0.0,
                f"-{cost:g} points ({price:g} per line): {todos_only['detail']}", status="failed")


NOT_RUN_WITHOUT_GPU = "not run: graded without a GPU (the GPU grading scores this part)"
PENDING = "pending: {points:g} points, which the grading on a GPU scores"


def score_step(result, rubric):
    """The step's parts, scored by the rubric (see lab/README.md, "The rubric")."""
    step = result["step"]
    scored = StepScore(step)
    compiled = result["compile"]["ok"]
    cases = result.get("cases", [])
    passed, total = _case_counts(cases)
    not_compiled = f"{_not_built(result)}:\n{result['compile'].get('error', '')}".rstrip()
    if result.get("mode") == "no-gpu":
        # The no-GPU grade: the checks are scored; the GPU parts are listed as pending, with their points.
        for title, key in (("correctness", "correctness"), ("compute-sanitizer", "sanitizer"),
                           ("performance", "performance")):
            points = rubric[key]["points"] if rubric.get("checks") else 0.0
            output = not_compiled if not compiled else NOT_RUN_WITHOUT_GPU
            if points:
                output = PENDING.format(points=points) + "\n" + output
            scored.parts.append(Part(f"{step}: {title}", 0.0, 0.0, output, pending=_round(points)))
        scored.parts += _check_parts(result, rubric)
        penalty = _penalty_part(result, rubric, scored.score)
        if penalty:
            scored.parts.append(penalty)
        return scored

    # Correctness: every case is worth the same share of the points, hidden ones included.
    points = rubric["correctness"]["points"]
    for source, title in CASE_SOURCES:
        mine = [c for c in cases if c["source"] == source]
        if not mine and source == "instructor":
            continue
        share = points * len(mine) / total if total else points
        ok, count = _case_counts(mine)
        if not compiled:
            output = not_compiled
        else:
            # The instructor's cases stay hidden: students see how many passed, not the shapes.
            lines = [_case_line(i, c, source == "standard") for i, c in enumerate(mine, start=1)
                     if c["status"] != "pass"]
            output = "\n".join([f"{ok} of {count} {title} pass"] + lines)
        visibility = rubric["instructor_cases_visibility"] if source == "instructor" else "visible"
        scored.parts.append(Part(f"{step}: correctness, {title}", _round(share * ok / count) if count else 0.0,
                                 _round(share), output, visibility))

    # Sanitizer: the share of clean runs; optionally only once the kernel computes something.
    points = rubric["sanitizer"]["points"]
    runs = result.get("sanitizer", [])
    clean = sum(1 for r in runs if r["status"] == "pass")
    if not compiled:
        score, output = 0.0, not_compiled
    elif rubric["sanitizer"]["requires_a_passing_case"] and passed == 0:
        score, output = 0.0, "no points: no correctness case passes"
    elif not runs:
        score, output = 0.0, result.get("sanitizer_note") or "no sanitizer run"
    else:
        score = points * clean / len(runs)
        output = "\n".join([f"{clean} of {len(runs)} runs clean"] +
                           [f"{r['run']}: {r['status'].upper()}" + (f" ({r['detail']})" if r.get("detail") else "")
                            for r in runs if r["status"] != "pass"])
    scored.parts.append(Part(f"{step}: compute-sanitizer", _round(score), _round(points), output))

    # Performance: against the reference solution, only when every case passes.
    points = rubric["performance"]["points"]
    perf = result.get("performance") or {}
    speed = performance_text(perf)
    if result.get("self_check"):
        # A student copy has no reference solution: the instructor's grading scores this part.
        scored.parts.append(Part(f"{step}: performance (scored by the instructor's grading)", 0.0, 0.0,
                                 speed or perf.get("note", "")))
        scored.parts += _check_parts(result, rubric)
        penalty = _penalty_part(result, rubric, scored.score)
        if penalty:
            scored.parts.append(penalty)
        return scored
    if not compiled:
        score, output = 0.0, not_compiled
    elif passed < total:
        score, output = 0.0, f"no points: {total - passed} correctness case(s) fail"
    elif not (perf.get("submission_check") == "PASS" and perf.get("submission_tflops")
              and perf.get("reference_tflops")):
        score, output = 0.0, "no points: " + (perf.get("note") or "the performance run did not complete")
    else:
        ratio = perf.get("ratio") or perf["submission_tflops"] / perf["reference_tflops"]
        score = points * performance_fraction(ratio, rubric)
        output = speed + (f"\nscored ratio (median share of cuBLAS in each run, submission over reference): "
                          f"{100 * ratio:.1f}%" if perf.get("ratio") else "")
    if speed and speed not in output:
        output += "\n" + speed
    if perf.get("other_processes"):
        output += ("\nother processes used the GPU while it was timed (" + ", ".join(perf["other_processes"])
                   + "): ask for a regrade if these points look low")
    scored.parts.append(Part(f"{step}: performance", _round(score), _round(points), output))
    scored.parts += _check_parts(result, rubric)
    penalty = _penalty_part(result, rubric, scored.score)
    if penalty:
        scored.parts.append(penalty)
    return scored


def performance_text(perf):
    """"8.10 TFLOP/s: 98.2% of the reference solution (8.25), 15.8% of cuBLAS (51.2)", or ""."""
    tflops = perf.get("submission_tflops")
    if not tflops:
        return ""
    text = f"{tflops:.2f} TFLOP/s"
    comparisons = []
    if perf.get("reference_tflops"):
        comparisons.append(f"{100 * tflops / perf['reference_tflops']:.1f}% of the reference solution "
                           f"({perf['reference_tflops']:.2f})")
    if perf.get("cublas_tflops"):
        comparisons.append(f"{100 * tflops / perf['cublas_tflops']:.1f}% of cuBLAS ({perf['cublas_tflops']:.2f})")
    return text + (": " + ", ".join(comparisons) if comparisons else "")


def score_record(record):
    return [score_step(dict(result, mode=record.get("mode", "gpu")), record["rubric"]) for result in record["steps"]]


def gradescope_results(record, scores):
    """results.json: Gradescope's autograder format (top-level score, one test per scored part)."""
    # A pending part (without a GPU) is a test with no score: Gradescope shows its output, not "0 of 0".
    tests = [dict({"name": p.name, **({} if p.pending else {"score": p.score, "max_score": p.max_score}),
                   "output": p.output, "visibility": p.visibility}, **({"status": p.status} if p.status else {}))
             for s in scores for p in s.parts]
    total = _round(sum(s.score for s in scores))
    maximum = _round(sum(s.max_score for s in scores))
    pending = _round(sum(s.pending for s in scores))
    summary = ", ".join(f"{s.step} {s.score:g}/{s.max_score:g}" for s in scores)
    later = f"; {pending:g} more pending, for the grading on a GPU" if pending else ""
    return {"score": total, "output": f"{total:g} of {maximum:g} points: {summary}{later}" + (
            f" (GPU: {record['gpu']})" if record.get("gpu") else ""), "visibility": "visible", "tests": tests}


def _cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def markdown_report(record, scores):
    rubric = record["rubric"]
    perf_rubric = rubric["performance"]
    size = sizes_text(rubric, [r["step"] for r in record["steps"]],
                      {r["step"]: (r.get("performance") or {}).get("size") for r in record["steps"]})
    total = _round(sum(s.score for s in scores))
    maximum = _round(sum(s.max_score for s in scores))
    pending = _round(sum(s.pending for s in scores))
    checked = bool(rubric.get("checks"))
    lines = [
        "# Grading report",
        "",
        f"- submission: `{record['submission']}`",
        f"- reference: `{record['reference']}`" + (f" (commit {record['reference_commit'][:12]})"
                                                   if record.get("reference_commit") else ""),
        f"- GPU: {record.get('gpu') or ('none, graded without one (--no-gpu)' if record.get('mode') == 'no-gpu' else 'unknown')}"
        f"; graded {record.get('started', '')}",
        f"- rubric per step: correctness {rubric['correctness']['points']:g}, compute-sanitizer "
        f"{rubric['sanitizer']['points']:g}, performance {perf_rubric['points']:g} {size} (full points from "
        f"{perf_rubric['full_at']:.0%} of the reference solution's speed, none at {perf_rubric['zero_at']:.0%}; "
        "only when every correctness case passes)",
        "",
        f"**Total: {total:g} of {maximum:g}**" + (
            f" (graded without a GPU; {pending:g} more points pending, for the grading on a GPU)" if pending else ""),
        "",
        "| step | " + ("checks | " if checked else "") + "correctness | sanitizer | performance | total | pass mark "
        f"({rubric.get('pass_mark', 60):g}) |",
        "|---|" + ("---:|" if checked else "") + "---:|---:|---:|---:|---|",
    ]
    for s in scores:
        by_kind = {"checks": [0.0, 0.0, 0.0], "correctness": [0.0, 0.0, 0.0], "sanitizer": [0.0, 0.0, 0.0],
                   "performance": [0.0, 0.0, 0.0]}
        for p in s.parts:
            kind = _kind(p) or "checks"
            by_kind[kind][0] += p.score
            by_kind[kind][1] += p.max_score
            by_kind[kind][2] += p.pending
        cells = [f"pending ({_round(c):g})" if c else f"{_round(a):g} / {_round(b):g}"
                 for kind, (a, b, c) in by_kind.items() if checked or kind != "checks"]
        lines.append(f"| {s.step} | " + " | ".join(cells) + f" | **{s.score:g} / {s.max_score:g}** | "
                     + passed_cell(s, record) + " |")
    lines.append("")
    for result, s in zip(record["steps"], scores):
        lines += _step_section(dict(result, mode=record.get("mode", "gpu")), s)
    return "\n".join(lines) + "\n"


def passes(scored, record):
    """Whether a step's score reaches the rubric's pass mark; None where the grading could not
    score it whole (without a GPU)."""
    if record.get("mode") == "no-gpu":
        return None
    return scored.score >= record["rubric"].get("pass_mark", 60)


def passed_cell(scored, record):
    verdict = passes(scored, record)
    return "not scored (no GPU)" if verdict is None else "reached" if verdict else "**below**"


def _step_section(result, scored):
    step = result["step"]
    lines = [f"## {step}: {scored.score:g} of {scored.max_score:g}", ""]
    if result.get("self_check"):
        lines += ["This tree is a student copy without the reference solution of this step: performance is shown "
                  "against cuBLAS and scored by the instructor's grading.", ""]
    if not result["compile"]["ok"]:
        headline = {"did not compile": "**Did not compile.** The compiler's first error:",
                    "refused": "**Refused** (integrity, lab/labkit/integrity.py), so not built or run:"}.get(
                        _not_built(result), "**Not built:** nothing to compile.")
        lines += [headline, "", "```",
                  result["compile"].get("error", "").rstrip(), "```", ""]
        return lines
    checks = [p for p in scored.parts if _kind(p) is None]
    if checks:
        lines += ["### Checks", "", "| check | points | result |", "|---|---:|---|"]
        lines += [f"| {p.name.split(': ', 1)[-1]} | {p.score:g} / {p.max_score:g} | {_cell(p.output)} |" for p in checks]
        lines.append("")
    if result.get("mode") == "no-gpu":
        for p in scored.parts:
            if p.pending:
                lines += [f"### {p.name.split(': ', 1)[-1].capitalize()}: pending ({p.pending:g} points)", "",
                          "Not run: graded without a GPU; the grading on a GPU scores it.", ""]
        return lines
    cases = result.get("cases", [])
    passed, total = _case_counts(cases)
    lines += [f"### Correctness: {passed} of {total} cases pass", "",
              "| # | from | case | result | first wrong element or error |", "|---:|---|---|---|---|"]
    for number, case in enumerate(cases, start=1):
        result_cell = "pass" if case["status"] == "pass" else f"**{case['status'].upper()}**"
        detail = _cell(case.get("detail", ""))
        lines.append(f"| {number} | {case['source']} | {case_label(case)} | {result_cell} | {detail} |")
    lines.append("")
    runs = result.get("sanitizer", [])
    lines += ["### compute-sanitizer", ""]
    if runs:
        lines += ["| run | result | detail |", "|---|---|---|"]
        lines += [f"| {r['run']} | {r['status'] if r['status'] == 'pass' else '**' + r['status'].upper() + '**'} | "
                  f"{_cell(r.get('detail', ''))} |" for r in runs]
    if result.get("sanitizer_note"):
        lines.append(("" if not runs else "\n") + result["sanitizer_note"])
    lines.append("")
    perf = result.get("performance") or {}
    lines += [f"### Performance at {shape_text(perf.get('size', []))}", ""]
    if perf.get("submission_tflops"):
        lines += ["| kernel | TFLOP/s | % of reference | % of cuBLAS |", "|---|---:|---:|---:|"]
        rows = [("submission", perf.get("submission_tflops")), ("reference solution", perf.get("reference_tflops")),
                ("cuBLAS", perf.get("cublas_tflops"))]
        for name, tflops in rows:
            if not tflops:
                continue
            of_reference = f"{100 * tflops / perf['reference_tflops']:.1f}%" if perf.get("reference_tflops") else "—"
            of_cublas = f"{100 * tflops / perf['cublas_tflops']:.1f}%" if perf.get("cublas_tflops") else "—"
            lines.append(f"| {name} | {tflops:.2f} | {of_reference} | {of_cublas} |")
        lines.append("")
    if perf.get("note"):
        lines += [perf["note"], ""]
    part = next((p for p in scored.parts if "performance" in p.name), None)
    if part and part.max_score:
        lines += [f"Performance points: {part.score:g} of {part.max_score:g}.", ""]
    return lines


# ---- a class: one CSV row per grading (lab.py collect) ------------------------------------------------

FIXED_COLUMNS = ["submission", "mode", "level", "graded", "gpu", "total", "max_total", "pending", "refused_steps",
                 "other_gpu_processes"]
PART_KINDS = ("correctness", "sanitizer", "performance")


def _kind(part):
    """correctness, sanitizer, performance, or None for the checks (integrity, build, host tests)."""
    name = part.name.split(": ", 1)[-1]
    return "correctness" if name.startswith("correctness") else "sanitizer" if "sanitizer" in name else \
        "performance" if name.startswith("performance") else None


def step_status(result, mode):
    """One word or phrase per step for the class table."""
    if not result["compile"]["ok"]:
        return _not_built(result)
    if mode == "no-gpu":
        host = result.get("host_tests", [])
        return "built, host tests " + ("pass" if all(r["status"] == "pass" for r in host) else "FAIL") + ", no GPU run"
    cases = result.get("cases", [])
    passed, total = _case_counts(cases)
    return f"{passed}/{total} cases"


def class_row(name, record):
    """The CSV row of one grading (its folder's name): totals, then per step its score, the score
    of each part, its status and its speed."""
    mode = record.get("mode", "gpu")
    scores = score_record(record)
    row = {"submission": name, "mode": mode, "level": record.get("level", "easy"), "graded": record.get("started", ""),
           "gpu": record.get("gpu") or "", "total": _round(sum(s.score for s in scores)),
           "max_total": _round(sum(s.max_score for s in scores)),
           "pending": _round(sum(s.pending for s in scores)) or "",
           "refused_steps": " ".join(r["step"] for r in record["steps"] if r["compile"].get("reason") == "refused"),
           "other_gpu_processes": "; ".join(sorted({p for r in record["steps"]
                                                    for p in (r.get("performance") or {}).get("other_processes", [])}))}
    for result, scored in zip(record["steps"], scores):
        step = result["step"]
        row[f"{step}"] = scored.score
        if record["rubric"].get("checks"):
            row[f"{step} checks"] = _round(sum(p.score for p in scored.parts if _kind(p) is None))
        for kind in PART_KINDS:
            pending = sum(p.pending for p in scored.parts if _kind(p) == kind)
            row[f"{step} {kind}"] = "pending" if pending else _round(sum(p.score for p in scored.parts
                                                                          if _kind(p) == kind))
        row[f"{step} status"] = step_status(result, mode)
        verdict = passes(scored, record)
        row[f"{step} passes"] = "" if verdict is None else "yes" if verdict else "no"
        perf = result.get("performance") or {}
        row[f"{step} tflops"] = f"{perf['submission_tflops']:.2f}" if perf.get("submission_tflops") else ""
    return row


def class_columns(rows):
    """The fixed columns, then each step's, in the order the gradings name the steps."""
    columns = list(FIXED_COLUMNS)
    for row in rows:
        for key in row:
            if key not in columns:
                columns.append(key)
    return columns
