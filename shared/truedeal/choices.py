"""What a request may choose: output formats, seeded streams, how many deals,
and how an estimate (``truedeal distribution`` and ``answer``) draws by default.

Names only, free of numpy and of the engine: ``truedeal --help`` and the job
commands build their options from them without loading what deals.
"""

#: Names of the output formats (:data:`truedeal.formats.WRITERS` has a writer for each).
FORMATS: tuple[str, ...] = ("numbers", "pbn", "json", "text", "lin")

#: The published seeded streams (:mod:`truedeal.randomness` says how each draws) and the default one.
STREAMS = ("v1", "v2", "v3")
DEFAULT_STREAM = "v1"

#: Largest number of deals one request may ask for.
MAX_DEALS = 1_000_000_000

#: Deals drawn for an estimate unless asked otherwise (:mod:`truedeal.analysis.sampled`).
DEFAULT_SAMPLES = 100_000
#: ... and when the expression needs double dummy (DDS solves a few deals a second per core).
DEFAULT_DD_SAMPLES = 500
DEFAULT_SEED = "truedeal/distribution"
