"""Normalized score fusion over aligned vectors, hand-computed."""

from __future__ import annotations

import numpy as np
import pytest

from lyra_lab.recall import fuse, normalize, rrf_scores


def test_minmax_and_zscore_hand_computed():
    assert normalize(np.array([2.0, 4.0, 3.0]), "minmax").tolist() == [0.0, 1.0, 0.5]
    # mean 3, population sd sqrt(2/3)
    sd = np.sqrt(2 / 3)
    assert normalize(np.array([2.0, 4.0, 3.0]), "zscore") == pytest.approx([-1 / sd, 1 / sd, 0.0])


def test_a_constant_list_carries_no_evidence():
    assert normalize(np.array([0.0, 0.0]), "minmax").tolist() == [0.0, 0.0]
    assert normalize(np.array([7.0, 7.0]), "zscore").tolist() == [0.0, 0.0]


def test_weighted_minmax_fusion_hand_computed():
    dense, lexical = np.array([0.2, 0.8, 0.5]), np.array([0.0, 3.0, 6.0])
    # minmax: dense [0, 1, 0.5], lexical [0, 0.5, 1]; 0.25 * dense + 0.75 * lexical
    assert fuse([dense, lexical], [0.25, 0.75], "minmax") == pytest.approx([0.0, 0.625, 0.875])
    # weight 1 on dense: the lexical list cannot change the order
    assert fuse([dense, lexical], [1.0, 0.0], "minmax") == pytest.approx([0.0, 1.0, 0.5])


def test_weighted_zscore_fusion_hand_computed():
    dense, lexical = np.array([1.0, 3.0]), np.array([10.0, 0.0])
    # z: dense [-1, 1], lexical [1, -1]; 0.6 * dense + 0.4 * lexical
    assert fuse([dense, lexical], [0.6, 0.4], "zscore") == pytest.approx([-0.2, 0.2])


def test_rrf_over_vectors_hand_computed():
    assert rrf_scores(np.array([0.1, 0.9, 0.9]), rrf_k=60) == pytest.approx([1 / 63, 1 / 61, 1 / 62])
    fused = fuse([np.array([3.0, 1.0]), np.array([1.0, 2.0])], [0.5, 0.5], "rrf", rrf_k=1)
    assert fused == pytest.approx([0.5 * (1 / 2) + 0.5 * (1 / 3), 0.5 * (1 / 3) + 0.5 * (1 / 2)])


def test_bad_fusion_arguments_are_rejected():
    with pytest.raises(ValueError, match="fusion must be one of"):
        fuse([np.zeros(2)], [1.0], "max")
    with pytest.raises(ValueError, match="one weight per score list"):
        fuse([np.zeros(2), np.zeros(2)], [1.0], "minmax")
    with pytest.raises(ValueError, match="equal lengths"):
        fuse([np.zeros(2), np.zeros(3)], [0.5, 0.5], "minmax")
