"""The error every bad configuration raises, below every module that raises it."""


class ConfigError(ValueError):
    """A strategy spec that cannot be built: unknown name, unknown key or bad value."""
