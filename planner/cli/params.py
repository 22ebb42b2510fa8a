"""Click parameter types the commands share: text as people type it -> the library's values.

Parsing is the CLI's job; the library takes values (hours, fractions, counts).  A value that
cannot be read is a :class:`~planner.errors.ConfigError` naming the option, shown by the CLI as
``error: --deadline: cannot read duration '3x'`` with a hint.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import timezone
from pathlib import Path
from typing import Any, TypeVar, cast

import click
from click.core import ParameterSource

from planner import clock, units
from planner.config.yamlfile import names_a_path
from planner.errors import (
    ConfigError,
    PlannerError,
    aliased_name,
    foreign_digits_error,
    is_number,
    money_shown_as,
    suggest,
)
from planner.units import (
    DEADLINE_FORMS,
    DURATION_FORMS,
    GROUPED_THOUSANDS,
    IN_UNIT,
    MAX_GPUS_PER_JOB,
    UNIT_WORDS,
    USD,
    count_value,
    date_fix,
    deadline_point,
    duration_fix,
    duration_hours,
    separated_number,
    unit_factor,
    zone_fix,
)

# a number with a unit or percent sign after it: 80GB, 80 GiB, 60%, 5/s, 400Gbps
_UNIT_SUFFIX = re.compile(
    r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?)\s*([a-z%/][a-z%/ ]*)\s*$", re.I
)


# a number after a currency's sign, with or without a unit: $5, € 3.20/h
# A currency sign's code, and the codes a money value is written with (5EUR, 5 usd): a money
# option's amount is in --currency, so the fix names the code's --currency.
_SIGN_CODES = {"$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY"}
_CURRENCY_CODES = frozenset(
    ("USD", "EUR", "GBP", "JPY", "CHF", "CAD", "AUD", "CNY", "INR", "SEK", "NOK", "DKK", "KRW")
)
_CURRENCY_SIGN = re.compile(r"^\s*([$€£¥])\s*((?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?)\s*\S*\s*$", re.I)


# Suffixes that multiply a number rather than name its unit (52k tokens/s is 52000), as an option
# reads them: M is a million (m may be minutes or milli), B a billion (G is a unit: 400G Gbit/s).
_MULTIPLIERS = {"k": (1e3, "thousand"), "K": (1e3, "thousand"), "M": (1e6, "million")}
_MULTIPLIERS["B"] = (1e9, "billion")
# Periods typed into a whole number of days (--max-age-days 3 months): the value in days.  Was
# "write the number alone: 3", 3 days for three months.  A month is 30 days and a year 365, as
# the price-age warning counts them.
_PERIOD_DAYS = {
    "d": 1.0, "day": 1.0, "days": 1.0,
    "w": 7.0, "wk": 7.0, "week": 7.0, "weeks": 7.0,
    "mo": 30.0, "month": 30.0, "months": 30.0,
    "y": 365.0, "yr": 365.0, "yrs": 365.0, "year": 365.0, "years": 365.0,
    "h": 1 / 24, "hr": 1 / 24, "hrs": 1 / 24, "hour": 1 / 24, "hours": 1 / 24,
}  # fmt: skip
_OPTION_UNIT_DAYS = {"days": 1.0}  # the options counting whole days, by their name's last word


class OutputPath(click.Path):
    """A file the command writes (``--report``, ``-o``): a blank name is refused as such.  Was:
    read as the current folder, "." ("cannot tell the report format from '.'"; for ``build -o``
    "name it .yaml")."""

    def __init__(self, example: str) -> None:
        super().__init__(dir_okay=False, writable=True, path_type=Path)
        self.example = example

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and not value.strip():
            self.fail(f"is blank: name the file to write, e.g. {self.example}", param, ctx)
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter as e:
            if not Path(value).is_dir():
                raise
            # was click's "File 'out' is a directory." and no fix
            inside = Path(value) / self.example
            self.fail(f"{e.message.rstrip('.')}: name a file in it, e.g. {inside}", param, ctx)


class FiniteFloat(click.FloatRange):
    """A float (optionally in a range) that is a real number: ``nan`` and ``inf`` are refused.

    click's FLOAT and FloatRange accept both (a NaN compares false with every bound), and they
    reached the solver as ``PulpError: Cannot set constraint RHS to NaN/inf values``.  ``unit``
    (a key of :data:`planner.units.IN_UNIT`) is the option's unit: a number typed with another unit of its
    kind is refused with the number in the option's unit (``1TB`` -> write 1000).
    """

    name = "float"

    def __init__(
        self, *args: Any, unit: str | None = None, example: float | None = None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.unit = unit
        self.example = example  # shown in a refusal's fix where the option has no default

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        signed = _CURRENCY_SIGN.match(value) if isinstance(value, str) else None
        if signed is not None:
            # $5, $5/h: was click's "'$5/h' is not a valid float." with no fix
            code = _SIGN_CODES.get(signed.group(1), "USD")
            in_code = (
                "" if code == "USD" else f" with --currency {code}, which reads it as {code}"
            )  # was: "write 5", which the option then read as 5 USD
            self.fail(
                f"{value!r} is not a number: write the number alone: {signed.group(2)}{in_code} "
                "(the option's unit is in its --help; money is in --currency, USD unless given)",
                param,
                ctx,
            )
        unit = _UNIT_SUFFIX.match(value) if isinstance(value, str) else None
        if unit is not None and unit.group(2).strip().upper() in _CURRENCY_CODES:
            # 5EUR: the amount is in --currency (was "drop the unit 'EUR'", read as 5 USD)
            code = unit.group(2).strip().upper()
            self.fail(
                f"{value!r} is not a number: write {unit.group(1)} with --currency {code} (money "
                "options read their amount in --currency, USD unless given)",
                param,
                ctx,
            )
        if unit is not None:
            # 80GB, 60%, 5/s: the option's unit is in its name and help, the value is the number
            number_text, suffix = unit.group(1), unit.group(2).strip()
            head, _, rest = suffix.partition(" ")
            if head in _MULTIPLIERS and unit_factor(self.unit, suffix) is None:
                # 52k, or 52k tok/s: a thousand times the number, not a unit to drop (was: "drop
                # the unit 'k' (write the number alone: 52)", a thousandth of the value meant);
                # where the option's unit reads the letter (800M Gbit/s is 0.8, 5m seconds 300),
                # the unit
                factor, word = _MULTIPLIERS[head]
                rest = rest.strip()
                if rest:
                    factor *= unit_factor(self.unit, rest) or 1.0
                unread = f"{head} for {word} is not read here" + (
                    f", nor the unit {rest!r}" if rest else ""
                )
                self.fail(
                    f"{value!r} is not a number: write {float(number_text) * factor:g} ({unread}; "
                    "the option takes a plain number, its unit in --help)",
                    param,
                    ctx,
                )
            fix = f"write the number alone: {number_text}"
            scale = unit_factor(self.unit, suffix)
            if scale is not None and scale != 1:
                # 1TB where the option takes GB, 1m where it takes seconds, 60% where it takes a
                # fraction: the number changes
                shown = UNIT_WORDS.get(self.unit or "", self.unit)
                fix = f"write {float(number_text) * scale:.6g}: the option takes {shown}"
            elif suffix == "%" and scale is None:
                fix = (
                    f"{number_text} where the option takes a percentage, "
                    f"{float(number_text) / 100:g} where it takes a fraction"
                )
            self.fail(
                f"{value!r} is not a number: drop the unit {suffix!r} ({fix}; the unit is in the "
                "option's --help)",
                param,
                ctx,
            )
        separated = _separator_fix(value) if isinstance(value, str) else None
        if separated is not None:
            # 52,000 or 0,25: was "'52,000' is not a valid float." and no fix
            self.fail(f"{value!r} is not a number: {separated}", param, ctx)
        try:
            number = super().convert(value, param, ctx)
        except click.BadParameter as e:
            given = _float_or_none(value)
            if given is None or not math.isfinite(given):
                raise  # not a number: click's own words
            # outside the range: was "-5.0 is not in the range x>0." and no fix
            self.fail(f"{e.message.rstrip('.')}: {self._range_fix(param)}", param, ctx)
        if isinstance(number, float) and not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number: {self._range_fix(param)}", param, ctx)
        return number

    def _range_fix(self, param: click.Parameter | None) -> str:
        """What to give: a number in the option's range, its default (or example) as the
        example."""
        parts = []
        if self.min is not None:
            parts.append(f"above {self.min:g}" if self.min_open else f"{self.min:g} or more")
        if self.max is not None:
            parts.append(f"below {self.max:g}" if self.max_open else f"up to {self.max:g}")
        default = getattr(param, "default", None)
        shown = default if is_number(default) else self.example
        example = f", e.g. {shown:g}" if shown is not None else ""
        if not parts:
            return f"give a finite number{example}"
        return f"give a number {' and '.join(parts)}{example}"

    def _describe_range(self) -> str:
        if self.min is None and self.max is None:
            return ""  # a plain finite float: nothing to add to the help text
        return super()._describe_range()


_NUMBER_WORDS: tuple[str, ...] = ("zero", "one", "two", "three", "four", "five", "six", "seven")
_NUMBER_WORDS += ("eight", "nine", "ten", "eleven", "twelve")


class NameChoice(click.Choice):
    """click's Choice, in any case, whose refusal ends with the nearest name
    (:func:`planner.errors.suggest`): was "'bfloat16' is not one of 'fp32', 'tf32', ..." alone for
    --precision bfloat16, --kind pretraining, --method q-lora, --format jsn, --solver higs."""

    def __init__(self, choices: Sequence[str], *, kind: str | None = None) -> None:
        super().__init__(choices, case_sensitive=False)
        self.kind = kind  # the names' kind in planner.errors.NAME_ALIASES (preemptible -> spot)

    def fix(self, value: str) -> str | None:
        """The fix for ``value`` that is none of the choices, or None (click's list alone)."""
        options = [str(c) for c in self.choices]
        meant = aliased_name(self.kind, value, options) if self.kind else None
        if meant is not None:
            return f"did you mean {meant!r}? ({value.strip()} is written {meant} here)"
        close = suggest(value, options, 1)
        return f"did you mean {close[0]!r}?" if close else None

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter as e:
            fix = self.fix(str(value))
            if fix is None:
                raise  # click's own message lists the choices
            self.fail(f"{e.message.rstrip('.')}; {fix}", param, ctx)


class SubcommandGroup(click.Group):
    """A command's subcommands (``calibrate record``, ``list``, ``remove``) whose unknown one is
    answered with the one meant: another word for it (``calibrate delete`` -> remove; ``synonyms``
    maps a word to the subcommand, "" to the group alone), or, where ``argument_of`` says which
    subcommand takes an argument and which words are one, that subcommand with it (``workloads
    gpt2-finetune`` -> ``workloads show gpt2-finetune``).  Was click's "No such command 'delete'."
    alone."""

    def __init__(
        self,
        *args: Any,
        synonyms: Mapping[str, str] | None = None,
        argument_of: tuple[str, Callable[[str], bool]] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.synonyms = dict(synonyms or {})
        self.argument_of = argument_of

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        typed = args[0] if args else ""
        if typed and typed not in self.commands and not typed.startswith("-"):
            fix = self._fix(typed, ctx.command_path)
            if fix is not None:
                raise click.UsageError(f"No such command {typed!r}; {fix}", ctx)
        return super().resolve_command(ctx, args)

    def _fix(self, typed: str, path: str) -> str | None:
        meant = self.synonyms.get(typed.strip().lower())
        if meant == "":
            return f"`{path}` alone does that: drop {typed!r}"
        if meant is not None:
            return f"did you mean {meant!r}? ({typed} is written {meant} here)"
        if self.argument_of is not None and self.argument_of[1](typed):
            return f"did you mean `{path} {self.argument_of[0]} {typed}`?"
        return None


class LinkChoice(NameChoice):
    """A link's name (``--interconnect``, ``--fabric``) with the fix a file's gets: was "'IB' is
    not one of 'none', 'pcie', 'nvlink', 'nvswitch'." alone for IB, nvl, sxm and 100GbE."""

    def __init__(self, choices: list[str], field: str, *, other: str | None = None) -> None:
        super().__init__(choices)
        # the command's options for the link fields: this one, and the other kind's (--fabric
        # beside --interconnect) where a value of that kind is sent; without it (offers filters
        # on the link inside a machine only) the fix says the command has no option for it
        self.field = field
        self.option_names = {field: f"--{field}"}
        if other is not None:
            self.option_names["fabric" if field == "interconnect" else "interconnect"] = other

    def fix(self, value: str) -> str | None:
        from planner.config.validation import value_alias_hint

        options = [str(c) for c in self.choices]
        return value_alias_hint(
            value, options, self.field, option_names=self.option_names
        ) or super().fix(value)


class WholeNumber(click.IntRange):
    """A whole number (optionally in a range) as click's IntRange reads it, with a fix where it
    cannot: was "'8x' is not a valid integer range." alone for 8x, 8.0, 1e3, 4k and five.  Digits
    outside ASCII 0-9 (``８``, which ``int`` reads) are refused with their ASCII spelling, as a
    file's are, wherever the value comes from (the command line or an environment variable)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str):
            digits = foreign_digits_error(value, key_path=_option(param, "the value"))
            if digits is not None:
                self.fail(f"{digits.detail}; {digits.hint}", param, ctx)
            try:
                int(value.strip())
            except ValueError:
                fix = _whole_fix(value, param, self.min, self.max)
                self.fail(f"{value!r} is not a valid integer: {fix}", param, ctx)
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter as e:
            number = value if isinstance(value, int) else _int_or_none(value)
            outside = number is not None and (
                (self.min is not None and number < self.min)
                or (self.max is not None and number > self.max)
            )
            if not outside:
                raise
            # --count 0: was "0 is not in the range x>=1." and no fix
            default = getattr(param, "default", None)
            fix = _range_fix(self.min, self.max, default if isinstance(default, int) else None)
            self.fail(f"{e.message.rstrip('.')}: {fix}", param, ctx)


def _separator_fix(text: str) -> str | None:
    """The plain number for ``text`` written with thousands separators (``52,000``: write
    52000) or a decimal comma (``0,25``: write 0.25); None for anything else
    (:func:`planner.units.separated_number`)."""
    separated = separated_number(text)
    return None if separated is None else f"write {separated[0]} ({separated[1]})"


def _float_or_none(value: Any) -> float | None:
    """``value`` as ``float`` reads it, None where it does not."""
    try:
        return float(str(value).strip())
    except ValueError:
        return None


def _int_or_none(value: Any) -> int | None:
    """``value`` as ``int`` reads it (text with spaces around), None where it does not."""
    try:
        return int(str(value).strip())
    except ValueError:
        return None


def _range_fix(low: float | None, high: float | None, default: int | None) -> str:
    """What to write for a whole number outside ``low``..``high`` (the option's default as the
    example, where it has one)."""
    if low is not None and high is not None:
        return f"write a whole number from {low:g} to {high:g}"
    if low is not None:
        example = default if default is not None and default >= low else max(low, 1)
        return f"write a whole number of at least {low:g}, e.g. {example:g}"
    return f"write a whole number up to {high:g}"


def _whole_fix(
    text: str, param: click.Parameter | None, low: float | None = None, high: float | None = None
) -> str:
    """What to write for a whole number typed another way: 8.0 or 1e3 (write 8, 1000), 4k (a
    thousand times; a context length's k is 1024), 8x or 8 GPUs (the number alone), five; a
    number outside the option's range ``low``..``high`` is never offered (--limit .5 was "0 or
    1" where 0 is refused), the range is."""
    fix = _whole_reading(text, param)
    offered = [int(n) for n in re.findall(r"-?\d+", fix.split("(")[0])]
    if any((low is not None and n < low) or (high is not None and n > high) for n in offered):
        if fix.startswith("give "):  # --gpus 4,16: once per value, and each in the range
            return f"{fix.split(':')[0]}, {_range_fix(low, high, None).replace('write', 'each')}"
        inside = [n for n in offered if (low is None or n >= low) and (high is None or n <= high)]
        return f"write {inside[0]}" if inside else _range_fix(low, high, None)
    return fix


def _whole_reading(text: str, param: click.Parameter | None) -> str:
    """:func:`_whole_fix` before the option's range."""
    raw = text.strip()
    option = _option(param, "")
    if "," in raw and getattr(param, "multiple", False):
        values = [v.strip() for v in raw.split(",")]
        if all(_int_or_none(v) is not None for v in values):
            # --gpus 4,8: the option is given once per value
            return f"give {option} once per value: " + " ".join(f"{option} {v}" for v in values)
    if GROUPED_THOUSANDS.fullmatch(raw):
        return f"write {re.sub(r'[ ,]', '', raw)} (no separators in a number)"
    try:
        number = float(raw)
    except ValueError:
        number = None
    if number is not None and math.isfinite(number):
        if number.is_integer():
            return f"write {int(number)}"
        return f"write a whole number: {math.floor(number)} or {math.ceil(number)}"
    if raw.lower() in _NUMBER_WORDS:
        return f"write it in digits: {_NUMBER_WORDS.index(raw.lower())}"
    unit = _UNIT_SUFFIX.match(raw)
    if unit is not None:
        number_text, suffix = unit.group(1), unit.group(2).strip()
        if suffix.lower() == "k" and _option(param, "") == "--seq-len":
            whole = float(number_text) * 1024
            if whole.is_integer():
                return f"write {int(whole)} ({number_text}k tokens: {number_text} x 1024)"
        if suffix in _MULTIPLIERS:
            whole = float(number_text) * _MULTIPLIERS[suffix][0]
            if whole.is_integer():
                return (
                    f"write {int(whole)} ({suffix} for {_MULTIPLIERS[suffix][1]} is not read here)"
                )
        own = _option(param, "").rsplit("-", 1)[-1]
        period = _PERIOD_DAYS.get(suffix.lower())
        if own in _OPTION_UNIT_DAYS and period is not None:
            whole = float(number_text) * period / _OPTION_UNIT_DAYS[own]
            if whole.is_integer():
                return (
                    f"write {int(whole)} ({_option(param, '')} counts {own}: {raw} is {int(whole)})"
                )
            return (
                f"write a whole number of {own}: {raw} is about {whole:.3g} "
                f"({math.floor(whole)} or {math.ceil(whole)})"
            )
        if float(number_text).is_integer():
            return f"write the number alone: {int(float(number_text))}"
    return "write a whole number in digits, e.g. 8"


def solver_option(func: Any) -> Any:
    """``--solver``: a name from the solver registry (HiGHS by default, CBC as the fallback)."""
    from planner.optimize.solvers import PREFERENCE

    return click.option(
        "--solver",
        type=NameChoice(PREFERENCE),
        default=PREFERENCE[0],
        show_default=True,
        help="MILP solver: HiGHS (highspy) or COIN-OR CBC (through PuLP).",
    )(func)


def _option(param: click.Parameter | None, default: str) -> str:
    """The option a value came from, as the user typed it (``--deadline``)."""
    return param.opts[0] if param is not None and param.opts else default


class Duration(click.ParamType):
    """A deadline -> hours from now (a positive float): a duration (``90m``, ``24h``, ``3d``,
    ``2w``, a bare number of hours) or a point in time (``2026-12-01``, ``2026-12-01T18:00Z``,
    ``friday 18:00``; see :func:`planner.units.deadline_point`).  A point in time is echoed on
    stderr as the absolute time and the hours it leaves."""

    name = "text"  # shown as TEXT in --help, as before this type existed

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, float):
            return value
        option = _option(param, "--deadline")
        hours = duration_hours(value)
        if hours is None:
            _refuse_signed_duration(str(value), option)
            hours = _hours_until(str(value), option)
        if hours is None:
            raise ConfigError(
                f"cannot read deadline {value!r}",
                key_path=option,
                hint=duration_fix(str(value))
                or zone_fix(str(value), clock.utc_now())
                or _with_forms(date_fix(str(value), clock.utc_now()))
                or f"write it like {DEADLINE_FORMS}",
            )
        if hours <= 0:
            raise ConfigError(
                f"{_POSITIVE_DEADLINE}, got {value!r}",
                key_path=option,
                hint=f"write it like {DURATION_FORMS}",
            )
        if not math.isfinite(hours):  # a few hundred digits read as float('inf')
            raise ConfigError(
                f"duration {value!r} is too long to be a number",
                key_path=option,
                hint=f"write it like {DURATION_FORMS}",
            )
        return hours


_POSITIVE_DEADLINE = "deadline must be a positive duration such as 24h or 3d"
# A number with a sign, or infinity or NaN, with or without a duration's unit: -3h, -1, inf, nan,
# +infh, 1e3.  Each was "cannot read deadline" and the list of every form a deadline takes.
_SIGNED_DURATION = re.compile(
    r"^\s*([-+]?)\s*(inf(?:inity)?|nan|(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?)\s*"
    r"(m|min|mins|minutes?|h|hr|hrs|hours?|d|days?|w|weeks?)?\s*$",
    re.I,
)


def _refuse_signed_duration(text: str, option: str) -> None:
    """Refuse a deadline that is a number :func:`duration_hours` does not read: negative
    (``-3h``), infinite or NaN (``inf``, ``nan``), or written in exponent form, with a plus sign
    or without a digit before its point (``1e3``, ``+5h``, ``.5d``: its hours as the fix)."""
    match = _SIGNED_DURATION.match(text)
    if match is None:
        return
    sign, number, unit = match.group(1), match.group(2), match.group(3) or "h"
    value = float(f"{sign}{number}")
    if math.isinf(value) and number[0].isdigit() and sign != "-":
        return  # 1e400: digits too many to be a number; the generic message says so
    if math.isnan(value) or value <= 0 or math.isinf(value):
        raise ConfigError(
            f"{_POSITIVE_DEADLINE}, got {text!r}",
            key_path=option,
            hint=f"write it like {DURATION_FORMS}",
        )
    hours = duration_hours(f"{value:f}{unit}")
    if hours is None or not math.isfinite(hours):
        return  # too long to be a number of hours; the generic messages say so
    if hours > units.MAX_DEADLINE_HOURS:
        # was: "write 1e+09h", itself refused as exponent form
        raise ConfigError(
            f"a deadline of {text.strip()} ({hours:,.0f} hours) is more than ten years "
            f"({units.MAX_DEADLINE_HOURS:,.0f} hours)",
            key_path=option,
            hint="give the time the job may take, such as 24h, 3d or 2w",
        )
    days = f" ({hours / 24:.4g}d)" if hours >= 48 else ""  # at most 3,650 days: no exponent
    how = "a number in exponent form" if "e" in number.lower() else "a sign or a bare decimal point"
    raise ConfigError(
        f"cannot read deadline {text!r}: {how}",
        key_path=option,
        hint=f"write {_plain_number(hours)}h{days}; write it like {DURATION_FORMS}",
    )


def _plain_number(value: float) -> str:
    """``value`` as a deadline reads it: digits and at most one point, never exponent form
    (``:g`` wrote 1e+05), to four decimals at most."""
    return f"{value:.4f}".rstrip("0").rstrip(".")


def _with_forms(fix: str | None) -> str | None:
    """A deadline's own fix, then the forms a deadline takes (None stays None)."""
    return None if fix is None else f"{fix}; or write it like {DEADLINE_FORMS}"


def _hours_until(text: str, option: str) -> float | None:
    """Hours from now to the point in time ``text`` names (None when it names none); a point in
    the past is refused."""
    now = clock.utc_now()
    point = deadline_point(text, now)
    if point is None:
        return None
    hours = (point - now).total_seconds() / 3600.0
    shown = point.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    if hours <= 0:
        raise ConfigError(
            f"deadline {text!r} ({shown}) is in the past; it is now "
            f"{now.strftime('%Y-%m-%d %H:%M UTC')}",
            key_path=option,
            hint="give a later date, or a duration such as 24h",
        )
    click.echo(f"deadline: {shown}, {hours:,.1f} h from now", err=True)
    return hours


_LATENCY = re.compile(r"^\s*((?:\d+(?:\.\d*)?|\.\d+)(?:e[-+]?\d+)?)\s*(ms|s)?\s*$", re.IGNORECASE)
# The latency each option sets, for its bound (limits.MAX_LATENCY_MS: was 4,000 s taken on the
# command line where a file refused 3,601)
_LATENCY_KEYS = {
    "--p95-ttft": "ttft_ms_p95",
    "--p95-tpot": "tpot_ms_p95",
    "--p95-e2e": "e2e_ms_p95",
}


class Latency(click.ParamType):
    """A latency target -> milliseconds: ``800ms``, ``1s``, ``1.5s``, or a bare number of ms."""

    name = "latency"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, float):
            return value
        option = _option(param, "--p95-ttft")
        match = _LATENCY.match(str(value))
        ms = None
        if match:
            ms = float(match.group(1)) * (1000.0 if (match.group(2) or "").lower() == "s" else 1.0)
        forms = "write it like 800ms, 1s or 1.5s (a bare number is milliseconds)"
        if ms is not None and math.isfinite(ms) and ms <= 0:
            # was "cannot read latency '0ms'": it was read, and is no target
            raise ConfigError(
                f"cannot read latency {value!r}: it is not above 0",
                key_path=option,
                hint=f"{forms}, above 0",
            )
        if ms is None or not math.isfinite(ms):
            raise ConfigError(
                f"cannot read latency {value!r}",
                key_path=option,
                hint="; ".join(h for h in (_latency_fix(str(value)), f"{forms}, above 0") if h),
            )
        from planner.workload.limits import MAX_LATENCY_MS  # the workload package loads lazily

        most = MAX_LATENCY_MS[_LATENCY_KEYS.get(option, "ttft_ms_p95")]
        if ms > most:
            raise ConfigError(
                f"latency {value!r} is {ms / 1000:,.0f} s, more than the {most / 1000:,.0f} s a "
                "target may be",
                key_path=option,
                hint=f"{forms}, at most {most / 1000:,.0f}s",
            )
        return ms


def _latency_fix(text: str) -> str | None:
    """The milliseconds of a latency typed in another unit (``5min``, ``0.5 h``), as the option
    writes them; None for anything else.  Was the list of forms alone."""
    unit = _UNIT_SUFFIX.match(text)
    if unit is None:
        return None
    factor = (IN_UNIT["ms"] | {"h": 3.6e6, "hr": 3.6e6}).get(unit.group(2).strip().lower())
    number = float(unit.group(1))
    if factor is None or not math.isfinite(number) or number <= 0:
        return None
    ms = number * factor
    return f"write {ms / 1000:g}s" if ms >= 1000 else f"write {ms:g}ms"


class Count(click.ParamType):
    """``50M``, ``1.5B``, ``2T``, ``50k`` or ``3.1e8`` -> a positive float."""

    name = "count"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, float):
            return value
        text = str(value)
        separated = separated_number(text)
        if separated is not None and separated[1].startswith("no "):
            text = separated[0]  # 50,000,000 as --budget reads 52,000 (a decimal comma is not)
        elif _UNDERSCORED.fullmatch(text.strip()):
            text = text.replace("_", "")  # 50_000_000, as Python writes it
        number = count_value(text)
        option = _option(param, "--tokens")
        forms = "write it like 50M, 1.5B, 2T or 3.1e8"
        comma = _DECIMAL_COMMA_COUNT.fullmatch(text.strip())
        if number is None and comma is not None:
            raise ConfigError(
                f"cannot read {value!r} as a number: a decimal point, not a comma",
                key_path=option,
                hint=f"write {comma.group(1)}.{comma.group(2)}{comma.group(3)}",
            )
        if number is None or not math.isfinite(number):
            refused = _count_refusal(str(value), forms)
            raise ConfigError(
                refused[0] if refused else f"cannot read {value!r} as a number",
                key_path=option,
                hint=refused[1] if refused else forms,
            )
        return number


