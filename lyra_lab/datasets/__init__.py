"""Public benchmark files one command away, checked against pinned checksums, found the same way everywhere.

``lyra-lab datasets get locomo`` downloads LoCoMo's ``locomo10.json`` from the
benchmark's own repository (``--from FILE`` installs a copy you already have),
checks its pinned SHA-256 and puts it in ``data_dir``. Every command, test,
notebook and experiment file then finds it through ``path`` (or ``dataset:locomo``
as an experiment's corpus path): the dataset's environment variable
(``LYRA_LOCOMO``) when set, else the installed copy. LongMemEval's cleaned release
is here too (``longmemeval-oracle``, ``longmemeval-s``, ``longmemeval-m``).

- ``CATALOG`` / ``Dataset``: each file's name, published URL, pinned SHA-256 and size.
- ``find`` (None when absent), ``path`` (raises), ``missing_message`` (the one
  line shown when absent, naming the command that fixes it).
- ``install``: download or copy, check, then move into place.
"""

from lyra_lab.datasets._catalog import CATALOG, Dataset
from lyra_lab.datasets._store import (
    DATA_DIR_ENV,
    ChecksumError,
    DatasetError,
    Installed,
    data_dir,
    dataset,
    find,
    install,
    installed_path,
    missing_message,
    path,
    sha256_of,
)

__all__ = [
    "CATALOG",
    "DATA_DIR_ENV",
    "ChecksumError",
    "Dataset",
    "DatasetError",
    "Installed",
    "data_dir",
    "dataset",
    "find",
    "install",
    "installed_path",
    "missing_message",
    "path",
    "sha256_of",
]
