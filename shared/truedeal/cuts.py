"""Which listing a job cuts into slices, and how its slices come back.

:meth:`~truedeal.engine.Plan.build` makes one listing that can be cut in two
cases: the factored listing (:mod:`truedeal.listing.slices`, slices of
cells), and the paired listing when the factored one is too wide and the
paired one is tried next (:mod:`truedeal.listing.paired_slices`, slices of
groups).  Any other plan is built whole.  Either way the merged listing is
the one ``Plan.build`` makes, so it deals the same bytes.
"""

from __future__ import annotations

from typing import cast

from .constraints import ir
from .constraints.compile import Compiled, compile_program
from .engine import exact_source, other_listing_kind
from .listing import Listing, TooWide, paired
from .listing.paired_slices import FORMAT as PAIRED_FORM
from .listing.paired_slices import PairedCut, PairedSlice, merge_paired
from .listing.slices import Cut, Slice, merge, slice_form
from .spec import Spec


def cut_listing(spec: Spec | ir.Program, parts: int) -> Cut | PairedCut | None:
    """The cut of ``spec``'s listing into ``parts`` slices; None when its plan
    is not one listing that can be cut (too wide, or another kind)."""
    source = exact_source(spec)
    if source is None:
        return None
    try:
        return Cut.of(source, parts)
    except TooWide:
        pass
    comp = _compiled(spec, source)
    listed = paired.view(comp) if other_listing_kind(comp) == "paired" else None
    if listed is None:
        return None
    try:
        return PairedCut.of(listed, parts)
    except TooWide:
        return None


def load_slice(data: bytes) -> Slice | PairedSlice:
    """A slice from its compact form, of either kind; ValueError on anything else."""
    return PairedSlice.from_bytes(data) if slice_form(data) == PAIRED_FORM else Slice.from_bytes(data)


def merge_slices(spec: Spec | ir.Program, slices: list, cut: Cut | PairedCut | None = None) -> Listing:
    """The whole listing from all the slices :func:`cut_listing`'s cut made
    (TooWide or ValueError as :func:`~.listing.slices.merge` and
    :func:`~.listing.paired_slices.merge_paired`); a paired merge reuses
    ``cut``'s prepared tables when given."""
    source = exact_source(spec)
    if source is None:
        raise ValueError("this spec's plan is not one listing made of slices")
    if slices and all(isinstance(s, PairedSlice) for s in slices):
        prepared = cut.prepared if isinstance(cut, PairedCut) else None
        # a Plan reads both kinds alike (through make_sampler), as Plan.build stores either
        listed = paired.view(_compiled(spec, source))
        if listed is None:
            raise ValueError("this spec's plan is not a paired listing")
        return cast(Listing, merge_paired(listed, slices, prepared))
    return merge(source, slices)


def _compiled(spec: Spec | ir.Program, source) -> Compiled:
    """What the other listings are built from, as ``Plan.build`` does."""
    if isinstance(source, Compiled):
        return source
    return compile_program(spec.program() if isinstance(spec, Spec) else spec)
