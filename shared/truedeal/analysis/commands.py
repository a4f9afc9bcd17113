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

import click

from ..engine import check_count
from ..spec import Spec, load_spec
from .conditioning import NotExact, spec_total
from .distribution import Distribution, Feature, UnsupportedFeature, exact_distribution, parse_feature
from .pavlicek1999 import CannotExpress
from .shapeclasses import HANDS, shape_classes


class UserError(click.ClickException):
    """A problem with the user's input: one line, exit code 2."""

    exit_code = 2


def _spec(arg: str) -> Spec:
    if not arg.strip():
        raise UserError("empty SPEC: give a JSON file, inline JSON, or - for standard input")
    return load_spec(sys.stdin.buffer.read() if arg == "-" else arg)


def _seat(word: str) -> int:
    try:
        return parse_feature(f"hcp({word})").seat
    except UnsupportedFeature as exc:
        raise UserError(str(exc)) from None


def _frac(x: Fraction) -> str:
    return f"{x.numerator}/{x.denominator}"


def _exact(fn, *args):
    """Run an exact computation, turning engine limits into a one-line user error."""
    try:
        return fn(*args)
    except (NotExact, UnsupportedFeature) as exc:
        raise UserError(str(exc)) from None


# ------------------------------------------------------------------ shapes


def shapes_rows(spec: Spec | None, seat: int) -> tuple[list[dict], int]:
    """Rows of the shapes table and their total (hands, or deals of the spec)."""
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
        rows.append({"class": sc.name, "count": n, "probability_exact": _frac(p), "probability": float(p), "ordered_patterns": sc.ordered_patterns})
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
    click.echo(f"{dist.feature.name} over {dist.total:,} deals (exact)")
    for v, c in dist.counts.items():
        p = dist.probability(v)
        click.echo(f"{str(v):>10}  {float(p):>10.6%}  {c:,}  ({_frac(p)})")
    if dist.mean is not None:
        click.echo(f"mean      {float(dist.mean):.6f}  ({_frac(dist.mean)})")
        click.echo(f"sd        {dist.sd:.6f}  (variance {_frac(dist.variance)})")


@click.command(name="distribution")
@click.argument("spec")
@click.option("--of", "expr", required=True, help="hcp(SEAT), spades(SEAT) ... clubs(SEAT), or 'shape class of SEAT'.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--plot", "plot_path", default=None, type=click.Path(dir_okay=False), help="Write a bar chart (PNG).")
def distribution_command(spec: str, expr: str, as_json: bool, plot_path: str | None) -> None:
    """Exact distribution of a feature over every deal of SPEC, with no deal drawn."""
    feature = _exact(parse_feature, expr)
    the_spec = _spec(spec)
    if not _exact(spec_total, the_spec):
        raise UserError("no deal satisfies this spec (it counts 0 deals)")
    dist = _exact(exact_distribution, the_spec, feature)
    if plot_path is not None:
        from .plots import distribution_png

        _write_bytes(plot_path, distribution_png(dist))
    if as_json:
        click.echo(json.dumps(dist.to_json()))
    else:
        _print_distribution(dist)


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
    click.echo(f"{'test':<36} {'chi-square':>11} {'dof':>4} {'p-value':>10}")
    for t in report.tests:
        click.echo(f"{t.name:<36} {t.statistic:>11.2f} {t.dof:>4} {t.p_value:>10.4g}")
    verdict = "FLAGGED" if report.flagged else "ok"
    click.echo(f"{verdict}: min p-value {report.min_p_value:.4g}, Bonferroni threshold 0.01/{len(report.tests)} = {report.threshold:.3g}")
