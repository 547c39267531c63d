"""What a sweep found: the result document (report.json), its Markdown form (report.md), the
environment file gasnetrun loads (tuned.env), and the table printed on the terminal."""
from __future__ import annotations

import json
import math
import os
from typing import Any

from rich.console import Console
from rich.table import Table


def num(x: float | None) -> float:
    """A number of report.json (which stores infinities as null: strict JSON has none)."""
    return math.nan if x is None else float(x)


def clean(obj: Any) -> Any:
    """obj with every non-finite float made null, for strict JSON."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [clean(v) for v in obj]
    return obj


def value_of(cost: float | None, better: str) -> float:
    """A cost back in the objective's own unit (single objectives)."""
    cost = num(cost)
    if not math.isfinite(cost):
        return math.nan  # a failed point has no figure
    return math.exp(cost) if better == "lower" else math.exp(-cost)


def interval(est: dict[str, Any], better: str) -> tuple[float, float, float]:
    """(median, low, high) of a cost estimate in the objective's unit."""
    med = value_of(est["median"], better)
    if not (math.isfinite(num(est["low"])) and math.isfinite(num(est["high"]))):
        return med, math.nan, math.nan  # one run, or a failure: no interval to show
    a, b = value_of(est["low"], better), value_of(est["high"], better)
    return med, min(a, b), max(a, b)


def fmt(x: float) -> str:
    if not math.isfinite(x):
        return "-" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    return f"{x:.4g}"


def fmt_gain(g: dict[str, float]) -> str:
    """The gain with its interval; without a figure or an interval, why not (one side had no
    successful run, or fewer than 2), never a bare dash."""
    med, low, high = num(g["median"]), num(g["low"]), num(g["high"])
    if not math.isfinite(med):
        return "none (a side has no successful run)"
    if not (math.isfinite(low) and math.isfinite(high)):
        return f"{med * 100:+.1f}% (no interval: a side has fewer than 2 successful runs)"
    return f"{med * 100:+.1f}% (95% interval {low * 100:+.1f}% .. {high * 100:+.1f}%)"


def figure_line(doc: dict[str, Any], name: str) -> str:
    med, lo, hi = interval(doc[name], doc["better"])
    if not math.isfinite(med):
        return f"none (no successful run of {doc[name]['n']})"
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return f"{fmt(med)} {doc['unit']} (no interval, {doc[name]['n']} runs)"
    return f"{fmt(med)} {doc['unit']} (95% interval {fmt(lo)} .. {fmt(hi)}, {doc[name]['n']} runs)"


def verdict(doc: dict[str, Any]) -> str:
    failed = doc.get("baseline_failed")
    if failed and failed["measured_runs"] == 0:
        text = (f"the baseline could not be measured ({failed['reason']}): there is nothing to "
                "compare with, the defaults are kept")
    elif failed and not doc["significant"]:
        text = (f"the sweep ended early, after {failed['after_runs']} runs, as the baseline "
                f"could no longer be measured ({failed['reason']}): from what it measured, "
                "nothing is recommended; the defaults are kept")
    elif failed:
        text = (f"better by {fmt_gain(doc['gain'])}: recommended, from the runs before the "
                f"sweep ended early, after {failed['after_runs']} runs, as the baseline could "
                f"no longer be measured ({failed['reason']})")
    elif doc["significant"]:
        text = f"better by {fmt_gain(doc['gain'])}: recommended"
    elif doc.get("too_few_runs") and doc["too_few_runs"]["best_runs"] == 0:
        text = (f"the budget was too small: it ended after the baseline's "
                f"{doc['too_few_runs']['baseline_runs']} calibration runs, before any other "
                "point was measured: the defaults are kept")
    elif doc.get("too_few_runs"):
        few = doc["too_few_runs"]
        text = (f"the budget was too small: the best point had {few['best_runs']} runs and the "
                f"baseline {few['baseline_runs']}; a recommendation needs at least "
                f"{few['minimum']} on each side: the defaults are kept")
    else:
        text = "no significant gain: the defaults are kept"
    return text + plan_note(doc)


def retries_line(doc: dict[str, Any]) -> str | None:
    """The baseline's failed runs, retried (None when there were none)."""
    failures = doc.get("baseline_retries") or []
    if not failures:
        return None
    return (f"{len(failures)} failed baseline run{'s' if len(failures) > 1 else ''}, left "
            "out of the figures (a failed baseline run is tried again, up to 3 runs in a "
            f"row); the last: {failures[-1]['error']}")


def plan_note(doc: dict[str, Any]) -> str:
    """How much of a time budget's first plan ran (nothing for a budget of runs)."""
    t = doc.get("time")
    if not t:
        return ""
    first, runs = t["first_plan"], doc["runs"]
    if runs < first:
        ran = (f"{runs} of the {first} runs first planned ran ({runs * 100 // first}%; re-planned "
               "as the runs took longer than the first ones)")
    else:
        ran = f"{runs} runs ran ({first} first planned)"
    end = ", stopped at the deadline" if t["stopped_at_deadline"] else ""
    return f" (time budget {t['budget_seconds']:g} s: {ran}, in {t['ended']:.0f} s{end})"


