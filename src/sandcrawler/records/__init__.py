"""Typed records that cross process boundaries, serialising to the seeds' JSON."""
