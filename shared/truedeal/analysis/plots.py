"""Matplotlib figures for distributions and stats reports, as PNG bytes.

The Agg backend is chosen explicitly: no display is needed or used.
"""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from .chisquare import ChiSquare  # noqa: E402
from .distribution import Distribution  # noqa: E402
from .stats import HcpByClass  # noqa: E402


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def distribution_png(dist: Distribution, title: str = "") -> bytes:
    """Bar chart of an exact law, in percent."""
    labels = [str(v) for v in dist.counts]
    pct = [100 * float(dist.probability(v)) for v in dist.counts]
    fig, ax = plt.subplots(figsize=(max(5, 0.35 * len(labels)), 3.5))
    ax.bar(labels, pct, color="#3465a4")
    ax.set_xlabel(dist.feature.name)
    ax.set_ylabel("% of deals (exact)")
    ax.set_title(title or f"{dist.feature.name}: exact law over {dist.total:,} deals", fontsize=9)
    if len(labels) > 14:
        ax.tick_params(axis="x", labelrotation=90)
    return _png(fig)


def test_png(test: ChiSquare) -> bytes:
    """Observed against expected counts in the test's merged bins."""
    x = range(len(test.labels))
    fig, ax = plt.subplots(figsize=(max(5, 0.4 * len(test.labels)), 3.2))
    ax.bar([i - 0.2 for i in x], test.observed, width=0.4, label="observed", color="#cc6633")
    ax.bar([i + 0.2 for i in x], test.expected, width=0.4, label="expected (exact)", color="#3465a4")
    ax.set_xticks(list(x), test.labels, rotation=90 if len(test.labels) > 10 else 0, fontsize=7)
    ax.set_title(f"{test.name}: chi2 = {test.statistic:.1f}, dof {test.dof}, p = {test.p_value:.3g}", fontsize=9)
    ax.legend(fontsize=7)
    return _png(fig)


def hcp_by_class_png(data: HcpByClass, method: str) -> bytes:
    """P(HCP | shape class): the sampler's frequencies (dots) against the exact law (lines)."""
    fig, ax = plt.subplots(figsize=(6, 3.6))
    for i, (cls, exact) in enumerate(data.exact.items()):
        color = f"C{i}"
        ax.plot(data.hcps, exact, "-", color=color, label=f"{cls} exact")
        ax.plot(data.hcps, data.observed[cls], "o", color=color, label=f"{cls} {method}")
    ax.set_xlabel("HCP")
    ax.xaxis.get_major_locator().set_params(integer=True)  # type: ignore[call-arg]  # a MaxNLocator; stubs type the base
    ax.set_ylabel("P(HCP | shape class)")
    ax.set_title(f"HCP by shape class: {method} against the exact law", fontsize=9)
    ax.legend(fontsize=7, ncol=2)
    return _png(fig)
