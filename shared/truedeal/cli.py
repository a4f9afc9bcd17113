"""The ``truedeal`` command line.

Every failure the user can cause (a bad spec, an impossible spec, a bad
number or deal, a bad option) prints one line on stderr and exits with 2.
"""

from __future__ import annotations

import atexit
import functools
import importlib
import json
import os
import re
import shlex
import sys
import threading
from collections.abc import Iterable
from fractions import Fraction
from typing import TYPE_CHECKING, NoReturn

import click

# Only light modules here: what deals (numpy, the engine, pydantic's spec
# models, the writers) is imported by the commands that deal, so that
# `truedeal --help` and the job commands start without it.
from . import __version__
from .cards import D
from .choices import DEFAULT_STREAM, FORMATS, MAX_DEALS, STREAMS
from .errors import Impossible, SpecError, TooLargeToDeal
from .odds import odds_of_summary, percent_text
from .output import whole_stdout

if TYPE_CHECKING:
    import importlib.metadata

    from .engine import Plan
    from .formats import Rotation
    from .summary import CountSummary, Rejection


class UserError(Exception):
    """A problem with the user's input: one line, exit code 2."""


class OutputClosed(Exception):
    """The reader of our output went away (e.g. ``| head``): stop quietly."""


def _load_plan(spec_arg: str, to_count: bool = False) -> Plan:
    """The plan of SPEC (a path, inline JSON, a script or - for stdin), with a
    progress bar on a terminal; ``to_count``: :meth:`Plan.build_to_count`."""
    if not spec_arg.strip():
        raise UserError("empty SPEC: give a JSON file, a dealer script (.dlr), inline JSON, or - for standard input")
    from .constraints.load import load_constraints
    from .engine import Plan, TooWide

    # stdin is JSON or a dealer script (bytes); an argument may be inline JSON, a script or a path
    source = sys.stdin.buffer.read() if spec_arg == "-" else spec_arg
    spec = load_constraints(source)
    bar = None
    if sys.stderr.isatty():
        from tqdm import tqdm

        bar = tqdm(total=0, desc="listing", unit="pair", file=sys.stderr, leave=False, delay=0.5)

    def progress(done: int, total: int) -> None:
        if bar is not None:
            bar.total = total
            # update(), not refresh(): refresh() draws without recording it,
            # and close() then thinks there is nothing to erase
            bar.update(done - bar.n)

    try:
        return (Plan.build_to_count if to_count else Plan.build)(spec, progress)
    except TooWide as exc:
        raise UserError(f"spec too wide for exact enumeration: {exc}") from None
    finally:
        if bar is not None:
            bar.close()


def check_seed(seed: str | None) -> None:
    """A seed is used as its UTF-8 text: refuse one that has none (bytes
    that are not UTF-8 reach us as lone surrogates)."""
    if seed is None:
        return
    try:
        seed.encode("utf-8")
    except UnicodeEncodeError:
        raise UserError("--seed must be text (UTF-8); it contains bytes that are not") from None


def _write(chunks: Iterable[str]) -> None:
    out = sys.stdout
    try:
        for text in chunks:
            out.write(text)
        out.flush()
    except BrokenPipeError:
        raise OutputClosed() from None


#: Where the packages above the core register their commands (see pyproject.toml).
COMMANDS_ENTRY_POINT = "truedeal.commands"


class _LazyGroup(click.Group):
    """A group whose heavier commands are imported only when used: the core's
    own (:attr:`lazy`), and those of the job service, found through the
    :data:`COMMANDS_ENTRY_POINT` entry points, so that the core names none
    of them and a light install (without the ``server`` extra) still runs."""

    lazy = {
        "help": "truedeal.help_text:help_command",
        "set": "truedeal.tournament.cli:set_command",
        "verify": "truedeal.tournament.cli:verify_command",
        "shapes": "truedeal.analysis.commands:shapes_command",
        "distribution": "truedeal.analysis.commands:distribution_command",
        "answer": "truedeal.analysis.commands:answer_command",
        "stats": "truedeal.analysis.commands:stats_command",
    }

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """List the commands with their whole first sentence, wrapped (click
        would cut each summary at the line width, mid-phrase)."""
        rows = []
        for name in self.list_commands(ctx):
            cmd = self.get_command(ctx, name)
            if cmd is not None and not cmd.hidden:
                rows.append((name, cmd.get_short_help_str(limit=200)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy, *_plugins()})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.lazy:
            module, attr = self.lazy[name].split(":")
            return getattr(importlib.import_module(module), attr)
        command = super().get_command(ctx, name)
        if command is None and name in _plugins():  # reading the entry points costs ~25 ms: core commands skip it
            return _load_plugin(name, _plugins()[name])
        return command