def env_text(doc: dict[str, Any]) -> str:
    lines = ["# gasnet-tune: the recommended environment; load it with",
             "#   gasnetrun --env-file tuned.env ...",
             f"# conduit: {doc['conduit']}, ranks: {doc['ranks']}, hosts: "
             f"{doc['hosts'] or 'this host'}, spawner: {doc['spawner'] or 'gasnetrun default'}",
             f"# objective: {doc['objective']} ({doc['objective_detail']})",
             f"# date: {doc['date']}, search: {doc['method']}, {doc['runs']} runs, "
             f"seed {doc['seed']}",
             f"# improvement over the baseline: {fmt_gain(doc['gain'])}",
             f"# verdict: {verdict(doc)}"]
    if retries_line(doc):
        lines.append(f"# baseline: {retries_line(doc)}")
    if doc["base_env"]:
        lines.append("# measured on top of: " + " ".join(f"{k}={v}"
                                                          for k, v in doc["base_env"].items()))
    changed = doc["recommended"]
    if not changed:
        lines.append("# (nothing to set: the defaults are kept)")
    lines += [f"{k}={v}" for k, v in changed.items()]
    return "\n".join(lines) + "\n"


def markdown(doc: dict[str, Any]) -> str:
    out = [f"# gasnet-tune report: {doc['objective']} on {doc['conduit']}", "",
           f"- ranks: {doc['ranks']}, hosts: {doc['hosts'] or 'this host'}, "
           f"spawner: {doc['spawner'] or 'gasnetrun default'}",
           f"- objective: {doc['objective']} ({doc['objective_detail']})",
           f"- search: {doc['method']}; {doc['runs']} runs, budget {doc['budget']}, "
           f"seed {doc['seed']}, {doc['date']}",
           f"- baseline: {figure_line(doc, 'baseline')}",
           f"- best point: {figure_line(doc, 'best')}",
           f"- gain: {fmt_gain(doc['gain'])}", f"- **verdict: {verdict(doc)}**"]
    if retries_line(doc):
        out.append(f"- baseline failures: {retries_line(doc)}")
    out += ["",
           "| knob | baseline | recommended | best point | values tried |",
           "|---|---|---|---|---|"]
    for k in doc["knobs"]:
        rec = doc["recommended"].get(k["name"], "(keep)")
        out.append(f"| `{k['name']}` | {baseline_cell(doc, k)} | {rec} | "
                   f"{k['best']} | {', '.join(k['values'])} |")
    out += ["", "## Points measured (best first)", "",
            "| point | setting | median | 95% interval | runs |", "|---|---|---|---|---|"]
    for p in doc["points"][:30]:
        med, lo, hi = interval(p, doc["better"])
        setting = " ".join(f"{k}={v}" for k, v in p["env"].items()) or "(baseline)"
        status = " (failed)" if p["failed"] else ""
        out.append(f"| {p['id']} | {setting}{status} | {fmt(med)} | {fmt(lo)} .. {fmt(hi)} | "
                   f"{p['n']} |")
    if doc.get("plots"):
        out += ["", "## Plots", ""] + [f"![{os.path.basename(p)}]({os.path.basename(p)})"
                                       for p in doc["plots"]]
    return "\n".join(out) + "\n"


def write(out_dir: str, doc: dict[str, Any]) -> None:
    from .state import write_out
    text = json.dumps(clean(doc), indent=1, allow_nan=False)
    write_out(os.path.join(out_dir, "report.json"), lambda f: f.write(text))
    write_out(os.path.join(out_dir, "report.md"), lambda f: f.write(markdown(doc)))
    write_out(os.path.join(out_dir, "tuned.env"), lambda f: f.write(env_text(doc)))


def baseline_cell(doc: dict[str, Any], knob: dict[str, Any]) -> str:
    """A knob's baseline value: the knob table's default (its runtime-computed default:
    '(computed)'), or, marked '(yours)', the value of the environment gasnet-tune ran in."""
    if knob["name"] in doc.get("base_env", {}):
        return f"{knob['baseline']} (yours)"
    return knob["baseline"] or "(computed)"


def show(doc: dict[str, Any], console: Console) -> None:
    table = Table(title=f"gasnet-tune: {doc['objective']} on {doc['conduit']}, "
                        f"{doc['ranks']} ranks ({doc['method']}, {doc['runs']} runs)")
    table.add_column("knob", no_wrap=True)
    table.add_column("baseline")
    table.add_column("recommended")
    table.add_column("best point")
    table.add_column("values tried")
    for k in doc["knobs"]:
        table.add_row(k["name"], baseline_cell(doc, k),
                      doc["recommended"].get(k["name"], "(keep)"), k["best"],
                      ",".join(k["values"]))
    console.print(table)
    console.print(f"measured:   {doc['ranks']} ranks on {doc['hosts'] or 'this host'}, conduit "
                  f"{doc['conduit']}, spawner {doc['spawner'] or 'gasnetrun default'}")
    console.print(f"baseline:   {figure_line(doc, 'baseline')}")
    console.print(f"best point: {figure_line(doc, 'best')}")
    console.print(f"gain:       {fmt_gain(doc['gain'])}")
    console.print(f"verdict:    {verdict(doc)}")
    if retries_line(doc):
        console.print(f"failures:   {retries_line(doc)}")
    console.print(f"written:    {doc['out_dir']}/tuned.env, report.md, report.json"
                  + ("".join(f", {os.path.basename(p)}" for p in doc.get("plots", []))))
