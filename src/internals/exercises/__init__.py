"""Checkers for the chapters' build-it exercises: each takes the reader's function and tests it
against torch (or against the package's own piece), raising AssertionError on a mismatch."""
