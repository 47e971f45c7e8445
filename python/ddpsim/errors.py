"""ddpsim.Error: every error of the Python API, as the command line's."""


class Error(Exception):
    """A ddpsim error: the message the command line prints after "ddpsim: error: ",
    the command line's exit code for it (2: bad input, 3: a missed target,
    4: does not fit, 130: cancelled, 1: a bug in ddpsim), and where the input
    is wrong when known (file, 1-based line and column, the key)."""

    def __init__(self, message, exit_code=2, file="", line=0, column=0, key=""):
        super().__init__(message, exit_code, file, line, column, key)
        self.message = message
        self.exit_code = exit_code
        self.file = file
        self.line = line
        self.column = column
        self.key = key

    def __str__(self):
        return self.message
