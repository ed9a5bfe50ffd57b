"""The assertion helper shared by the misuse tests."""

import contextlib

import pytest


@contextlib.contextmanager
def raises(exc, *fragments):
    """Expects ``exc`` whose message contains every fragment; yields pytest's ExceptionInfo."""
    with pytest.raises(exc) as info:
        yield info
    msg = str(info.value)
    for f in fragments:
        assert f in msg, f"{f!r} not in {msg!r}"
