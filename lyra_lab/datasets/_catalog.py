"""The public benchmark files lyra-lab fetches: where each is published and the checksum it must have."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

# The LongMemEval authors publish the cleaned release on Hugging Face; a fixed revision, so
# the file behind the URL cannot change under its pinned checksum.
_LONGMEMEVAL = ("https://huggingface.co/datasets/xiaowu0162/longmemeval-cleaned/resolve/"
                "98d7416c24c778c2fee6e6f3006e7a073259d48f/")
_LONGMEMEVAL_PIN = ("the Hugging Face LFS checksum of revision 98d7416 as published by independent "
                    "projects pinning that revision; not re-measured by lyra-lab")


@dataclass(frozen=True)
class Dataset:
    """One public benchmark file: its name in lyra-lab, where it is published, what it must hash to.

    Attributes:
        name: the name commands take (``lyra-lab datasets get locomo``).
        title: what it is, for messages.
        filename: the file's own name, kept when installed.
        url: the benchmark's own published location of the file.
        sha256: the pinned SHA-256 of the file's bytes; a copy that differs is refused.
        size: the file's size in bytes.
        env_var: the environment variable that points lyra-lab at a copy, ahead of the installed one.
        license: the license the authors publish it under.
        pinned_from: where the checksum comes from.
    """

    name: str
    title: str
    filename: str
    url: str
    sha256: str
    size: int
    env_var: str
    license: str
    pinned_from: str


CATALOG: Mapping[str, Dataset] = MappingProxyType({d.name: d for d in (
    Dataset(name="locomo", title="LoCoMo (ACL 2024): 10 conversations, 1,986 questions",
            filename="locomo10.json",
            url="https://raw.githubusercontent.com/snap-research/LoCoMo/main/data/locomo10.json",
            sha256="79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4", size=2_805_274,
            env_var="LYRA_LOCOMO", license="CC BY-NC 4.0",
            pinned_from="measured on upstream's data/locomo10.json as last changed on 2024-08-09"),
    Dataset(name="longmemeval-oracle",
            title="LongMemEval (ICLR 2025), oracle: 500 questions with their evidence sessions only",
            filename="longmemeval_oracle.json", url=_LONGMEMEVAL + "longmemeval_oracle.json",
            sha256="821a2034d219ab45846873dd14c14f12cfe7776e73527a483f9dac095d38620c", size=15_388_478,
            env_var="LYRA_LONGMEMEVAL_ORACLE", license="MIT", pinned_from=_LONGMEMEVAL_PIN),
    Dataset(name="longmemeval-s",
            title="LongMemEval (ICLR 2025), S cleaned: 500 questions, ~40 sessions of history each",
            filename="longmemeval_s_cleaned.json", url=_LONGMEMEVAL + "longmemeval_s_cleaned.json",
            sha256="d6f21ea9d60a0d56f34a05b609c79c88a451d2ae03597821ea3d5a9678c3a442", size=277_383_467,
            env_var="LYRA_LONGMEMEVAL_S", license="MIT", pinned_from=_LONGMEMEVAL_PIN),
    Dataset(name="longmemeval-m",
            title="LongMemEval (ICLR 2025), M cleaned: 500 questions, ~500 sessions of history each",
            filename="longmemeval_m_cleaned.json", url=_LONGMEMEVAL + "longmemeval_m_cleaned.json",
            sha256="9d79e5524794a2e6900a3aa9cb7d9152c5a3e8319c9a87c25494ba1eacee495f", size=2_737_100_077,
            env_var="LYRA_LONGMEMEVAL_M", license="MIT", pinned_from=_LONGMEMEVAL_PIN),
)})
"""Every dataset lyra-lab fetches, by name: LoCoMo and LongMemEval's cleaned release (oracle, S, M)."""