_DECIMAL_COMMA_COUNT = re.compile(r"(\d+),(\d{1,2}|\d{4,})([kmbt]?)", re.I)  # 1,5B; not 1,000
_UNDERSCORED = re.compile(r"\d{1,3}(?:_\d{3})+(?:\.\d+)?[kmbt]?", re.I)
_SCALE_WORDS = {"thousand": "k", "million": "M", "billion": "B", "trillion": "T"}
_SIGNED_COUNT = re.compile(
    r"^\s*([-+]?)\s*(inf(?:inity)?|nan|(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?)\s*([kmbt])?\s*$",
    re.I,
)
_WORDED_COUNT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(thousand|million|billion|trillion)\s*$", re.I)


def _count_refusal(text: str, forms: str) -> tuple[str, str] | None:
    """(message, fix) for a count :func:`count_value` does not read but whose meaning is plain:
    negative (``-5M``), NaN or infinite, or its scale written as a word (``5 million``: write
    5M).  Each was "cannot read ... as a number" and the forms alone."""
    worded = _WORDED_COUNT.match(text)
    if worded is not None:
        short = f"{worded.group(1)}{_SCALE_WORDS[worded.group(2).lower()]}"
        return f"cannot read {text!r} as a number: its scale is a word", f"write {short}; {forms}"
    signed = _SIGNED_COUNT.match(text)
    if signed is None:
        return None
    number = float(f"{signed.group(1)}{signed.group(2)}")
    if math.isnan(number) or (math.isinf(number) and not signed.group(2)[0].isdigit()):
        return f"{text!r} is not a finite number", f"{forms}, at least 1"
    if number < 0 or signed.group(1) == "-":
        return f"must be at least 1, got {text!r}", f"{forms}, at least 1"
    return None


