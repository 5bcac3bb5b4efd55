"""Shared fixtures: the tally of bit-identical results, printed at the end of the run. The tally only reports: the
tests assert bit-identity case by case (known_differences.py lists the exceptions)."""
import collections

import pytest

TALLY = collections.defaultdict(collections.Counter)


def record(op, **counts):
    """Adds counts (cases, bitwise-identical outputs/indices/gradients, expected refusals...) for an operator."""
    for k, v in counts.items():
        TALLY[op][k] += int(v)


@pytest.fixture
def tally():
    return record


def pytest_terminal_summary(terminalreporter):
    if not TALLY:
        return
    terminalreporter.section("poolkit conformance tally (per operator)")
    for op in sorted(TALLY):
        items = ", ".join(f"{k}={v}" for k, v in sorted(TALLY[op].items()))
        terminalreporter.write_line(f"{op}: {items}")
