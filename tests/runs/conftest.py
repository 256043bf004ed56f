"""The runs tests make their run folders with the experiments tests' tiny corpus and experiment files."""

from tests.experiments.conftest import corpus_path, registries, write_toml  # noqa: F401 (fixtures)