class Amount(click.ParamType):
    """An amount of money >= 0: ``500``, ``500 EUR``, ``EUR 1,200`` -> ``(amount, code)``, the code
    None for a bare number, which the command reads in its ``--currency``."""

    name = "amount"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, tuple):
            return value
        from planner.config.currency import load_fx_rates, split_money

        option = _option(param, "--budget")
        number = str(value).strip().lstrip("+-").lower()
        if number in ("nan", "inf", "infinity"):
            raise ConfigError(
                f"{value!r} is not a finite number",
                key_path=option,
                hint="give an amount, e.g. 500",
            )
        amount, code = split_money(str(value), key_path=option)
        if code is not None:
            load_fx_rates().rate(code, key_path=option)  # an unknown code names its neighbours
        if amount < 0:
            raise ConfigError(
                f"{value!r} is negative", key_path=option, hint="give an amount >= 0, e.g. 500"
            )
        return amount, code.upper() if code else None


def currency_option(func: Any) -> Any:
    """``--currency``: show money in this currency (the bundled, dated ECB rate table)."""

    def check(ctx: click.Context, param: click.Parameter, value: str) -> str:
        value = value.strip()  # " EUR" as EUR (was kept, into CSV column names and warnings)
        if value.upper() != USD:  # (every table has USD: the default reads none)
            from planner.config.currency import load_fx_rates
            from planner.reports.formatting import Money

            table = load_fx_rates()
            table.rate(value, key_path="--currency")  # unknown: names its neighbours
            # and the command's errors write their money in it, as its output does
            shown = Money.of(value, key_path="--currency")
            ctx.with_resource(money_shown_as(shown.symbol, shown.per_usd))
            # a rate older than the prices' staleness limit warns as those prices do (was: a
            # 637-day-old rate scaled every figure without a word)
            from planner.catalog import DEFAULT_MAX_AGE_DAYS

            stale = table.stale_warning(value.upper(), DEFAULT_MAX_AGE_DAYS)
            if stale is not None:
                click.echo(f"warning: {stale}", err=True)
        return value.upper()

    return click.option(
        "--currency",
        default=USD,
        show_default=True,
        callback=check,
        help="Show money in this currency (bundled, dated ECB rate table).",
    )(func)


