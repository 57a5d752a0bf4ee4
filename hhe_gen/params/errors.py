"""The one error type every parameter check raises."""

__all__ = ["ParameterError"]


class ParameterError(ValueError):
    """A parameter is outside what hhe-gen supports.

    The message always names the parameter, the value given and what is allowed, e.g.
    ``parameter 'N' = 1000 is not allowed: N must be a power of two in 2^3 .. 2^17``.

    Members
    -------
    name : str      the parameter's name as the user wrote it
    value : object  the rejected value
    allowed : str   a human description of the allowed range
    """

    def __init__(self, name, value, allowed):
        self.name = name
        self.value = value
        self.allowed = allowed
        super().__init__(f"parameter {name!r} = {value!r} is not allowed: {allowed}")
