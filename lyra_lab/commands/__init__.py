"""The CLI's subcommands, one module each (``lyra-lab run``, ``report``, ``show``…), and how it reports failure.

``lyra_lab.cli`` builds the parser and imports a subcommand's module only when it
runs; this face offers what the CLI shares: ``UsageError`` (a bad command line,
one line on stderr), ``EXIT_USAGE`` (2), ``report_failure`` (any exception as one
line, the traceback written aside) and ``suggest`` ("did you mean …?").
"""

from lyra_lab.commands._errors import EXIT_USAGE, UsageError, report_failure, suggest

__all__ = ["EXIT_USAGE", "UsageError", "report_failure", "suggest"]
