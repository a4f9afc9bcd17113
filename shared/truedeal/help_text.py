"""``truedeal help``: the spec language, with examples, as plain text.

Two topics: ``spec`` (JSON specs, the fields of :mod:`truedeal.spec`) and
``script`` (dealer scripts, :mod:`truedeal.constraints.dealer`).  The web
page serves the same text (``/language``), so the CLI, the page and the docs
speak one vocabulary.

The texts are plain strings and this module imports nothing but click:
``truedeal help`` must start as fast as ``truedeal --help`` (tests/test_layers.py).
Every example in them is checked by tests/test_cli.py: a line that starts
with ``{`` is a JSON spec, the indented lines after ``Example (NAME.dlr):``
are a script, and a line that starts with ``$ truedeal`` is a command, run
in a folder that holds those scripts.
"""

from __future__ import annotations

import click

SPEC_HELP = """\
JSON specs

A JSON spec is one object. Seats: north, east, south, west (or N, E, S, W).
Every field of a seat is optional, and every field given must hold. A range
is an integer n (exactly n) or [min, max] (both included).

Fields of a seat:
  hcp        high-card points (A=4 K=3 Q=2 J=1), 0..37
    {"north": {"hcp": [15, 17]}}
  spades, hearts, diamonds, clubs
             the suit's length, 0..13; or an object of ranges for that suit:
             length, hcp, controls, losers, top2..top5 (how many of AK, AKQ,
             AKQJ, AKQJT the seat holds), quality (dealer's Kaplan-Rubens
             suit quality, in hundredths, 0..1300) and points (below)
    {"west": {"spades": [6, 13], "hearts": 0}}
    {"east": {"diamonds": [6, 13], "clubs": 6}}
    {"south": {"hearts": {"length": 6, "top3": [2, 3], "hcp": [4, 8]}}}
  shape      a shape in dealer's syntax: four lengths S H D C, each a digit or
             x (any); "any" allows every order of the suits; + (or) and
             - (but not), left to right
    {"north": {"shape": "any 4333 + any 4432 + any 5332"}}
    {"east": {"shape": "any 5xxx - 5xxx"}}
  controls   A=2 K=1, 0..12
    {"north": {"controls": [5, 12]}}
  losers     dealer's losing-trick count (by suit: 0 to 3), 0..12
    {"north": {"losers": [0, 4]}}
  top2, top3, top4, top5
             how many of the top 2..5 cards of each suit, over the hand
             (0..8, 0..12, 0..16, 0..20)
    {"north": {"top2": [2, 8], "top3": [3, 12]}}
    {"west": {"top4": [0, 2], "top5": [0, 3]}}
  cccc       dealer's Kaplan-Rubens hand value, in hundredths, -50..3560
             (an opening is about 1200; see docs/dealer-scripts.md)
    {"north": {"cccc": [1400, 3560], "spades": {"length": [5, 13], "quality": [500, 1300]}}}
  points     a scale of your own, ace first, and the range of its total;
             in a suit's object, the total of that suit
    {"north": {"points": {"scale": [6, 4, 2, 1], "range": [20, 40]}}}
    {"north": {"clubs": {"points": {"scale": [3, 2, 1], "range": [4, 6]}}}}
  holds      cards the seat holds, suit then rank (predealt, listed exactly)
    {"south": {"holds": ["SA", "SK", "HQ"]}}
  any_of     either/or: a list of seat objects, at least one of which fits
    {"north": {"any_of": [{"hcp": [12, 14]}, {"hcp": [18, 19]}]}}
  not        a seat object the hand must not fit
    {"east": {"hcp": [8, 16], "not": {"shape": "any 4333"}}}

Besides the seats:
  condition  a condition of the dealer language (truedeal help script) that
             must hold too: sums across seats, fits, anything a script reads
    {"north": {"hcp": [15, 17]}, "condition": "hcp(north) + hcp(south) >= 25"}
  any_of     either/or across seats: a list of specs, at least one fits
    {"any_of": [{"north": {"hcp": [20, 21]}}, {"south": {"hcp": [20, 21]}}]}
  script     a whole dealer script, as text: its condition and predeal apply
    {"script": "predeal north SA\\ncondition hcp(north) >= 15"}

  $ truedeal count '{"north": {"hcp": [15, 17], "controls": [5, 12]}}'
"""

