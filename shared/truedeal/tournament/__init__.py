"""Tournament sets: board sets from specs, verifiable randomness, double dummy
and par, and the files a tournament uses.

Modules, in data-flow order:

* :mod:`.setfile` -- the set file (pydantic), its sessions and specs;
* :mod:`.derive` -- keys and the documented derivation (key, public value,
  session, board) -> deals (docs/tournaments.md);
* :mod:`.build` -- a session's boards (:class:`truedeal.formats.records.HandRecord`);
* :mod:`.solve` -- double dummy and par with endplay's DDS;
* :mod:`.files` -- writing a session's files;
* :mod:`.commit` -- manifest, keys and :func:`~.commit.verify`;
* :mod:`.cli` -- ``truedeal set`` and ``truedeal verify``.
"""
