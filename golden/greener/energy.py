"""Leakage-energy model of the GReEneR register file, from the power controller's counters.

``energy = sum(cycles_in_state x leak_state) + sum(transitions x transition_energy)``
(spec "Leakage accounting"; paper Sections 5.3 and 5.6, which include the sleep-transistor
overheads in every result).

Where each number comes from:

- Transition energies, paper Table 4 ("Hardware Overheads for Sleep Transistor Circuitry",
  CACTI-P at 22 nm, one warp register per power domain): SLEEP to ON *and vice versa*
  0.0633 nJ, OFF to ON *and vice versa* 0.198 nJ. So ON->SLEEP costs as much as SLEEP->ON
  and ON->OFF as much as OFF->ON.
- SLEEP<->OFF: Table 4 gives no figure. Default ``e_sleep_off = e_off_on - e_sleep_on``
  (0.1347 nJ): moving the rail between 0 V and the retention voltage, taken as the part of
  the OFF<->ON swing that the SLEEP<->ON swing does not cover. An estimate, a parameter.
- Per-state leakage: the paper takes it from CACTI-P (SLEEP = the SRAM cell at its minimum
  data-retention voltage, OFF = SRAMvccmin set to 0 V) and prints **no number**. So
  ``leak_sleep`` and ``leak_off`` have no default: the caller states them, relative to
  ``leak_on``, and reports results over the spec's ranges :data:`LEAK_SLEEP_RANGE` (0.1-0.5)
  and :data:`LEAK_OFF_RANGE` (0-0.05), e.g. with :func:`leakage_energy_range`.

- ON leakage in joules (:data:`LEAK_ON_RANGE`, per warp register per cycle), so that
  leakage and Table 4's transitions add into one register leakage energy: the paper prints
  no number (GPUWattch/CACTI-P computes it). The upper end is the most the register file
  could leak: the register file's share of GPU power, about 15 % (Leng et al., GPUWattch,
  ISCA 2013, as the paper's introduction cites it), of the K20X's 235 W board power
  (NVIDIA's Tesla K20X specification), all of it leakage, over 14 SMs x 2,048 warp
  registers at 732 MHz (Table 2): 0.15 x 235 W / 28,672 / 732 MHz = 1.68 pJ. The lower end
  is an assumption, a tenth of that (0.168 pJ: leakage a tenth of the register file's
  power). With Table 4's 0.0633 nJ a SLEEP<->ON round trip costs as much as 75 (upper end)
  to 750 (lower end) ON register-cycles of leakage.

Units: ``leak_*`` are the leakage energy of one warp register during one clock cycle in
one unit of the caller's choice; with the default ``leak_on = 1.0`` the leakage is counted
in *ON register-cycles*. Transition energies are in joules. :meth:`Energy.total` adds the
two once the caller gives the joules of one unit; :func:`register_energy` does it with
``leak_on`` in joules (:data:`LEAK_ON_RANGE`).
"""

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["CLOCK_HZ", "ENDS", "E_OFF_ON", "E_SLEEP_ON", "LEAK_OFF_RANGE", "LEAK_ON_HIGH",
           "LEAK_ON_RANGE", "LEAK_SLEEP_RANGE", "Energy", "always_on_energy",
           "counters_from_ports", "leakage_energy", "leakage_energy_range", "register_energy"]

E_SLEEP_ON = 0.0633e-9
"""Joules of one SLEEP<->ON transition of a warp register (paper Table 4)."""
E_OFF_ON = 0.198e-9
"""Joules of one OFF<->ON transition of a warp register (paper Table 4)."""
LEAK_SLEEP_RANGE = (0.1, 0.5)
"""SLEEP leakage relative to ON to report over (spec; the paper gives no number)."""
LEAK_OFF_RANGE = (0.0, 0.05)
"""OFF leakage relative to ON to report over (spec; the paper gives no number)."""
CLOCK_HZ = 732e6
"""Shader clock of the paper's K20X configuration (Table 2)."""
LEAK_ON_HIGH = 0.15 * 235.0 / (14 * 2048) / CLOCK_HZ
"""Joules of one ON warp register in one cycle, upper end (module docstring): 1.68 pJ."""
LEAK_ON_RANGE = (LEAK_ON_HIGH / 10, LEAK_ON_HIGH)
"""ON leakage per warp register-cycle in joules: (assumed lower end, derived upper end)."""
ENDS = {"best": (LEAK_ON_RANGE[1], LEAK_SLEEP_RANGE[0], LEAK_OFF_RANGE[0]),
        "worst": (LEAK_ON_RANGE[0], LEAK_SLEEP_RANGE[1], LEAK_OFF_RANGE[1])}
"""The two ends results are reported at, as ``(leak_on joules, SLEEP / ON, OFF / ON)``:
``best`` (high ON leakage, so transitions weigh least; lowest SLEEP and OFF leakage) and
``worst`` (the opposite)."""

