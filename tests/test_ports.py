"""The port codecs (:mod:`gpurf.hw.ports`) agree with :mod:`amaranth.lib.data` bit for bit:
``unpack`` reads every field as ``from_bits`` does, ``pack`` builds what ``const`` builds."""

import enum

import pytest
from amaranth import signed
from amaranth.lib import data, wiring
from amaranth.lib import enum as amaranth_enum
from amaranth.lib.wiring import In, Out
from hypothesis import given
from hypothesis import strategies as st

from gpurf.hw.ports import codec, port_codecs
from gpurf.hw.subcore.configs import RbaScorerConfig


class Colour(amaranth_enum.Enum, shape=2):
    RED = 0
    GREEN = 1
    BLUE = 2
    GREY = 3


INNER = data.StructLayout({"valid": 1, "tag": 5, "delta": signed(4)})
LAYOUTS = [
    INNER,
    data.ArrayLayout(INNER, 3),
    data.StructLayout({"head": 3, "items": data.ArrayLayout(INNER, 2), "colour": Colour,
                       "wide": data.ArrayLayout(7, 4), "empty": 0}),
    data.ArrayLayout(data.ArrayLayout(signed(3), 2), 3),
]


def _as_python(view):
    """A ``from_bits`` view as plain Python values (the reference for ``unpack``)."""
    if isinstance(view, data.View | data.Const):
        layout = data.Layout.cast(view.shape())
        if isinstance(layout, data.ArrayLayout):
            return [_as_python(view[i]) for i in range(layout.length)]
        return {str(name): _as_python(view[name]) for name, _ in layout}
    if isinstance(view, enum.Enum):
        return view.value
    return int(view)


def _plain(value):
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if hasattr(value, "_asdict"):
        return {k: _plain(v) for k, v in value._asdict().items()}
    return value


@pytest.mark.parametrize("layout", LAYOUTS, ids=range(len(LAYOUTS)))
@given(draw=st.data())
def test_unpack_and_pack_match_amaranth(layout, draw):
    bits = draw.draw(st.integers(0, (1 << layout.size) - 1))
    c = codec(layout)
    reference = _as_python(layout.from_bits(bits))
    assert _plain(c.unpack(bits)) == reference
    assert c.pack(c.unpack(bits)) == bits
    assert c.pack(reference) == layout.const(reference).as_value().value == bits


def test_missing_fields_and_elements_pack_as_zero():
    assert codec(INNER).pack({"tag": 3}) == 3 << 1
    assert codec(data.ArrayLayout(4, 3)).pack([5]) == 5


def test_a_value_too_wide_for_its_field_is_an_error():
    with pytest.raises(ValueError, match=r"^value 32 does not fit 5 bits$"):
        codec(INNER).pack({"tag": 32})
    with pytest.raises(ValueError, match=r"^value -9 does not fit 4 bits$"):
        codec(INNER).pack({"delta": -9})


def test_port_codecs_are_named_as_verilog_ports():
    ports = port_codecs(RbaScorerConfig(slots=2).signature())
    assert set(ports) == {"slot", "queue_len", "score"}
    assert ports["score"].width == 2 * 5


def test_port_codecs_name_every_element_of_an_array_member():
    bank = wiring.Signature({"addr": Out(3), "data": In(4)})
    signature = wiring.Signature({"read": Out(bank).array(2), "x": In(2).array(3, 2)})
    ports = port_codecs(signature)
    assert sorted(ports) == sorted(["read__0__addr", "read__0__data", "read__1__addr",
                                    "read__1__data", *(f"x__{i}__{j}" for i in range(3)
                                                       for j in range(2))])
    assert ports["read__1__data"].width == 4
