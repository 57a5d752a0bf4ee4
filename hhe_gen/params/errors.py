"""The one error type every parameter check raises."""

__all__ = ["ParameterError", "MAX_SHOWN", "shown"]

MAX_SHOWN = 80
"""At most this many characters of a rejected value appear in an error message."""


def _size(n: int) -> str:
    if n < 1000:
        return f"{n} B"
    if n < 1_000_000:
        return f"{n / 1000:.1f} kB"
    return f"{n / 1_000_000:.2f} MB"


def _path_like(value) -> bool:
    """A file path (an ``os.PathLike``, or a one-line string of a path's length with a separator)."""
    import os
    if isinstance(value, os.PathLike):
        return True
    return isinstance(value, str) and os.sep in value and len(value) <= 4096 and not any(c.isspace() for c in value)


def shown(value, limit: int = MAX_SHOWN) -> str:
    """``repr(value)`` in at most ``limit`` characters (plus the size of the whole value when cut),
    e.g. ``'[1, -1, 0, ...' (1.86 MB)``: what an error message may echo of a user's input.  A long
    file path is cut in the middle, so its file name shows: ``'/tmp/pytest-of-r.../case/prog.s'``."""
    text = repr(value)
    if len(text) <= limit:
        return text
    if _path_like(value):                   # a path keeps its file name: cut in the middle
        text = str(value)
        tail = limit - 24
        return repr(text[:16] + "..." + text[-tail:])
    if isinstance(value, (str, bytes)):
        quote = text[-1]
        whole = _size(len(value.encode("utf-8", "replace")) if isinstance(value, str) else len(value))
    else:
        quote, whole = "", f"{len(text):,} characters"
    return f"{text[:max(limit - 3 - len(quote), 1)]}...{quote} ({whole})"


class ParameterError(ValueError):
    """A parameter is outside what hhe-gen supports.

    The message always names the parameter, the value given and what is allowed, e.g.
    ``parameter 'N' = 1000 is not allowed: N must be a power of two in 2^3 .. 2^17``; the name and
    the value are shown in at most :data:`MAX_SHOWN` characters each (:func:`shown`), whatever the
    input was.

    Members
    -------
    name : str      the parameter's name as the user wrote it
    value : object  the rejected value (whole; only the message is shortened)
    allowed : str   a human description of the allowed range
    """

    def __init__(self, name, value, allowed):
        self.name = name
        self.value = value
        self.allowed = allowed
        super().__init__(f"parameter {shown(name)} = {shown(value)} is not allowed: {allowed}")