class Discount(click.ParamType):
    """``aws=0.12`` or ``aws=12%`` -> ``("aws", 0.12)``; the command collects them in a dict."""

    name = "text"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, tuple):
            return value
        option = _option(param, "--discount")
        _refuse_pairs_list(str(value), option, "discount")
        name, sep, text = str(value).partition("=")
        if not sep or not name.strip():
            raise ConfigError(
                f"cannot read discount {value!r}",
                key_path=option,
                hint="write it like aws=0.12 or aws=12%",
            )
        if ":" in name:
            raise ConfigError(
                f"cannot read discount {value!r}: a discount is per provider",
                key_path=option,
                hint="write it like aws=0.12 or aws=12% (no region or instance family)",
            )
        text = text.strip()
        try:
            frac = float(text[:-1]) / 100 if text.endswith("%") else float(text)
        except ValueError as e:
            raise ConfigError(
                f"cannot read discount {value!r}", key_path=option, hint="write it like aws=0.12"
            ) from e
        if frac == 1:
            # was "must be between 0 and 1", which 1.0 is
            raise ConfigError(
                f"discount {value!r} is 100% off: capacity for free",
                key_path=option,
                hint="a discount is from 0 up to, not including, 1 (100%): e.g. "
                f"{name.strip()}=0.12 or {name.strip()}=12%",
            )
        if not 0 <= frac < 1:
            raise ConfigError(
                f"discount {value!r} must be between 0 and 1 (or 0% and 100%), 1 (100%) itself "
                "left out",
                key_path=option,
                hint=f"write the share taken off: {name.strip()}=0.12 or {name.strip()}=12%",
            )
        return name.strip().lower(), frac