SCRIPT_HELP = """\
Dealer scripts

A dealer script is a .dlr file, or text that does not start with {: the
language of the classic dealer program, BBO's dialect too. It is parsed,
never run; an error names its line and column. Statements come in any
order and line breaks carry no meaning; # and // run to the end of the line,
/* ... */ spans lines.

Statements:
  condition EXPR       the condition (the last one counts); a bare EXPR too
  NAME = EXPR          a variable, a number or a condition, used after it
  predeal SEAT CARDS   cards given to a seat: predeal north SAK, HQJ2
  produce N            how many deals truedeal generate writes without -n
  generate N           dealer's number of deals to try; as nothing is thrown
                       away, the deals written without -n when no produce
  dealer SEAT          the dealer of every board written (--dealer overrides)
  vulnerable V         none, NS, EW or all on every board (--vulnerability
                       overrides)
  pointcount W W ...   the scale hcp() reads, ace first: pointcount 6 4 2 1
  altcount N W W ...   the scale ptN() reads (N 0..9), and its alias: tens
                       for pt0 ... c13 for pt9
  action A, B, ...     printall, printew, printpbn, print(north, south),
                       printcompact, printoneline, printes "text", EXPR,
                       average ["label"] EXPR,
                       frequency ["label"] (EXPR, lo, hi);
                       truedeal answer gives average and frequency exactly

Functions (SEAT: north east south west; SUIT: spades hearts diamonds clubs):
  hcp(SEAT[, SUIT])              points on the hcp scale, A=4 K=3 Q=2 J=1
  controls(SEAT[, SUIT])         A=2 K=1
  losers(SEAT[, SUIT])           dealer's losing-trick count
  top2..top5(SEAT[, SUIT])       how many of AK, AKQ, AKQJ, AKQJT
  aces, kings, queens, jacks, tens(SEAT[, SUIT])
                                 how many of that rank
  c13(SEAT[, SUIT])              A=6 K=4 Q=2 J=1
  pt0..pt9(SEAT[, SUIT])         the scales altcount redefines
  spades(SEAT), hearts, diamonds, clubs
                                 the suit's length
  hascard(SEAT, AS)              1 if the seat holds the card (rank, suit)
  shape(SEAT, any 4333 + 5xxx)   1 if the seat's pattern is one of these
  tricks(SEAT, STRAIN), score(vul, x3N, TRICKS), imps(X)
                                 double dummy, scores, IMPs: no listing
                                 holds them, they are checked by rejection
  rnd(N)                         a number 0..N-1 drawn per deal: where only
                                 constants are compared with it (leveling:
                                 roll = rnd(1000) ... roll < 63) and the
                                 listings are cheap or rejection keeps few,
                                 each class of its numbers is listed exactly
                                 and every deal is drawn with the chance the
                                 script keeps it (count: the expected deals,
                                 exactly); else by rejection
  cccc(SEAT), quality(SEAT, SUIT)
                                 dealer's Kaplan-Rubens values, in
                                 hundredths (an opening is about 1200)

Operators, loosest first, each a level of its own as in dealer (not as in C:
use parentheses): ?:  || or  && and  ==  !=  <  <=  >  >=  +  -  *  /  %,
then the prefixes ! not and -. A comparison is 1 or 0; / truncates, % takes
the dividend's sign, a division by zero on a deal gives 0.

Example (weak2.dlr):
    # North opens a weak 2S; South has 16+ and three spades
    dealer north
    vulnerable none
    produce 4
    weak2 = spades(north) == 6 && hcp(north) >= 5 && hcp(north) <= 10
    weak2 && top3(north, spades) >= 2 && hcp(south) >= 16 && spades(south) >= 3
    action average "south hcp" hcp(south), frequency (losers(south), 0, 12)

Example (slam.dlr):
    predeal south SAK, HA        // South holds these three cards
    pointcount 6 4 2 1           # the whole script's hcp(): A=6 K=4 Q=2 J=1
    altcount 0 1 1               # pt0() counts aces and kings
    fit = hearts(north) + hearts(south) >= 8
    condition fit && hcp(north) + hcp(south) >= 36 && pt0(north, hearts) >= 1

  $ truedeal count weak2.dlr
  $ truedeal explain slam.dlr
  $ truedeal generate 'hcp(north) >= 20 && shape(north, any 4432)' -n 2

The whole language, and where truedeal differs from dealer and endplay:
docs/dealer-scripts.md.
"""

#: The topics of ``truedeal help``, by name.
TOPICS: dict[str, str] = {"spec": SPEC_HELP, "script": SCRIPT_HELP}


def language_help(topic: str | None = None) -> str:
    """The text of ``topic`` (a key of :data:`TOPICS`), or of every topic."""
    return TOPICS[topic] if topic is not None else "\n".join(TOPICS.values())


@click.command(name="help", short_help="The spec language with examples: help spec (JSON specs), help script (dealer scripts).")
@click.argument("topic", required=False, metavar="[spec|script|COMMAND]")
@click.pass_context
def help_command(ctx: click.Context, topic: str | None) -> None:
    """The spec language with examples: TOPIC spec (JSON specs) or script
    (dealer scripts), both without a TOPIC; a COMMAND's help otherwise."""
    if topic is None or topic in TOPICS:
        click.echo(language_help(topic), nl=False)
        return
    parent = ctx.find_root()
    group = parent.command
    command = group.get_command(parent, topic) if isinstance(group, click.Group) else None
    if command is None:
        raise click.UsageError(f"no help topic or command {topic!r} (topics: spec, script)")
    with click.Context(command, info_name=topic, parent=parent) as sub:
        click.echo(command.get_help(sub))
