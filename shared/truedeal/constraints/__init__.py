"""Constraints: the internal form (:mod:`.ir`) and the languages that compile to it."""