def _refuse_pairs_list(value: str, option: str, what: str) -> None:
    """A ConfigError for NAME=VALUE pairs given as one comma-separated list (``aws=0.1,gcp=0.2``):
    was "cannot read discount" and the one-pair form.  A decimal comma (``aws=0,12``) is no list:
    each pair of a list has its own ``=``."""
    parts = [part.strip() for part in value.split(",")]
    if len(parts) < 2 or not all("=" in part and part.partition("=")[0] for part in parts):
        return
    raise ConfigError(
        f"cannot read {what} {value!r}: a list, where {option} takes one {what} each time",
        key_path=option,
        hint="repeat the option: "
        + " ".join(f"{option} {part}" for part in parts)
        + f"; write it like {'aws=0.12' if what == 'discount' else 'aws=16'} each time",
    )


class Quota(click.ParamType):
    """``aws=16``, ``aws:p5=4``, ``aws:us-east-1:p5=2`` -> ``("aws:p5", 4)``: at most that many
    instances at once; the command collects them in a dict."""

    name = "text"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        # the quote request's module owns the key forms (it checks the library's quotas too); it
        # is loaded only by the commands that quote
        from planner.quoting.request import QUOTA_FORMS, quota_key_parts

        if isinstance(value, tuple):
            return value
        option = _option(param, "--quota")
        _refuse_pairs_list(str(value), option, "quota")
        key, sep, count = str(value).partition("=")
        if not sep or not (count.strip().isascii() and count.strip().isdigit()):
            raise ConfigError(
                f"cannot read quota {value!r}",
                key_path=option,
                hint=f"write it like {QUOTA_FORMS}, with a whole number of instances >= 0",
            )
        quota_key_parts(key.strip(), where=option)
        if len(count.strip()) > len(str(MAX_GPUS_PER_JOB)):
            # refused here: thousands of digits are past int()'s limit on text (a traceback)
            raise ConfigError(
                f"quota {value!r} must be a whole number of instances from 0 to "
                f"{MAX_GPUS_PER_JOB:,}",
                key_path=option,
                hint=f"write it like {QUOTA_FORMS}",
            )
        return key.strip().lower(), int(count)