@functools.cache
def _plugins() -> dict[str, importlib.metadata.EntryPoint]:
    """The registered server commands by name (read once per process)."""
    import importlib.metadata

    return {ep.name: ep for ep in importlib.metadata.entry_points(group=COMMANDS_ENTRY_POINT)}


def _load_plugin(name: str, entry: importlib.metadata.EntryPoint) -> click.Command:
    """The command behind ``entry``, or one that says in one line which extra
    to install when its package's dependencies are missing."""
    try:
        return entry.load()
    except ImportError as exc:
        missing = exc.name or str(exc)

        @click.command(name=name, context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
                       add_help_option=False)
        def unavailable() -> None:
            """(needs the server extra: pip install 'truedeal[server]')"""
            raise UserError(f"'truedeal {name}' needs the job service's dependencies ({missing} is missing): "
                            "pip install 'truedeal[server]'")

        return unavailable


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="truedeal")
def cli() -> None:
    """Exactly uniform constrained bridge deals, and Pavlicek deal numbers.

    SPEC is a JSON spec or a dealer script: a file (.json, .dlr), inline JSON
    or script text, or - for standard input, e.g.
    '{"north": {"hcp": [15, 17], "shape": "any 4333 + any 4432 + any 5332"}}'
    or 'hcp(north) + hcp(south) >= 25 && spades(north) + spades(south) >= 8'.

    \b
    Seats: north, east, south, west (or N, E, S, W). Fields of a seat, all optional:
      hcp               points A=4 K=3 Q=2 J=1: 12 or [12, 14]
      spades, hearts,   suit lengths: 5 or [5, 13]; or an object of the suit's
      diamonds, clubs   length, hcp, controls, losers, points, top2..top5, quality
      shape             dealer shapes: "5xxx", "any 4333 + any 5332",
                        "any 5xxx - 5xxx" (+ or, - but not, x any)
      controls, losers, top2..top5, cccc, points, holds, any_of, not:
                        see truedeal help spec
    Besides the seats: condition (a dealer-script condition), any_of, script.

    \b
    The whole language with examples: truedeal help spec (JSON specs) and
    truedeal help script (dealer scripts); every detail of scripts in
    docs/dealer-scripts.md.
    """


@cli.command()
@click.argument("spec")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--exact", "exact_only", is_flag=True,
              help="Never estimate: list coin-card classes with 20 times the usual work (minutes, not seconds; "
                   "memory as usual), weigh rnd() wherever its classes list exactly, and exit 2 with the "
                   "reason when no exact plan exists.")
def count(spec: str, as_json: bool, exact_only: bool) -> None:
    """Exact number of deals that satisfy SPEC, its probability and its cases."""
    summary = (_patient_plan(spec) if exact_only else _load_plan(spec, to_count=True)).summary()
    odds = odds_of_summary(summary)  # "1 in 291 (0.343%)"; the exact fraction is probability_exact
    if as_json:
        click.echo(json.dumps({**summary.to_json(), "odds": odds}))
    elif summary.rejection is not None and summary.deals is None:
        _echo_estimate(summary, summary.rejection, odds)
    elif summary.deals_expected is not None:
        _echo_expected(summary, odds)
    else:
        _echo_exact(summary, odds)


