"""The one exception type for every data problem."""


class DatasetError(ValueError):
    """A dataset cannot be loaded; the message names the file and says what to do."""