STATES = ("on", "sleep", "off")
TRANSITIONS = ("sleep_on", "on_sleep", "off_on", "on_off", "sleep_off", "off_sleep")


@dataclass(frozen=True)
class Energy:
    """Leakage in the unit of ``leak_on`` and transition energy in joules."""

    leakage: float
    transition: float

    def total(self, joules_per_unit: float) -> float:
        """Joules, given the joules of one leakage unit (one ON register-cycle by default)."""
        return self.leakage * joules_per_unit + self.transition


def _check(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{name} must be a non-negative number, not {value!r}")
    if value < 0:
        raise ValueError(f"{name} must be a non-negative number, not {value!r}")
    return float(value)


def _count(counters: Mapping, name: str) -> int:
    try:
        value = counters[name]
    except KeyError:
        raise KeyError(f"counters lack {name!r}; they need cycles_on, cycles_sleep, "
                       f"cycles_off and {', '.join(TRANSITIONS)}") from None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"counter {name} must be a non-negative integer, not {value!r}")
    return value


def counters_from_ports(outputs: Mapping) -> dict[str, int]:
    """The counters from the power controller's output ports (``acct__cycles_on``, ...)."""
    names = [f"cycles_{s}" for s in STATES] + list(TRANSITIONS)
    return {name: outputs[f"acct__{name}"] for name in names}


def leakage_energy(counters: Mapping, *, leak_on: float = 1.0, leak_sleep: float,
                   leak_off: float, e_sleep_on: float = E_SLEEP_ON, e_off_on: float = E_OFF_ON,
                   e_sleep_off: float | None = None) -> Energy:
    """Leakage energy of the register file over the counted run.

    Parameters
    ----------
    counters : mapping
        ``cycles_on``, ``cycles_sleep``, ``cycles_off`` (register-cycles per state) and the
        transition counts ``sleep_on, on_sleep, off_on, on_off, sleep_off, off_sleep``, as
        the golden model's ``counters()`` or :func:`counters_from_ports` give them.
    leak_on : float
        Leakage of one ON warp register per cycle (default 1.0: the unit).
    leak_sleep, leak_off : float
        The same for SLEEP and OFF, in the same unit (no default: not in the paper).
    e_sleep_on, e_off_on : float
        Joules per SLEEP<->ON and per OFF<->ON transition, either direction (Table 4).
    e_sleep_off : float, optional
        Joules per SLEEP<->OFF transition (default ``e_off_on - e_sleep_on``, an estimate).
    """
    leak = {"on": _check("leak_on", leak_on), "sleep": _check("leak_sleep", leak_sleep),
            "off": _check("leak_off", leak_off)}
    if e_sleep_off is None:
        e_sleep_off = e_off_on - e_sleep_on
    per_move = {"sleep_on": _check("e_sleep_on", e_sleep_on),
                "off_on": _check("e_off_on", e_off_on),
                "sleep_off": _check("e_sleep_off", e_sleep_off)}
    leakage = sum(_count(counters, f"cycles_{s}") * leak[s] for s in STATES)
    transition = 0.0
    for name in TRANSITIONS:
        a, b = name.split("_")
        pair = name if name in per_move else f"{b}_{a}"
        transition += _count(counters, name) * per_move[pair]
    return Energy(leakage=leakage, transition=transition)


def always_on_energy(counters: Mapping, *, leak_on: float = 1.0,
                     register_cycles: int | None = None) -> float:
    """The reference without power states (the paper's Baseline): every register ON for
    the whole run, no transitions. ``register_cycles`` defaults to the counted run's
    (``cycles_on + cycles_sleep + cycles_off``); give the baseline run's own when its
    cycle count differs (the paper's performance overhead)."""
    if register_cycles is None:
        register_cycles = sum(_count(counters, f"cycles_{s}") for s in STATES)
    return register_cycles * _check("leak_on", leak_on)


def leakage_energy_range(counters: Mapping, **params) -> tuple[Energy, Energy]:
    """``leakage_energy`` at the low ends and at the high ends of the spec's ranges of
    ``leak_sleep`` and ``leak_off`` (relative to ``leak_on``): ``(best, worst)``."""
    leak_on = params.pop("leak_on", 1.0)
    return tuple(leakage_energy(counters, leak_on=leak_on, leak_sleep=sleep * leak_on,
                                leak_off=off * leak_on, **params)
                 for sleep, off in zip(LEAK_SLEEP_RANGE, LEAK_OFF_RANGE, strict=True))


def register_energy(counters: Mapping, end: str, **params) -> Energy:
    """Register leakage energy in joules (leakage and transitions) at one of :data:`ENDS`."""
    if end not in ENDS:
        raise ValueError(f"end must be one of {', '.join(ENDS)}, not {end!r}")
    leak_on, sleep, off = ENDS[end]
    return leakage_energy(counters, leak_on=leak_on, leak_sleep=sleep * leak_on,
                          leak_off=off * leak_on, **params)
