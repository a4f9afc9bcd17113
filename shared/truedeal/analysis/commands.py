"""``truedeal shapes``, ``truedeal distribution`` and ``truedeal stats``.

Imported lazily by :mod:`truedeal.cli`, so the core commands never load
scipy or matplotlib.  User errors are raised as :class:`UserError`, a
:class:`click.ClickException` (one line on stderr, exit 2), so that they are
caught however the CLI module was started (``python -m truedeal.cli`` runs it
as ``__main__``, with its own copy of ``truedeal.cli.UserError``).
"""

from __future__ import annotations

import json
import sys
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING

import click

# The laws and the engine (numpy, pydantic) are imported by the functions that
# count: `truedeal --help` lists these commands without loading them.
from ..choices import DEFAULT_DD_SAMPLES, DEFAULT_SAMPLES, DEFAULT_SEED

if TYPE_CHECKING:
    from ..spec import Spec
    from .distribution import Distribution
    from .sampled import SampledDistribution


class UserError(click.ClickException):
    """A problem with the user's input: one line, exit code 2."""

    exit_code = 2


def _spec(arg: str) -> Spec:
    if not arg.strip():
        raise UserError("empty SPEC: give a JSON file, inline JSON, or - for standard input")
    from ..spec import load_spec

    return load_spec(sys.stdin.buffer.read() if arg == "-" else arg)


def _seat(word: str) -> int:
    from .distribution import UnsupportedFeature, parse_feature

    try:
        return parse_feature(f"hcp({word})").seat
    except UnsupportedFeature as exc:
        raise UserError(str(exc)) from None


def _frac(x: Fraction) -> str:
    return f"{x.numerator}/{x.denominator}"


def _exact(fn, *args):
    """Run an exact computation, turning engine limits into a one-line user error."""
    from .conditioning import NotExact
    from .distribution import UnsupportedFeature

    try:
        return fn(*args)
    except (NotExact, UnsupportedFeature) as exc:
        raise UserError(str(exc)) from None


# ------------------------------------------------------------------ shapes


def shapes_rows(spec: Spec | None, seat: int) -> tuple[list[dict], int]:
    """Rows of the shapes table and their total (hands, or deals of the spec)."""
    from .distribution import Feature, exact_distribution
    from .shapeclasses import HANDS, shape_classes

    if spec is None:
        total = HANDS
        counts = {sc.name: sc.hands for sc in shape_classes()}
    else:
        dist = _exact(exact_distribution, spec, Feature("class", seat))
        total, counts = dist.total, dist.counts
    rows = []
    for sc in shape_classes():
        n = counts.get(sc.name, 0)
        p = Fraction(n, total) if total else Fraction(0)
        rows.append({"class": sc.name, "count": n, "probability_exact": _frac(p), "probability": float(p),
                     "ordered_patterns": sc.ordered_patterns})
    return rows, total