def _patient_plan(spec: str) -> Plan:
    """The plan of ``count --exact``: patient classes, and exact or a UserError."""
    from .class_split import patient

    with patient():
        plan = _load_plan(spec, to_count=True)
    if not plan.counts_exactly:
        raise UserError(f"no exact plan within the bounds ({plan.summary().method}); without --exact, count estimates it")
    return plan


def _echo_estimate(summary: CountSummary, rej: Rejection, odds: str) -> None:
    click.echo(f"deals:        about {summary.deals_estimate:,.6g} (+/- {summary.deals_estimate_stderr:,.2g}, estimated)")
    if summary.possible:
        click.echo(f"probability:  {odds}")
    click.echo(f"method:       {summary.method}")
    if rej.why_not_exact:
        click.echo(f"not exact:    the whole is too wide to list: {rej.why_not_exact}")
    click.echo(f"acceptance:   {percent_text(rej.acceptance_rate)} of listed deals "
               f"(+/- {percent_text(rej.acceptance_stderr)}, {rej.pilot_draws:,} pilot draws)")
    cases = "" if rej.listed_cases is None else f" in {rej.listed_cases:,} cases"
    click.echo(f"listed:       {rej.listed_deals:,} deals{cases} for the exact seats")


def _echo_expected(summary: CountSummary, odds: str) -> None:
    """A script whose ``rnd`` is weighed: the deals it is expected to keep, exactly."""
    expected = Fraction(summary.deals_expected or 0)
    shown = f"{expected.numerator:,}" if expected.denominator == 1 else f"{float(expected):,.6g} (exactly {expected})"
    click.echo(f"deals:        {shown} expected: rnd() keeps each deal with its chance")
    click.echo(f"probability:  {odds}")
    click.echo(f"cases:        {summary.cases:,}")
    click.echo(f"classes:      {_branch_list(summary.branches or [])} (one listing per class of rnd's numbers)")
    click.echo(f"method:       {summary.method}")


def _echo_exact(summary: CountSummary, odds: str) -> None:
    if not summary.possible:
        click.echo("deals:        0 (no deal satisfies this spec)")
    else:
        click.echo(f"deals:        {summary.deals:,}")
        click.echo(f"probability:  {odds}")
    sizes = summary.sizes
    if summary.cases is not None:
        click.echo(f"cases:        {summary.cases:,}")
    if summary.branches is not None:  # an either/or: one listing per branch
        click.echo(f"branches:     {_branch_list(summary.branches)}")
    if summary.branches is not None or summary.cases is None:  # not one listing: no sizes to show
        click.echo(f"method:       {summary.method}")
        if summary.rejection is not None:  # counted exactly, drawn by rejection
            click.echo(f"acceptance:   {percent_text(summary.rejection.acceptance_rate)} of listed deals (exact)")
        return
    click.echo(f"side total:   {sizes.side_total:,} x {sizes.unconstrained_ways:,} for the unconstrained seats")
    click.echo(f"method:       exact enumeration, no rejection ({sizes.entries:,} listing entries, {sizes.build_seconds:.3f} s)")


@cli.command()
@click.argument("spec")
@click.option("-n", "--count", "n", type=int, default=None,
              help=f"Number of deals (1..{MAX_DEALS:,}); default: a script's produce, else its generate "
                   "(dealer's deals tried; none is thrown away here), else 1.")
@click.option("--seed", default=None, help="Reproducible stream: same seed and spec give the same deals.")
@click.option("--stream", type=click.Choice(STREAMS), default=DEFAULT_STREAM, show_default=True,
              help="Seeded stream version: v2 differs from v1 only for specs that every deal fits, "
                   "whose deal numbers it reads straight off the stream (5x faster with --format numbers); "
                   "v3 draws a listing in 16 shards, each from a stream of its own (what a job's workers "
                   "that hold only some shards draw), and every other spec as v2.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default=None,
              help="Output: pbn (PBN 2.1), numbers (deal numbers), json (JSON Lines), text (diagrams), lin (BBO). "
                   "Not given: a dealer script's print actions (printall, printoneline, printpbn, ...) "
                   "print each deal in dealer's layout; without print actions, pbn.")
