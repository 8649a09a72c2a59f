"""``ctrpo-fig3``: the C-TRPO paper's Fig. 3, the benchmark aggregated over tasks.

Milosevic, Mueller, Scherf, "Embedding Safety into RL: A New Take on Trust Region Methods"
(arXiv:2411.02957), Sec. 5, Fig. 3: per method the interquartile mean (IQM) over all runs of all tasks
(5 seeds x 8 tasks), with its stratified-bootstrap 95% interval (Agarwal et al. 2021, "Deep RL at the edge
of the statistical precipice", arXiv:2108.13264; :mod:`saferl.analysis.metrics`), of three per-run scores:

* the final cost, threshold-normalised and centred: ``(V_c - b) / b`` (:func:`metrics.normalized_cost`);
* the final return over unconstrained PPO's on that task (:func:`metrics.normalized_score`, the reference
  being the mean of PPO's seeds, as ``plots/plots_benchmark.ipynb`` of the authors' milosen/ctrpo);
* the cost regret (eq. 2) over CPO's on that task (the reference being the IQM of CPO's seeds, ibid.).

Methods are sorted, as the figure, into groups by the interval of their normalised final cost against 0
(equivalently V_c / b against 1): ``probably_safe`` when it lies at or below 0, ``probably_unsafe`` when
above, ``undecided`` when it straddles 0 (:func:`verdicts.safety_verdict`), and by return IQM within each
group.  It trains (or reuses: ``deep_rl.train_or_resume``) exactly ctrpo-table1's runs in ctrpo-table1's
layout (:func:`ctrpo_table1.plan`), so both targets run into one ``--out`` train once (the latest target's table
is ``out/results.json``; the framework keeps the other's as ``out/results-<target>.json``).

The paper's values (:data:`PAPER_FIG3`): the figure itself is not in the paper's text; its numbers come from
the authors' notebook that draws it (``plots/plots_benchmark.ipynb``, cells 1-4): the intervals as the notebook
prints them (rliable, 50,000 resamples), the IQMs computed with :func:`metrics.iqm` from the normalised-score
matrices it prints (our stratified bootstrap on those matrices reproduces its intervals to 0.002).  The
paper's groups (:data:`PAPER_GROUPS`) are the figure's two: "probably safe" for the four methods whose
interval lies below 0 (C-TRPO, TRPO-Lag, P3O, PCPO; Sec. 5: "safe on the last iterate as opposed to CPO and
CUP"), "probably unsafe" for the other six (``paper_figure_group``).  Both sides are read the same, three-way:
on the paper's intervals that calls only CUP probably unsafe; CPO, FOCOPS, CPPO-PID, PPO-Lag and IPO straddle 0
(undecided), and that is the ``paper_group`` our groups are set against.

The claims (:func:`fig3_claims`) are verdicts of the claims vocabulary (:mod:`saferl.analysis.verdicts`), read
on our rows and on the paper's numbers alike; "competitive" and "comparable to" are equality or non-inferiority
claims within :data:`COMPARABLE_MARGIN` of the normalised scores, never read from overlap.

Differences: those of ctrpo-table1 (its module docstring), and: a task enters the normalised return only
where PPO's mean return is > 0, the normalised regret only where CPO's regret IQM is > 0 (the ratio has no
meaning otherwise; the paper's 10M-step runs never met either), and a metric only where every method has a
finite value on every seed; the tasks left out are listed in results.json (``settings.excluded_tasks``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from saferl.analysis import metrics, plotting, verdicts
from saferl.reproduce.ctrpo import table1
from saferl.reproduce.ctrpo.table1 import AS_RUN, LIMIT, REFERENCES
from saferl.reproduce.framework import Scale, target

#: (row field, per-run value it normalises, the figure's panel title)
SCORES = (
    ("normalized_final_cost", "final_cost", "final cost, (V_c - b) / b"),
    ("normalized_return", "final_return", "return / PPO's"),
    ("normalized_regret", "cost_regret", "cost regret / CPO's"),
)
GROUP_ORDER = ("probably_safe", "undecided", "probably_unsafe")
#: The paper's Fig. 3 (see the module docstring): per method (IQM, lower, upper) of the normalised final cost,
#: return and regret over 5 seeds x 8 tasks at 10M steps; PCPO, FOCOPS and IPO are carried by the rows of
#: ctrpo_table1.AS_RUN (what the paper ran under those names)
PAPER_FIG3 = {
    "C-TRPO": ((-0.2125, -0.3010, -0.1252), (0.6540, 0.6009, 0.7065), (0.5229, 0.4447, 0.6038)),
    "TRPO-Lag": ((-0.1851, -0.2974, -0.0596), (0.5978, 0.5145, 0.6755), (1.9283, 1.8105, 2.0371)),
    "P3O": ((-0.2795, -0.3481, -0.2114), (0.4516, 0.4017, 0.5047), (0.2445, 0.2103, 0.2798)),
    "PCPO": ((-0.1661, -0.2583, -0.0766), (0.4447, 0.3989, 0.4886), (0.6982, 0.5876, 0.8424)),
    "CPO": ((0.0355, -0.0913, 0.1232), (0.6802, 0.6353, 0.7296), (0.9823, 0.9064, 1.0863)),
    "CUP": ((0.2785, 0.1174, 0.4400), (0.6483, 0.5943, 0.7009), (2.7963, 2.4508, 3.1684)),
    "FOCOPS": ((0.0666, -0.0265, 0.1443), (0.6143, 0.5636, 0.6673), (1.9495, 1.7370, 2.1867)),
    "CPPO-PID": ((-0.0147, -0.1088, 0.0678), (0.5172, 0.4593, 0.5683), (1.0601, 0.9788, 1.1499)),
    "PPO-Lag": ((0.0254, -0.0979, 0.1552), (0.4712, 0.4166, 0.5139), (2.4105, 2.2289, 2.5962)),
    "IPO": ((0.0334, -0.0238, 0.1028), (0.4265, 0.3697, 0.4876), (1.5257, 1.2845, 1.7733)),
}
PAPER_GROUPS = {
    m: "probably_safe" if m in ("C-TRPO", "TRPO-Lag", "P3O", "PCPO") else "probably_unsafe" for m in PAPER_FIG3
}
PAPER_SOURCE = (
    "C-TRPO paper (arXiv:2411.02957) Fig. 3: IQM over 5 seeds x 8 tasks at 10M steps, stratified "
    "bootstrap 95% intervals (numbers from the authors' plots/plots_benchmark.ipynb)"
)


def normalisers(entries: list[dict]) -> dict[str, dict]:
    """Per task: PPO's mean final return and CPO's cost-regret IQM over their seeds (the Fig. 3 references)."""
    out = {}
    for task in dict.fromkeys(e["task"] for e in entries):
        by = {e["label"]: e for e in entries if e["task"] == task}
        missing = [m for m in ("PPO", "CPO") if m not in by]
        if missing:
            raise ValueError(
                f"ctrpo-fig3 normalises by PPO's return and CPO's regret; {task} lacks {' and '.join(missing)}"
            )
        ppo = by["PPO"]["values"]["final_return"]
        cpo = by["CPO"]["values"]["cost_regret"]
        out[task] = {
            "ppo_return": float(np.mean(ppo)) if np.all(np.isfinite(ppo)) else float("nan"),
            "cpo_regret": metrics.iqm(cpo),
        }
    return out


def normalized_scores(entries: list[dict], refs: dict[str, dict]) -> tuple[dict, dict]:
    """``{field: {label: (seeds, tasks) matrix}}`` of the three normalised scores over the tasks each may use, and
    ``{field: {task: why it was left out}}``."""
    tasks = list(refs)
    labels = list(dict.fromkeys(e["label"] for e in entries))
    cell = {(e["task"], e["label"]): e["values"] for e in entries}
    scores, excluded = {}, {}
    for field, value, _ in SCORES:
        columns, left_out = {label: [] for label in labels}, {}
        for task in tasks:
            if field == "normalized_return" and not refs[task]["ppo_return"] > 0:
                left_out[task] = f"PPO's mean return {refs[task]['ppo_return']:.4g} is not > 0"
                continue
            if field == "normalized_regret" and not refs[task]["cpo_regret"] > 0:
                left_out[task] = "CPO's cost regret IQM is 0"
                continue
            raw = {label: cell[(task, label)][value] for label in labels}
            unknown = [label for label, v in raw.items() if not np.all(np.isfinite(v))]
            if unknown:
                left_out[task] = f"no {value} on every seed of {', '.join(unknown)}"
                continue
            for label, v in raw.items():
                if field == "normalized_final_cost":
                    columns[label].append(metrics.normalized_cost(v, LIMIT))
                elif field == "normalized_return":
                    columns[label].append(metrics.normalized_score(v, refs[task]["ppo_return"]))
                else:
                    columns[label].append(metrics.normalized_score(v, refs[task]["cpo_regret"]))
        scores[field] = {label: np.stack(cols, axis=1) if cols else None for label, cols in columns.items()}
        excluded[field] = left_out
    return scores, excluded


def aggregate(matrix, reps: int = table1.BOOTSTRAP_REPS) -> tuple[float, float, float]:
    """IQM over every run of every task and its stratified-bootstrap 95% interval (NaNs for no matrix)."""
    if matrix is None:
        return float("nan"), float("nan"), float("nan")
    ci = metrics.stratified_bootstrap_ci(matrix, statistic=metrics.iqm, reps=reps)
    return ci.estimate, ci.lower, ci.upper


def group_of(lower: float, upper: float) -> str:
    """The figure's grouping: the normalised final cost's interval against 0 (V_c / b against 1)."""
    return verdicts.safety_verdict(lower, upper, 0.0)


def attach_paper(row: dict, paper_method: str) -> bool:
    if paper_method not in PAPER_FIG3:
        return False
    for (field, _, _), (value, lower, upper) in zip(SCORES, PAPER_FIG3[paper_method]):
        row[f"paper_{field}"], row[f"paper_{field}_lo"], row[f"paper_{field}_hi"] = value, lower, upper
    row["paper_group"] = group_of(row["paper_normalized_final_cost_lo"], row["paper_normalized_final_cost_hi"])
    row["paper_figure_group"] = PAPER_GROUPS[paper_method]
    return True


def fig3_rows(entries: list[dict], scores: dict) -> list[dict]:
    """One row per method, sorted as the figure (group, then return IQM, descending), the unconstrained references
    last."""
    rows = []
    for entry in {e["label"]: e for e in entries}.values():
        row = {"method": entry["method"], "label": entry["label"]}
        for field, _, _ in SCORES:
            row[field], row[f"{field}_lo"], row[f"{field}_hi"] = aggregate(scores[field][entry["label"]])
        row["group"] = group_of(row["normalized_final_cost_lo"], row["normalized_final_cost_hi"])
        attach_paper(row, paper_name(entry["label"]))
        rows.append(row)

    def order(row):
        ret = row["normalized_return"]
        return GROUP_ORDER.index(row["group"]), -ret if np.isfinite(ret) else np.inf

    constrained = sorted((r for r in rows if r["label"] not in REFERENCES), key=order)
    return constrained + sorted((r for r in rows if r["label"] in REFERENCES), key=order)


def paper_name(label: str) -> str:
    """The paper's name of a row's method: that of :data:`~saferl.reproduce.ctrpo.table1.AS_RUN`, else the label."""
    return AS_RUN.get(label, label)


# --------------------------------------------------------------------------- claims


#: "competitive" / "comparable to" on the normalised scores: within a tenth of the reference method's score (PPO's
#: return, CPO's regret), our choice, the margin of an equality or non-inferiority claim (verdicts.equal_within)
COMPARABLE_MARGIN = 0.1


def fig3_claims(rows: list[dict]) -> dict:
    """Sec. 5's reading of Fig. 3 as claim verdicts (reproduced / not_reproduced / undecided, the vocabulary of
    :mod:`saferl.analysis.verdicts`), on rows with ``group`` and the normalised scores (ours, or
    :func:`paper_rows`, whose groups are read from the paper's intervals the same three-way); a claim whose methods
    are missing is left out."""
    by = {paper_name(r["label"]): r for r in rows if "group" in r and r["label"] not in REFERENCES}
    has = lambda *names: all(n in by for n in names)  # noqa: E731
    safe = lambda label: verdicts.safety_as_claim({"safety": by[label]["group"]})  # noqa: E731
    unsafe = lambda label: _not_safe(by[label]["group"])  # noqa: E731
    claims = {}
    if has("C-TRPO", "CPO", "CUP"):  # "safe on the last iterate as opposed to CPO and CUP"
        claims["C-TRPO probably safe, CPO and CUP not"] = verdicts.all_of(safe("C-TRPO"), unsafe("CPO"), unsafe("CUP"))
    others = [r for label, r in by.items() if label != "C-TRPO" and np.isfinite(r["normalized_return"])]
    if has("C-TRPO") and others:  # "competitive with the leading algorithms ... in terms of expected return"
        best = max(others, key=lambda r: r["normalized_return"])
        claims["C-TRPO's return not below the best other method's"] = verdicts.not_worse_within(
            by["C-TRPO"], best, "normalized_return", COMPARABLE_MARGIN
        )
        # "notably lower cost regret throughout training than the high-return algorithms": the methods whose
        # return interval reaches C-TRPO's or lies above it
        comparable = [
            r
            for r in others
            if verdicts.interval_order(r, by["C-TRPO"], "normalized_return") in ("overlapping", "above")
        ]
        claims["C-TRPO's regret below every method of comparable return"] = verdicts.all_of(
            *(verdicts.ordered(by["C-TRPO"], r, "normalized_regret", "<") for r in comparable)
        )
    if has("TRPO-Lag"):  # "TRPO-Lag., which is also safe at convergence, has notably higher cost regret"
        rest = [by[label] for label in by if label != "TRPO-Lag" and by[label]["group"] == "probably_safe"]
        claims["TRPO-Lag probably safe, its regret above the other safe methods'"] = verdicts.all_of(
            safe("TRPO-Lag"),
            *(verdicts.ordered(by["TRPO-Lag"], r, "normalized_regret", ">") for r in rest),
        )
    if has("C-TRPO", "TRPO-Lag", "FOCOPS", "CUP"):  # Lagrangian-style methods "poorly in terms of cost regret"
        claims["TRPO-Lag, FOCOPS and CUP: regret above C-TRPO's"] = verdicts.all_of(
            *(verdicts.ordered(by[m], by["C-TRPO"], "normalized_regret", ">") for m in ("TRPO-Lag", "FOCOPS", "CUP"))
        )
    if has("C-TRPO", "PCPO", "P3O"):  # "comparable to the more conservative PCPO ..., not as low as that of P3O"
        claims["C-TRPO's regret like PCPO's and above P3O's"] = verdicts.all_of(
            verdicts.equal_within(by["C-TRPO"], by["PCPO"], "normalized_regret", COMPARABLE_MARGIN),
            verdicts.ordered(by["C-TRPO"], by["P3O"], "normalized_regret", ">"),
        )
        # "The low cost regret achieved by P3O comes at the price of expected reward"
        claims["P3O's return below C-TRPO's"] = verdicts.ordered(by["P3O"], by["C-TRPO"], "normalized_return", "<")
    return claims


def _not_safe(group: str) -> str:
    """A group as the claim "not probably safe": probably_unsafe reproduces it, probably_safe refutes it."""
    return {"probably_unsafe": "reproduced", "probably_safe": "not_reproduced"}.get(group, "undecided")


def paper_rows() -> list[dict]:
    """The paper's Fig. 3 as rows of values (the paper's method names, its two groups)."""
    rows = []
    for method in PAPER_FIG3:
        row = {"label": method}
        attach_paper(row, method)
        rows.append({"label": method, **{key[len("paper_") :]: value for key, value in row.items() if key != "label"}})
    return rows


def fig3_checks(rows: list[dict]) -> dict:
    """Every method's group (ours) and the paper's, both read three-way from the intervals, and each claim of
    :func:`fig3_claims` on our rows beside the same claim on the paper's whole figure (:func:`paper_rows`), with
    their agreement and the counts (agree, disagree, undecided apart)."""
    ours = [row for row in rows if "group" in row]
    checks = {
        "groups": {row["method"]: row["group"] for row in ours},
        "paper_groups": {row["label"]: row["group"] for row in paper_rows()},
    }
    paper_claims = fig3_claims(paper_rows())
    agreements = []
    for name, value in fig3_claims(ours).items():
        checks[name] = verdicts.claim_entry(value, paper_claims.get(name))
        agreements.append(checks[name]["agreement"])
    counts = verdicts.agreement_counts(agreements)
    checks["agreement with the paper's Fig. 3"] = {**counts, "sentence": verdicts.counts_sentence(counts)}
    return checks


# --------------------------------------------------------------------------- the figure

GROUP_COLOURS = {"probably_safe": "#4c9a5b", "undecided": "#9a9a9a", "probably_unsafe": "#c0504d"}
REFERENCE_LINES = {
    "normalized_final_cost": (0.0, "limit"),
    "normalized_return": (1.0, "PPO"),
    "normalized_regret": (1.0, "CPO"),
}


def plot_fig3(rows: list[dict], path: Path, title: str) -> Path:
    """Three panels (final cost, return, regret) sharing the methods' axis: our IQM as bars with their 95%
    interval, coloured by group (hatched: unconstrained references), the paper's as black diamonds."""
    plt = plotting.pyplot()
    from matplotlib.patches import Patch

    x = np.arange(len(rows))
    fig, axes = plt.subplots(3, 1, figsize=(max(10.0, 0.95 * len(rows) + 2.5), 11.0), sharex=True)
    for ax, (field, _, name) in zip(axes, SCORES):
        for i, row in enumerate(rows):
            if np.isfinite(row.get(field, np.nan)):
                value, lo, hi = row[field], row[f"{field}_lo"], row[f"{field}_hi"]
                ax.bar(
                    i - 0.15,
                    value,
                    width=0.5,
                    color=GROUP_COLOURS[row["group"]],
                    hatch="//" if row["label"] in REFERENCES else None,
                    edgecolor="white",
                )
                ax.errorbar(i - 0.15, value, yerr=[[value - lo], [hi - value]], color="black", capsize=3, lw=1)
            if f"paper_{field}" in row:
                value, lo, hi = row[f"paper_{field}"], row[f"paper_{field}_lo"], row[f"paper_{field}_hi"]
                ax.errorbar(
                    i + 0.25, value, yerr=[[value - lo], [hi - value]], fmt="D", color="black", ms=5, capsize=2, lw=0.8
                )
        level, label = REFERENCE_LINES[field]
        ax.axhline(level, color="black", ls="--", lw=1)
        ax.text(len(rows) - 0.55, level, label, ha="right", va="bottom", fontsize=8)
        ax.set_ylabel(f"IQM of {name}", fontsize=9)
        ax.grid(axis="y", alpha=0.3)
    axes[-1].set_xticks(x)
    axes[-1].set_xticklabels([row["method"] for row in rows], rotation=35, ha="right", fontsize=8)
    handles = [Patch(color=colour, label=group.replace("_", " ")) for group, colour in GROUP_COLOURS.items()]
    handles += [
        Patch(facecolor="white", edgecolor="grey", hatch="//", label="unconstrained reference"),
        plt.Line2D([], [], marker="D", color="black", ls="", label="paper, 5 seeds x 8 tasks, 10M steps"),
    ]
    fig.suptitle(title, fontsize=10)
    fig.legend(handles=handles, fontsize=8, ncol=5, loc="upper center", bbox_to_anchor=(0.5, 0.955))
    fig.tight_layout(rect=(0.0, 0.0, 1.0, 0.94))
    return plotting.save_figure(fig, path, dpi=110, tight=False)