@click.command(name="shapes")
@click.option("--spec", "spec_arg", default=None, help="Condition on this spec: deals in which SEAT has each class.")
@click.option("--seat", default="north", show_default=True, help="The seat whose shape is classified (with --spec).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def shapes_command(spec_arg: str | None, seat: str, as_json: bool) -> None:
    """The 39 shape classes: hands of each, exact probability, ordered patterns.

    With --spec, the exact number of deals of SPEC in which SEAT's shape is in
    each class (one exact count per class, no deal drawn).
    """
    seat_i = _seat(seat)
    spec = _spec(spec_arg) if spec_arg is not None else None
    rows, total = shapes_rows(spec, seat_i)
    unit = "hands" if spec is None else "deals"
    if as_json:
        out = {"unit": unit, "total": total, "ordered_patterns": sum(r["ordered_patterns"] for r in rows), "classes": rows}
        if spec is not None:
            out["seat"] = ("north", "east", "south", "west")[seat_i]
        click.echo(json.dumps(out))
        return
    if spec is not None:
        rows = [r for r in rows if r["count"]]
    width = max(len(f"{total:,}"), 5)
    click.echo(f"{'class':<10} {unit:>{width}} {'probability':>12} {'patterns':>8}")
    for r in rows:
        click.echo(f"{r['class']:<10} {r['count']:>{width},} {100 * r['probability']:>11.6f}% {r['ordered_patterns']:>8}")
    click.echo(f"{'total':<10} {total:>{width},} {100.0 if total else 0:>11.6f}% {sum(r['ordered_patterns'] for r in rows):>8}")


# ------------------------------------------------------------ distribution


def _print_distribution(dist: Distribution) -> None:
    from .distribution import deals_text

    expected = "" if dist.scale == 1 else " expected, rnd() weighed"
    click.echo(f"{dist.feature.name} over {deals_text(dist.deals(dist.total))} deals{expected} (exact)")
    for v, c in dist.counts.items():
        p = dist.probability(v)
        click.echo(f"{str(v):>10}  {float(p):>10.6%}  {deals_text(dist.deals(c))}  ({_frac(p)})")
    if dist.mean is not None and dist.variance is not None:
        click.echo(f"mean      {float(dist.mean):.6f}  ({_frac(dist.mean)})")
        click.echo(f"sd        {dist.sd:.6f}  (variance {_frac(dist.variance)})")


def _print_estimate(dist: SampledDistribution) -> None:
    click.echo(f"{dist.feature.name}: ESTIMATE, not exact ({dist.to_json()['method']})")
    for v in dist.counts:
        click.echo(f"{str(v):>10}  {dist.probability(v):>10.4%} ± {dist.stderr(v):.4%}")
    if dist.mean is not None:
        click.echo(f"mean      {dist.mean:.4f} ± {dist.mean_stderr:.4f} (standard error)")


def _count_bar():
    """A progress bar of exact counts on a terminal's stderr (a law takes one count per value or range)."""
    if not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    return tqdm(desc="exact counts", unit="count", file=sys.stderr, leave=False, delay=1.0)


def _law(constraints, expr: str, exact_only: bool, samples: int | None, seed: str) -> Distribution | SampledDistribution:
    """The law of ``expr``, with every engine or input problem as a one-line user error."""
    from .conditioning import NotExact
    from .distribution import Distribution, UnsupportedFeature
    from .laws import distribution_of

    bar = _count_bar()
    try:
        dist = distribution_of(constraints, expr, sample=not exact_only, samples=samples, seed=seed,
                               on_count=None if bar is None else lambda: bar.update(1))
    except NotExact as exc:
        raise UserError(f"not exact: {exc} (leave out --exact-only for a sampled estimate)") from None
    except (UnsupportedFeature, ValueError) as exc:
        raise UserError(str(exc)) from None
    finally:
        if bar is not None:
            bar.close()
    if dist.total if isinstance(dist, Distribution) else dist.n:
        return dist
    raise UserError("no deal satisfies this spec (it counts 0 deals)")


@click.command(name="distribution")
@click.argument("spec")
@click.option("--of", "expr", required=True,
              help="Any number of the dealer language (hcp(south), hcp(north)+hcp(south), controls(west), "
                   "losers(north), top3(north, spades) ...) or 'shape class of SEAT'; add 'given COND' to condition.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--plot", "plot_path", default=None, type=click.Path(dir_okay=False), help="Write a bar chart (PNG).")
@click.option("--exact-only", is_flag=True, help="Refuse, rather than estimate, when no exact answer is possible.")
@click.option("--samples", type=click.IntRange(100, 10_000_000), default=None,
              help=f"Deals drawn for an estimate, only when no exact answer is possible "
                   f"[default: {DEFAULT_SAMPLES:,}; {DEFAULT_DD_SAMPLES:,} when it needs double dummy].")
@click.option("--seed", default=DEFAULT_SEED, show_default=True, help="Seed of an estimate's deals.")
def distribution_command(spec: str, expr: str, as_json: bool, plot_path: str | None, exact_only: bool,
                         samples: int | None, seed: str) -> None:
    """Exact distribution of a feature over every deal of SPEC (a JSON spec or a
    dealer script), with no deal drawn; a labelled estimate only where no exact
    answer is possible."""
    from .distribution import Distribution

    dist = _law(_constraints(spec), expr, exact_only, samples, seed)
    if plot_path is not None:
        if not isinstance(dist, Distribution):
            raise UserError("--plot draws exact laws only; this answer is an estimate")
        from .plots import distribution_png

        _write_bytes(plot_path, distribution_png(dist))
    if as_json:
        click.echo(json.dumps(dist.to_json()))
    elif isinstance(dist, Distribution):
        _print_distribution(dist)
    else:
        _print_estimate(dist)


def _print_answer(ans) -> None:
    """One action's answer as dealer would print it, marked exact or estimate."""
    from .distribution import deals_text

    tag = "exact" if ans.exact else "ESTIMATE (" + ans.body.get("method", "sampled") + ")"
    b = ans.body
    if ans.kind == "average":
        mean = f"{b['mean']:.6f} ({b['mean_exact']})" if ans.exact else f"{b['mean_estimate']:.4f} ± {b['mean_stderr']:.4f}"
        click.echo(f"average {ans.label!r}: {mean}  [{tag}]")
        return
    click.echo(f"frequency {ans.label!r}  [{tag}]")
    for row in b["rows"]:
        key = str(row["value"]) if "value2" not in row else f"{row['value']}, {row['value2']}"
        p = row.get("probability", row.get("probability_estimate"))
        n = deals_text(row["deals"]) if ans.exact else f"{row['samples']:,} samples"
        click.echo(f"{key:>12}  {p:>10.6%}  {n}")


@click.command(name="answer")
@click.argument("script")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--samples", type=click.IntRange(100, 10_000_000), default=None,
              help="Deals drawn for an action that cannot be answered exactly.")