@click.option("--first-board", type=int, default=1, show_default=True, help="Board number of the first deal.")
@click.option("--dealer", default=None, metavar="SEAT|rotate",
              help="Dealer of every board (N, E, S, W) or rotate by board number; default: a script's dealer, else rotate.")
@click.option("--vulnerability", default=None, metavar="none|ns|ew|all|rotate",
              help="Vulnerability of every board, or rotate by board number; default: a script's, else rotate.")
def generate(spec: str, n: int | None, seed: str | None, stream: str, fmt: str | None, first_board: int,
             dealer: str | None, vulnerability: str | None) -> None:
    """Draw N deals uniformly from all deals that satisfy SPEC.

    With --seed the deals come from a SHAKE-256 stream keyed by the seed
    (see README); without it from that stream keyed by the operating system's
    CSPRNG.  Dealer and
    vulnerability follow the board numbers' standard cycle unless a dealer
    script's `dealer`/`vulnerable` or --dealer/--vulnerability fix them.
    """
    from .kernel import note_if_missing

    if n is not None:
        _check_count(n)
    if first_board < 1:
        raise UserError(f"--first-board must be at least 1, got {first_board}")
    check_seed(seed)
    note_if_missing()  # one line on stderr when the compiled kernel is not built
    plan = _load_plan(spec)
    rotation = _rotation(plan.program, dealer, vulnerability)
    if n is None:
        n = _default_count(plan.program)
    write = _writer(plan.program, fmt, first_board, rotation, seed)
    if not plan.possible:
        raise UserError("no deal satisfies this spec (it counts 0 deals)")
    if plan.weighted:
        kept = "" if plan.acceptance is None else f" (acceptance {percent_text(plan.acceptance)})"
        click.echo(f"truedeal: note: {plan.summary().method.removeprefix('exact: ')}{kept}", err=True)
    elif not plan.exact:
        kept = percent_text(plan.acceptance or 0.0)
        from .constraints import ir

        law = ("each deal is kept as often as the script's rnd() keeps it" if plan.program is not None
               and "rnd" in ir.opaque_names(plan.program.condition) else "deals stay exactly uniform")
        click.echo(f"truedeal: note: {plan.summary().method} (acceptance {kept}); {law}", err=True)
    _note_estimates(plan.program, spec)
    bar = None
    if sys.stderr.isatty():
        from tqdm import tqdm

        bar = tqdm(total=n, desc="dealing", unit="deal", file=sys.stderr, leave=False, delay=0.5)

    def batches():
        for owners, limbs in plan.numbered_deals(n, seed, stream, cards=fmt != "numbers"):
            if bar is not None:
                bar.update(len(limbs))
                if bar.n >= n:  # erased before the last deals are written, so nothing is glued onto it
                    bar.close()
            yield owners, limbs  # the writers format the limbs in the kernel

    try:
        _write(write(batches()))
    finally:
        if bar is not None:
            bar.close()


def _default_count(program) -> int:
    """-n's default: the script's produce, else its generate
    (:func:`~truedeal.constraints.load.deals_wanted`), else 1."""
    from .constraints.load import deals_wanted

    wanted = None if program is None else deals_wanted(program)
    if wanted is None:
        return 1
    try:
        return _check_count(wanted[1])
    except UserError as exc:
        raise UserError(f"the script's {wanted[0]} {wanted[1]}: {exc}") from None


def _writer(program, fmt: str | None, first_board: int, rotation: Rotation, seed: str | None):
    """generate's writer, batches in, text out: --format's; else, when the
    script has print actions, those actions (checked now); else PBN's."""
    from .formats.dealer_actions import print_actions

    actions = print_actions(program) if fmt is None else ()
    if not actions:
        from .formats import WRITERS

        return functools.partial(WRITERS[fmt or "pbn"], first_board=first_board, rotation=rotation)
    from .formats.dealer_actions import actions_rng, check_actions, dealer_actions

    try:
        check_actions(actions)
    except ValueError as exc:
        raise UserError(f"the script's actions: {exc}") from None
    return functools.partial(dealer_actions, first_board=first_board, actions=actions, rotation=rotation,
                             rng=actions_rng(seed))