DESCRIPTION = (
    "C-TRPO Fig. 3: IQM over tasks x seeds of threshold-normalised final cost, PPO-normalised return "
    "and CPO-normalised cost regret; methods sorted into probably safe / undecided / probably unsafe"
)


@target(
    "ctrpo-fig3",
    DESCRIPTION,
    scales=table1.SCALES,
    checks=fig3_checks,
    plan=table1.plan,
    paper_budget=table1.PAPER_BUDGET,
)
def run_fig3(scale: Scale, out: Path) -> dict:
    return tabulate_fig3(table1.train_grid(scale, out), scale, out)


def tabulate_fig3(entries: list[dict], scale: Scale, out: Path) -> dict:
    """results.json's rows, figure and settings from Table 1's entries (:func:`table1.train_grid`)."""
    # Fig. 3's C-TRPO is the authors' b_H = 0.8 b runs (our "C-TRPO"); the b_H = b row is Table 1's only
    entries = [e for e in entries if e["label"] != table1.TABLE1_CTRPO]
    refs = normalisers(entries)
    scores, excluded = normalized_scores(entries, refs)
    rows = fig3_rows(entries, scores)
    tasks = table1.tasks_at(scale)
    title = (
        f"C-TRPO Fig. 3 at scale {scale.name}: IQM over {scale.seeds} seeds x {len(tasks)} tasks with its "
        "stratified-bootstrap 95% interval\ngrouped by the final-cost interval against the limit, by return "
        "within a group"
    )
    figure = plot_fig3(rows, Path(out) / "ctrpo_fig3.png", title)
    settings = {
        "limit": LIMIT,
        "tasks": {task: table1.task_steps(scale, task) for task in tasks},
        "seeds": scale.seeds,
        "normalisers": refs,
        "excluded_tasks": excluded,
        "bootstrap_resamples": table1.BOOTSTRAP_REPS,
        "paper": PAPER_SOURCE,
    }
    return {"rows": rows, "figures": [figure.name], "settings": settings}