# --- library field names as the options a user typed ---------------------------------------------

F = TypeVar("F", bound=Callable[..., Any])
_FIELD_LABELS = "planner.field_labels"  # key in click's context meta, shared by nested contexts
_COMMAND_CONTEXT = "planner.command_context"  # the running command's own context


def field_options(labels: Mapping[str, str | tuple[str, ...]]) -> Callable[[F], F]:
    """Show the library's field names as this command's options in its error messages.

    The library names the field it refuses (``key_path="limit"``), since a notebook user has no
    options; ``labels`` says how the command shows each field (``{"limit": "--limit"}``), and
    :func:`error_text` applies it where the CLI prints a PlannerError; a field an option or an
    argument sets gives both (``("--instance", "INSTANCE")``), the one typed naming it.  Goes
    under ``@click.command``.
    """

    def decorate(func: F) -> F:
        @functools.wraps(func)
        def run(*args: Any, **kwargs: Any) -> Any:
            ctx = click.get_current_context()
            ctx.meta[_FIELD_LABELS] = labels
            ctx.meta[_COMMAND_CONTEXT] = ctx
            return func(*args, **kwargs)

        return cast(F, run)

    return decorate


def error_text(error: PlannerError, ctx: click.Context) -> str:
    """``error`` as the CLI prints it: a field the running command names as an option is shown
    as that option (errors inside a file keep their key path)."""
    labels: Mapping[str, str | tuple[str, ...]] = ctx.meta.get(_FIELD_LABELS, {})
    if isinstance(error, ConfigError) and error.file is None and error.key_path:
        given = labels.get(error.key_path)
        # a field set by an option or a positional argument (prices history p5.48xlarg or
        # --instance): the one typed names it (was: instance_type, the library's name)
        for label in (given,) if isinstance(given, str) else given or ():
            if _typed(ctx.meta.get(_COMMAND_CONTEXT), label):
                return str(error.located_at(label))
    return str(error)


