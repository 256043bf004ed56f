from dataclasses import dataclass

import pytest

from lyra_lab import ConfigError, Registry


def make_registry() -> Registry:
    reg: Registry = Registry("widget")

    @reg.register("sized")
    @dataclass(frozen=True)
    class Sized:
        size: int = 3
        tags: tuple[str, ...] = ()

        def __post_init__(self):
            if self.size <= 0:
                raise ValueError("size must be positive")

    return reg


def test_build_from_dict_name_and_instance():
    reg = make_registry()
    built = reg.build({"name": "sized", "size": 5, "tags": ["a", "b"]})
    assert built.size == 5 and built.tags == ("a", "b")  # lists from TOML become tuples
    assert reg.build("sized").size == 3
    assert reg.build(built) is built
    assert Registry.spec(built) == {"name": "sized", "size": 5, "tags": ("a", "b")}
    assert hash(built) == hash(reg.build(Registry.spec(built)))


def test_unknown_name_lists_known_ones():
    with pytest.raises(ConfigError, match=r"unknown widget 'nope'; known: sized"):
        make_registry().build({"name": "nope"})


def test_unknown_key_is_named():
    with pytest.raises(ConfigError, match=r"unknown key 'colour'; allowed: size, tags"):
        make_registry().build({"name": "sized", "colour": "red"})


def test_bad_value_is_a_config_error():
    with pytest.raises(ConfigError, match="size must be positive"):
        make_registry().build({"name": "sized", "size": 0})


def test_missing_name():
    with pytest.raises(ConfigError, match="has no 'name'"):
        make_registry().build({"size": 1})


def test_double_registration_of_another_class_fails():
    reg = make_registry()

    @dataclass(frozen=True)
    class Other:
        pass

    with pytest.raises(ValueError, match="already registered"):
        reg.register("sized")(Other)


def test_build_and_reading_a_record_are_one_implementation_with_one_message_each():
    """``Registry.build`` is ``_records.build_fields`` with ConfigError: a missing or unknown key reads the same."""
    from lyra_lab._records import RecordError, build_fields

    reg: Registry = Registry("widget")

    @reg.register("needs")
    @dataclass(frozen=True)
    class Needs:
        size: int

    @reg.register("bare")
    @dataclass(frozen=True)
    class Bare:
        pass

    with pytest.raises(ConfigError) as err:
        reg.build({"name": "needs"})
    assert str(err.value) == "widget 'needs': missing key 'size'" and type(err.value) is ConfigError
    with pytest.raises(RecordError) as rec:
        build_fields(Needs, {}, "widget 'needs'")
    assert str(rec.value) == str(err.value)
    with pytest.raises(ConfigError, match=r"^widget 'bare': unknown key 'x'; allowed: none$"):
        reg.build({"name": "bare", "x": 1})