@click.option("--seed", default=DEFAULT_SEED, show_default=True, help="Seed of an estimate's deals.")
def answer_command(script: str, as_json: bool, samples: int | None, seed: str) -> None:
    """Exact answers to a dealer script's average and frequency actions.

    Each is computed over every deal of the script, with no deal drawn
    (dealer estimates them from the deals it produces); an action that
    cannot be listed exactly gets a labelled estimate."""
    from ..constraints import ir
    from .actions import answer_script
    from .conditioning import NotExact
    from .distribution import UnsupportedFeature

    program = _constraints(script)
    if not isinstance(program, ir.Program):
        program = program.program()
    bar = _count_bar()
    try:
        result = answer_script(program, samples, seed, on_count=None if bar is None else lambda: bar.update(1))
    except (UnsupportedFeature, NotExact, ValueError) as exc:
        raise UserError(str(exc)) from None
    finally:
        if bar is not None:
            bar.close()
    if as_json:
        click.echo(json.dumps(result.to_json()))
        return
    from .distribution import deals_text

    fit = "are expected, rnd() weighed" if result.expected else "fit the script"
    click.echo(f"{deals_text(result.deals)} deals {fit} (exact)" if result.deals is not None else "deals: not exact")
    for ans in result.answers:
        _print_answer(ans)
    if not result.answers:
        click.echo("the script has no average or frequency action")
    if result.skipped:
        click.echo(f"skipped (need real deals: truedeal generate): {', '.join(result.skipped)}")


def _constraints(arg: str):
    """A JSON spec or a dealer script, as :func:`truedeal.constraints.load.load_constraints` reads them."""
    from ..constraints.load import load_constraints
    from ..spec import SpecError

    if not arg.strip():
        raise UserError("empty SPEC: give a JSON file, inline JSON, a dealer script, or - for standard input")
    try:
        return load_constraints(sys.stdin.buffer.read() if arg == "-" else arg)
    except SpecError as exc:
        raise UserError(str(exc)) from None


def _write_bytes(path: str, data: bytes) -> None:
    try:
        Path(path).write_bytes(data)
    except OSError as exc:
        raise UserError(f"cannot write {path}: {exc.strerror or exc}") from None


# ------------------------------------------------------------------ stats


@click.command(name="stats")
@click.argument("spec")
@click.option("-n", "--count", "n", type=int, default=10_000, show_default=True, help="Number of deals to test.")
@click.option("--seed", default=None, help="Reproducible deals.")
@click.option("--method", type=click.Choice(["exact", "pavlicek1999"]), default="exact", show_default=True,
              help="exact: truedeal's dealing; pavlicek1999: the biased 1999 baseline, for comparison only.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--html", "html_path", default=None, type=click.Path(dir_okay=False), help="Write an HTML report with plots.")
def stats_command(spec: str, n: int, seed: str | None, method: str, as_json: bool, html_path: str | None) -> None:
    """Deal N deals and test them against the exact laws (chi-square per feature)."""
    from ..engine import check_count
    from .conditioning import NotExact, spec_total
    from .pavlicek1999 import CannotExpress
    from .report import render_html
    from .stats import run_stats

    try:
        check_count(n)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    the_spec = _spec(spec)
    if not _exact(spec_total, the_spec):
        raise UserError("no deal satisfies this spec (it counts 0 deals)")
    try:
        report = run_stats(the_spec, n, seed, method)
    except (NotExact, CannotExpress) as exc:
        raise UserError(str(exc)) from None
    if html_path is not None:
        try:
            Path(html_path).write_text(render_html(report), encoding="utf-8")
        except OSError as exc:
            raise UserError(f"cannot write {html_path}: {exc.strerror or exc}") from None
    if as_json:
        click.echo(json.dumps(report.to_json()))
        return
    for note in report.notes:
        click.echo(f"note: {note}")
    if not report.tests:
        click.echo("no test: nothing to compare the deals with (see the note above)")
        return
    click.echo(f"{'test':<36} {'chi-square':>11} {'dof':>4} {'p-value':>10}")
    for t in report.tests:
        click.echo(f"{t.name:<36} {t.statistic:>11.2f} {t.dof:>4} {t.p_value:>10.4g}")
    verdict = "FLAGGED" if report.flagged else "ok"
    click.echo(f"{verdict}: min p-value {report.min_p_value:.4g}, Bonferroni threshold 0.01/{len(report.tests)} = {report.threshold:.3g}")