def _note_estimates(program, spec: str) -> None:
    """One line on stderr when the script has average or frequency actions,
    which generate does not estimate: `truedeal answer` gives them exactly."""
    from .formats.dealer_actions import has_estimates

    if has_estimates(program):
        script = shlex.quote(spec) if spec != "-" and os.path.isfile(spec) else "SCRIPT"
        click.echo(f"truedeal: note: the script's average/frequency actions are not estimated here; "
                   f"`truedeal answer {script}` gives their exact values", err=True)


#: Branches listed one by one; past that, the first few and how many.
_BRANCHES_SHOWN = 4


def _branch_list(branches: list[int]) -> str:
    """Each branch's deals, or the first few of many and how many there are."""
    shown = ", ".join(f"{b:,}" for b in branches[:_BRANCHES_SHOWN])
    if len(branches) <= _BRANCHES_SHOWN:
        return f"{shown} deals"
    return f"{shown}, ... deals ({len(branches)} branches, the first {_BRANCHES_SHOWN} shown; --json lists all)"


def _rotation(program, dealer: str | None, vulnerability: str | None) -> Rotation:
    """--dealer/--vulnerability, else the script's settings, else the standard cycle."""
    from .formats.rotation import Rotation, RotationError

    try:
        return Rotation.from_words(dealer, vulnerability, None if program is None else program.rotation())
    except RotationError as exc:
        raise UserError(f"--{exc.field}: {exc}") from None


def _check_count(n: int) -> int:
    from .engine import check_count

    try:
        return check_count(n)
    except ValueError as exc:
        raise UserError(str(exc)) from None


@cli.command()
@click.argument("spec")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def explain(spec: str, as_json: bool) -> None:
    """What SPEC (JSON or dealer script) compiles to: the condition, what is
    listed exactly and what is left to rejection, the cases and the build time."""
    from .explain import explanation

    info = explanation(_load_plan(spec, to_count=True))
    if as_json:
        click.echo(json.dumps(info))
        return
    width = max(map(len, info)) + 2
    for key, value in info.items():
        if isinstance(value, list):
            click.echo(f"{key + ':':{width}}" + ("" if value else "none"))
            for item in value:
                click.echo(f"  - {item}")
        else:  # cases are None for an estimate, and for a split listed one class at a time
            click.echo(f"{key + ':':{width}}{_shown('not counted' if key == 'cases' and value is None else value)}")


#: Longest value ``explain`` prints as text: a script's variables, expanded, can make megabytes.
EXPLAIN_SHOWN = 2_000


def _shown(value: object) -> str:
    text = str(value)
    if len(text) <= EXPLAIN_SHOWN:
        return text
    return f"{text[:EXPLAIN_SHOWN]} ... ({len(text):,} characters in all; --json prints them all)"


def pbn_deal_lines(text: str) -> Iterable[str]:
    """The deals in ``text``: a PBN file (its ``[Deal "..."]`` tags; other
    tags, ``%`` and ``;`` lines and ``{...}`` commentary are skipped) or
    plain deal strings, one a line."""
    in_comment = False
    for line in text.splitlines():
        stripped = line.strip()
        if in_comment:
            in_comment = "}" not in stripped
            continue
        if not stripped or stripped[0] in "%;":
            continue
        if stripped.startswith("{"):
            in_comment = "}" not in stripped
            continue
        if stripped.startswith("[") and not re.match(r'\[\s*Deal\s+"', stripped, re.IGNORECASE):
            continue  # another PBN tag ([Event ...], [Board ...])
        yield stripped


