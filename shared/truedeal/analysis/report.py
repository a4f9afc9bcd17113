"""The HTML report of ``truedeal stats``: one self-contained page, plots embedded as PNG."""

from __future__ import annotations

import base64
import html

from .stats import StatsReport


def _img(png: bytes, alt: str) -> str:
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{base64.b64encode(png).decode()}">'


def _rows(report: StatsReport) -> str:
    out = []
    for t in report.tests:
        low = ' class="low"' if t.p_value < report.threshold else ""
        out.append(
            f"<tr{low}><td>{html.escape(t.name)}</td><td>{t.statistic:.2f}</td><td>{t.dof}</td><td>{t.p_value:.4g}</td></tr>"
        )
    return "\n".join(out)


def render_html(report: StatsReport) -> str:
    """The whole page: verdict, table of tests, observed-vs-expected plots, HCP-by-class plots."""
    from .plots import hcp_by_class_png, test_png

    verdict = (
        f"FLAGGED: smallest p-value {report.min_p_value:.3g} is below {report.threshold:.3g}"
        if report.flagged
        else f"consistent with the exact laws: smallest p-value {report.min_p_value:.3g} is above {report.threshold:.3g}"
    )
    figures = [_img(test_png(t), t.name) for t in report.tests if not t.name.startswith("card ")]
    figures += [_img(hcp_by_class_png(d, report.method), "HCP by shape class") for d in report.hcp_by_class]
    notes = "".join(f"<p class=note>{html.escape(n)}</p>" for n in report.notes)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>truedeal stats: {html.escape(report.method)}</title>
<style>body{{font-family:sans-serif;max-width:70em;margin:auto}} td,th{{padding:2px 8px;text-align:right}}
td:first-child{{text-align:left}} tr.low{{background:#fdd}} .note{{color:#a40000}} img{{display:block;margin:1em 0}}</style>
</head><body>
<h1>truedeal stats</h1>
<p>Spec <code>{html.escape(report.spec.canonical_json())}</code>, {report.n:,} deals by method
<b>{html.escape(report.method)}</b>, seed {html.escape(repr(report.seed))}.</p>
{notes}
<p><b>{html.escape(verdict)}</b> (Bonferroni: family-wise level 0.01 over {len(report.tests)} tests).
Expected laws are exact counts by conditioning; bins expecting fewer than 5 deals are merged.</p>
<table><tr><th>test</th><th>chi-square</th><th>dof</th><th>p-value</th></tr>
{_rows(report)}
</table>
{"".join(figures)}
</body></html>
"""
