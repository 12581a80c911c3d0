# amaranth: UnusedElaboratable=no
"""Every declared block parameter, from its declaration (:func:`gpurf.hw.params.param`): values
just outside its range or choices and values of other types are rejected by the component and
by the golden model with the same one-line message; ``gpurf list`` shows the allowed values;
the components' docstrings carry the generated ``Parameters`` section."""

import re
import warnings

import pytest
from amaranth.hdl import UnusedElaboratable

from gpurf.hw.params import BlockConfig, ConfiguredComponent, index_width, layout_from, param
from gpurf.hw.registry import all_blocks

DECLARED = [block for block in all_blocks() if block.config_class is not None]


def _cases(values_of):
    return [pytest.param(block, name, value, id=f"{block.qualname}-{name}={value!r}")
            for block in DECLARED
            for name, (_, spec) in block.declared.items() for value in values_of(spec)]


def _message(block, name, value) -> str:
    spec = block.declared[name][1]
    return f"^{name} must be .*{re.escape(spec.allowed)}, not {re.escape(repr(value))}$"


def _rejects(build, error, message):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)
        with pytest.raises(error, match=message):
            build()


@pytest.mark.parametrize("form", ["hw", "golden"])
@pytest.mark.parametrize(("block", "name", "value"), _cases(lambda spec: spec.outside()))
def test_value_outside_the_declaration_is_rejected(block, name, value, form):
    build = block.build if form == "hw" else block.golden
    _rejects(lambda: build({name: value}), ValueError, _message(block, name, value))


@pytest.mark.parametrize("form", ["hw", "golden"])
@pytest.mark.parametrize(("block", "name", "value"), _cases(lambda spec: spec.wrong_types()))
def test_value_of_another_type_is_rejected(block, name, value, form):
    build = block.build if form == "hw" else block.golden
    _rejects(lambda: build({name: value}), TypeError, _message(block, name, value))


@pytest.mark.parametrize("block", DECLARED, ids=lambda b: b.qualname)
def test_docstring_lists_every_parameter_with_its_range(block):
    doc = block.component.__doc__
    for name, (_, spec) in block.declared.items():
        assert f"{name} : {spec.kind.__name__}" in doc
    assert doc.count("Parameters\n") == 1


@pytest.mark.parametrize("block", DECLARED, ids=lambda b: b.qualname)
def test_defaults_are_the_declared_ones(block):
    assert block.defaults == block.config_class.defaults()
    assert block.build().config.params() == block.defaults


def test_a_declaration_without_bounds_is_refused():
    with pytest.raises(TypeError, match="needs low and high"):
        param(3, "An unbounded count.")
    with pytest.raises(ValueError, match=r"^default must be an integer in 4\.\.8, not 3$"):
        param(3, "A default outside its own range.", low=4, high=8)


def test_a_derived_layout_is_built_from_the_named_attributes_of_each_configuration():
    def row_layout(*, lines, line_bits):
        return {"lines": lines, "line_bits": line_bits}

    class ToyConfig(BlockConfig):
        lines: int = param(8, "Lines.", low=1, high=64)
        banks: int = param(2, "Banks.", choices=(1, 2, 4))

        line_bits = index_width("lines")
        row = layout_from(row_layout, "lines", "line_bits")
        documented = layout_from(row_layout, "lines", "line_bits", doc="A row.")

    assert ToyConfig(lines=5).row == {"lines": 5, "line_bits": 3}
    assert ToyConfig().row == {"lines": 8, "line_bits": 3}
    assert ToyConfig.row.__doc__ == "``row_layout`` of ``lines, line_bits``."
    assert ToyConfig.documented.__doc__ == "A row."
    assert ToyConfig.declared().keys() == {"lines", "banks"}


def test_cross_parameter_rule_and_generated_docs_of_a_toy_config():
    class ToyConfig(BlockConfig):
        lines: int = param(8, "Lines.", low=1, high=64)
        banks: int = param(2, "Banks.", choices=(1, 2, 4))

        def validate(self):
            if self.lines % self.banks:
                raise ValueError(f"lines must be a multiple of banks ({self.banks})")

    class Toy(ConfiguredComponent, config=ToyConfig):
        """A toy.

        Attributes
        ----------
        nothing : none
        """

        def __init__(self, **params):
            self.configure(params)
            super().__init__({})

    with pytest.raises(ValueError, match=r"^lines must be a multiple of banks \(4\)$"):
        ToyConfig(lines=6, banks=4)
    assert ToyConfig(lines=6).banks == 2
    doc = Toy.__doc__
    assert doc.index("banks : int") < doc.index("Attributes")
    assert "Allowed: 1, 2, 4; default 2." in doc