@cli.command(name="encode", short_help="Deal numbers of PBN deals (strings, or a PBN file on stdin).")
@click.argument("deals", nargs=-1, required=True)
def encode_cmd(deals: tuple[str, ...]) -> None:
    """Deal number of each PBN deal string (e.g. 'N:AKQJ.AKQ.AKQ.AKQ ...').

    Give - to read standard input: a PBN file (its [Deal] tags are encoded)
    or one deal per line.
    """
    from .dealnumber import encode
    from .formats import parse_deal

    lines = list(pbn_deal_lines(sys.stdin.read())) if deals == ("-",) else deals
    for text in lines:
        if not text.strip():
            continue
        try:
            row = parse_deal(text)
        except ValueError as exc:
            raise UserError(str(exc)) from None
        click.echo(encode(row))


# ignore_unknown_options: "-1" is a (bad) number to report, not an option
@cli.command(name="decode", short_help="PBN deal strings of deal numbers.",
             context_settings={"ignore_unknown_options": True})
@click.argument("numbers", nargs=-1, required=True)
def decode_cmd(numbers: tuple[str, ...]) -> None:
    """PBN deal string of each deal NUMBER (0 <= n < D).  Give - to read stdin."""
    from .dealnumber import decode
    from .formats import deal_string

    items = sys.stdin.read().split() if numbers == ("-",) else numbers
    rows = []
    for text in items:  # validate everything before printing anything
        try:
            if not re.fullmatch(r"-?(\d+|\d{1,3}(,\d{3})+)", text.strip()):
                raise ValueError
            value = int(text.replace(",", ""))
        except ValueError:
            raise UserError(f"not a deal number: {text!r} (expected an integer 0 <= n < {D:,})") from None
        if not 0 <= value < D:
            raise UserError(f"deal number out of range: {text} (expected 0 <= n < D = {D:,})")
        rows.append(decode(value))
    for row in rows:
        click.echo(deal_string(row))


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the CLI, turning user errors into one line and exit 2."""
    args = sys.argv[1:] if argv is None else argv
    if not args:  # bare `truedeal`: the help, not an error
        click.echo(cli.get_help(click.Context(cli, info_name="truedeal")))
        return 0
    try:
        # standalone_mode=False: click *returns* the code of a command that
        # raised Exit(code) (e.g. serve's 1 when Redis or the worker died)
        code = cli.main(args=args, prog_name="truedeal", standalone_mode=False)
        if isinstance(code, int) and not isinstance(code, bool):
            return code
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.exceptions.Abort:
        click.echo("truedeal: interrupted", err=True)
        return 130
    except click.ClickException as exc:  # usage errors
        click.echo(f"truedeal: error: {exc.format_message()}", err=True)
        return 2
    except (UserError, SpecError, Impossible, TooLargeToDeal) as exc:
        click.echo(f"truedeal: error: {exc}", err=True)
        return 2
    except (OutputClosed, BrokenPipeError):  # e.g. `truedeal generate ... | head`
        try:  # keep the interpreter from complaining when it flushes stdout at exit
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 0
    except KeyboardInterrupt:
        click.echo("truedeal: interrupted", err=True)
        return 130
    except Exception as exc:  # a bug, not the user's fault: still one line, no traceback
        click.echo(f"truedeal: internal error (please report): {type(exc).__name__}: {exc}", err=True)
        return 1
    return 0


#: Commands whose whole work is written to the standard streams by the time
#: they return (no file, thread or child process left to finish): after them
#: the executable leaves without the interpreter's teardown.
QUICK_EXIT = frozenset({"generate", "count", "explain", "encode", "decode"})


def run() -> NoReturn:
    """The ``truedeal`` executable: :func:`main`, then the exit.  After a
    :data:`QUICK_EXIT` command, with no other thread alive, it flushes the
    standard streams, runs the exit handlers and leaves by ``os._exit``:
    the teardown that a normal exit adds, every module's objects freed one
    by one, is 30-40 ms, a tenth of ``generate -n 1``'s wall time."""
    whole_stdout()  # every byte of the output, even when a stop and continue cuts a write short
    code = main()
    if sys.argv[1:2] and sys.argv[1] in QUICK_EXIT and threading.active_count() == 1:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):  # a reader gone (main said so already), or a closed stream
                pass
        atexit._run_exitfuncs()  # what the interpreter's exit runs first
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":  # pragma: no cover
    run()
