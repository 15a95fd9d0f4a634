"""Crossref references: which get re-parsed, how their strings are cleaned, the workers."""
