import doctest

import pytest

from lyra_lab.corpus import _markup
from lyra_lab.corpus._markup import plain_text


def test_doctests():
    assert doctest.testmod(_markup).failed == 0


@pytest.mark.parametrize("raw, plain", [
    ("a \ue200filecite\ue202turn0file2\ue201 b", "a b"),
    ("x\ue200navlist\ue202News\ue202turn0news1,turn0news2\ue201", "x"),
    ("\ue200entity\ue202[\"city\",\"Lisbon\"]\ue201 is hilly", "Lisbon is hilly"),
    ("\ue200entity\ue202not json\ue201!", "not json!"),
    ("unclosed \ue200cite\ue202turn0 tail", "unclosed citeturn0 tail"),
    ("keep 【brackets】 without a dagger", "keep 【brackets】 without a dagger"),
])
def test_markup_forms(raw, plain):
    assert plain_text(raw) == plain
