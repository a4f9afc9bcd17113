"""Exact answers about a spec, and the statistics that show its deals are uniform.

* :mod:`.shapeclasses` -- the 39 shape classes (seed 003) and their hand counts;
* :mod:`.conditioning` -- the one engine call everything here rests on: the
  exact number of deals of a spec with one extra per-seat condition;
* :mod:`.distribution` -- exact laws of a feature (HCP, suit length, shape
  class of a seat) by conditioning, with exact mean and variance;
* :mod:`.chisquare` -- Pearson's test with small bins merged;
* :mod:`.pavlicek1999` -- the biased 1999 method, a labelled baseline for
  :mod:`.stats` only, never used for dealing;
* :mod:`.stats` and :mod:`.report` -- ``truedeal stats``: observed against
  exact expected laws, and its HTML report.

Nothing here imports Redis, Celery or Flask.
"""