def _typed(command: click.Context | None, label: str) -> bool:
    """Whether the option ``label`` was given on the command line (or from the environment):
    a field the option did not set (``training.precision`` read from the workload's file) keeps
    its own name, not an option the user never typed (was: "--precision: T4 has no bf16")."""
    if command is None:
        return True
    for param in command.command.params:
        if label in param.opts or (
            isinstance(param, click.Argument) and label == param.human_readable_name
        ):
            source = command.get_parameter_source(param.name or "")
            return source is not None and source is not ParameterSource.DEFAULT
    return True  # another label: as before


# --- an option given twice --------------------------------------------------------------------


def refuse_repeated_options(command: click.Command, args: Sequence[str]) -> None:
    """A UsageError for an option that takes one value given twice (``--gpu H100 --gpu A100`` on
    ``estimate``, ``--hardware`` twice on ``tco``): click keeps the last and drops the first
    silently, so the answer was for a value other than one the user meant.  Repeatable options
    (``multiple=True``) and flags are left alone; a group's subcommand is checked in turn."""
    seen: dict[click.Option, str] = {}  # option -> how it was first given ("--gpu H100")
    for option, name, value, inline in _given_options(command, args):
        if option.multiple:
            continue
        given = f"{name}={value}" if inline else f"{name} {value}".rstrip()
        if option in seen:
            raise click.UsageError(
                f"{name} is given twice ({seen[option]}, then {given}); "
                "it takes one value: give it once"
            )
        seen[option] = given


def _value_options(command: click.Command) -> dict[str, click.Option]:
    """Each name (``--gpu``, ``-w``) of an option of ``command`` that takes a value, to the
    option: not a flag, not a count."""
    return {
        opt: param
        for param in command.params
        if isinstance(param, click.Option) and not (param.count or param.is_flag)
        for opt in param.opts
    }


def _given_options(
    command: click.Command, args: Sequence[str]
) -> Iterator[tuple[click.Option, str, str, bool]]:
    """Each (option, the name it was given by, its value, whether given as ``--name=value``) of
    an option of ``command`` that takes a value (or of the subcommand named in ``args``), before
    ``--``: the one walk over the command line that the checks below share.  The value is the
    next argument whatever it looks like (it may look like an option)."""
    takes_value = _value_options(command)
    i = 0
    while i < len(args):
        token = args[i]
        if token == "--":
            return
        if isinstance(command, click.Group) and token in command.commands:
            yield from _given_options(command.commands[token], args[i + 1 :])
            return
        name, eq, inline = token.partition("=") if token.startswith("--") else (token, "", "")
        option = takes_value.get(name)
        if option is None:
            i += 1
            continue
        value = inline if eq else (args[i + 1] if i + 1 < len(args) else "")
        i += 1 if eq else 2
        yield option, name, value, bool(eq)


# --- a value typed where an option was meant ------------------------------------------------------

# Options a stray bare word most likely belongs to, by the command's option name: a workload
# (``planner quote gpt2-xl-finetune``, as ``estimate`` takes it) and a GPU (``planner estimate
# gpt2-xl-finetune H100``).
_STRAY_WORD_OPTIONS = (("workload", "-w"), ("gpu", "--gpu"))


def _leaf_command(
    command: click.Command, args: Sequence[str], path: str = ""
) -> tuple[click.Command, Sequence[str], str] | None:
    """The command that runs, its words and its path as typed (``prices refresh``): a group's
    subcommand in turn; None for a group given no subcommand."""
    if not isinstance(command, click.Group):
        return command, args, path
    for i, token in enumerate(args):
        if token in command.commands:
            return _leaf_command(command.commands[token], args[i + 1 :], f"{path} {token}".strip())
    return None


_VERBOSE = ("-v", "-vv", "-vvv", "--verbose")


def refuse_misplaced_verbose(command: click.Command, args: Sequence[str], path: str) -> None:
    """A UsageError for ``-v`` / ``--verbose`` after a command that has no such option: it is
    an option of ``planner`` itself (was click's "No such option: -v" alone).  ``path`` is the
    command as typed (``estimate``, ``prices``)."""
    leaf = _leaf_command(command, args, path)
    if leaf is None:
        return
    command, args, path = leaf
    own = {opt for p in command.params for opt in (*p.opts, *p.secondary_opts)}
    for token in args:
        if token == "--":
            return
        if token in _VERBOSE and token not in own:
            raise click.UsageError(
                f"{token} is an option of planner itself, not of {path}: put it before the "
                f"command (planner {token} {path} ...)"
            )


def refuse_stray_positionals(command: click.Command, args: Sequence[str]) -> None:
    """A UsageError naming the option a bare word beyond the command's arguments was meant for:
    ``planner quote gpt2-xl-finetune --deadline 24h`` (the workload is ``-w`` there, a positional
    argument of ``estimate``) was click's "Got unexpected extra argument (gpt2-xl-finetune)", and
    ``planner estimate gpt2-xl-finetune H100`` "Missing option '--gpu'", neither with the fix.  A
    group's subcommand is checked in turn; words after ``--`` are left alone."""
    leaf = _leaf_command(command, args)
    if leaf is None:
        return
    command, args, _path = leaf
    takes_value = _value_options(command)
    given = {opt for _option, opt, _value, _inline in _given_options(command, args)}
    bare: list[str] = []
    i = 0
    while i < len(args):
        token = args[i]
        if token == "--":
            break
        if token.startswith("-") and token != "-":
            i += 2 if token in takes_value else 1
            continue
        bare.append(token)
        i += 1
    positional = sum(
        1 for param in command.params if isinstance(param, click.Argument) and param.nargs == 1
    )
    if any(isinstance(p, click.Argument) and p.nargs != 1 for p in command.params):
        return  # a variadic argument takes any number of words
    options = {param.name: param for param in command.params if isinstance(param, click.Option)}
    for word in bare[positional:]:
        for name, flag in _STRAY_WORD_OPTIONS:
            option = options.get(name)
            if option is None or any(opt in given for opt in option.opts):
                continue
            raise click.UsageError(
                f"unexpected word {word!r}: {command.name} takes its {name} as an option; "
                f"did you mean `{flag} {word}`?"
            )


# --- digits outside ASCII 0-9 ---------------------------------------------------------------------


def refuse_foreign_digits(command: click.Command, args: Sequence[str]) -> None:
    """A ConfigError for an option's value written with digits outside ASCII 0-9 (``--count ８``,
    ``--deadline ２４h``, ``--top=３``), naming the option and the value in ASCII.

    click's INT and FLOAT read them through Python's ``int``/``float`` (``--count ８`` was 8 GPUs)
    while the same ``８`` in a YAML file is text and refused: one behaviour for both, refused with
    the fix.  A value naming a file or folder that exists is left alone (a path may hold any
    character), as are the values of path options; a group's subcommand is checked in turn."""
    for _option, shown, value in _option_values(command, args):
        error = foreign_digits_error(value, key_path=shown)
        if error is not None:
            raise error


def _option_values(
    command: click.Command, args: Sequence[str]
) -> Iterator[tuple[click.Option, str, str]]:
    """Each (option, its long name, value) ``args`` gives an option of ``command`` (or of the
    subcommand named in them) that takes a value, before ``--``; path options and values naming a
    file or folder that exists are left out (a path may hold any character)."""
    for option, name, value, _inline in _given_options(command, args):
        if isinstance(option.type, (click.Path, click.File)) or names_a_path(value):
            continue
        yield option, next((o for o in option.opts if o.startswith("--")), name), value
