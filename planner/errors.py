"""One exception hierarchy for the whole planner.

Library code raises these; the CLI turns a :class:`PlannerError` into a clean message and a
non-zero exit code.  Anything else escaping the library is a bug and keeps its traceback.
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import functools
import numbers
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, ParamSpec, TypeVar

_T = TypeVar("_T")
_P = ParamSpec("_P")


class PlannerError(Exception):
    """Base of every error the planner reports to a user."""

    exit_code = 1

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        if self.hint:
            return f"{self.message}\n  hint: {self.hint}"
        return self.message


class ConfigError(PlannerError):
    """Bad user input: a file, a key path inside it, or a command-line value."""

    exit_code = 2

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        key_path: str | None = None,
        hint: str | None = None,
    ) -> None:
        where = ""
        if file and key_path:
            where = f"{file}: {key_path}: "
        elif file:
            where = f"{file}: "
        elif key_path:
            where = f"{key_path}: "
        super().__init__(f"{where}{message}", hint=hint)
        self.detail = message  # without the location, so a caller can name the place its own way
        self.file = file
        self.key_path = key_path

    def located_at(self, key_path: str) -> ConfigError:
        """The same error at another key path: the CLI shows a library field (``deadline_hours``)
        as the option a user typed (``--deadline``)."""
        return ConfigError(self.detail, file=self.file, key_path=key_path, hint=self.hint)

    def in_file(self, file: str) -> ConfigError:
        """The same error (of the same class) named by the file its key path is in, where it
        names none: a workload file's pin or precision that a GPU or count given beside it
        conflicts with is found after the file is read, by code that sees only its contents."""
        if self.file is not None:
            return self
        moved = copy.copy(self)
        moved.file = file
        where = f"{file}: {self.key_path}: " if self.key_path else f"{file}: "
        moved.message = f"{where}{self.detail}"
        moved.args = (moved.message,)
        return moved


class UnknownNameError(ConfigError):
    """A name (GPU, provider, region, workload, ...) that is not known, with suggestions."""

    def __init__(
        self,
        kind: str,
        name: str,
        choices: Iterable[str],
        *,
        file: str | None = None,
        key_path: str | None = None,
    ) -> None:
        options = sorted(set(choices))  # ``choices`` may be a one-shot iterator
        name = name if isinstance(name, str) else repr(name)  # a library caller's 5 or None
        hint = suggestion_hint(kind, name, options)
        super().__init__(f"unknown {kind} {name!r}", file=file, key_path=key_path, hint=hint)
        self.kind = kind
        self.name = name
        self.choices = tuple(options)
        meant = aliased_name(kind, name, options)
        self.suggestions = [meant] if meant is not None else suggest(name, options)

    def located_at(self, key_path: str) -> UnknownNameError:
        """The same error at another key path, still an UnknownNameError with its hint."""
        moved = UnknownNameError(
            self.kind, self.name, self.choices, file=self.file, key_path=key_path
        )
        moved.hint = self.hint  # a caller's own fix ("did you mean H100:8?") stays
        return moved


class OfferValidationError(ConfigError):
    """An offer table (snapshot or user CSV) that breaks the common schema."""


class SnapshotError(PlannerError):
    """A price snapshot that is missing, corrupt or cannot be written."""


class DataDirError(SnapshotError, ConfigError):
    """``PLANNER_DATA_DIR`` names a path that cannot be a folder (a file, a path through a file,
    a name too long): a snapshot error the user's setting caused, so bad input (exit 2), as where
    the same setting is read for calibrations.  A full or read-only disk, or a permission, is the
    machine's: a plain :class:`SnapshotError`."""


class NotASnapshotError(SnapshotError, ConfigError):
    """A folder named as a price snapshot (``--snapshot``, ``snapshot_dir=``) that holds no
    manifest: the user's input, so bad input (exit 2), as a misspelt snapshot id is."""


class ProviderError(PlannerError):
    """A cloud provider API call failed; wraps the vendor exception."""


class MissingDependencyError(PlannerError):
    """An optional extra (a cloud SDK) is not installed."""


class InfeasibleError(PlannerError):
    """No plan satisfies the constraints; the message names the nearest feasible alternative."""

    exit_code = 3


def shown_path(path: object) -> str:
    """A path for a message: whole, unless absurdly long (a name the file system refused)."""
    text = str(path)
    return text if len(text) <= 200 else f"{text[:120]}...{text[-40:]}"


def is_number(value: object) -> bool:
    """A real number given as one: ``True`` is not 1 and ``"5"`` is not 5 (NaN still passes);
    nor is an integer beyond a float's range (``10**400``: ``math.isfinite`` and every float
    sum raised OverflowError on it)."""
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        return False
    try:
        float(value)
    except OverflowError:
        return False
    return True


def is_whole_number(value: object) -> bool:
    """An integer given as one (not a bool, not 2.0)."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


# The currency an error's amounts are written in, as (symbol, units per USD): the planner computes
# in USD, and a command run with --currency writes its errors' money in that currency, as its
# output (planner.cli.params.currency_option sets it for the command's run).
_SHOWN_MONEY: ContextVar[tuple[str, float]] = ContextVar("shown_money", default=("$", 1.0))


@contextmanager
def money_shown_as(symbol: str, per_usd: float) -> Iterator[None]:
    """Write the amounts of the errors raised inside in the currency of ``symbol``, ``per_usd``
    of its units to the dollar."""
    token = _SHOWN_MONEY.set((symbol, per_usd))
    try:
        yield
    finally:
        _SHOWN_MONEY.reset(token)


def shown_amount(usd: float) -> float:
    """``usd`` in the shown currency, to the cent: the number a user typed (``--budget 450`` in
    EUR, not the 468.75 USD it is computed as)."""
    return round(usd * _SHOWN_MONEY.get()[1], 2)


def written_money(value: float, symbol: str) -> str:
    """An amount already in its currency, as every output writes money: ``$2.86``, ``-€5.00``,
    ``$143,493`` (cents below 1,000), a sub-cent amount to two figures (``$0.001``, not
    ``$0.00``)."""
    sign = "-" if value < 0 else ""
    value = abs(value)
    if 0 < value < 0.005:
        return f"{sign}{symbol}{value:.2g}"
    digits = 2 if round(value, 2) < 1000 else 0
    return f"{sign}{symbol}{value:,.{digits}f}"


def money_text(usd: float) -> str:
    """``usd`` written in the shown currency (:func:`written_money`): ``$1.04``, ``€1.00``."""
    symbol, per_usd = _SHOWN_MONEY.get()
    return written_money(usd * per_usd, symbol)


def ascii_digits_fix(text: str) -> str | None:
    """``text`` as it is written in ASCII where it has a digit outside 0-9 (a full-width ``８`` an
    input method types, an Arabic-Indic ``٨``); None where every digit is ASCII.

    Python's ``int`` and ``float`` read such digits, so ``--count ８`` was 8 while the same ``８``
    in a file (which YAML keeps as text) was refused: the one behaviour is to refuse them
    everywhere with this text as the fix.  Full-width letters and signs beside them (``２４ｈ``)
    become ASCII too (NFKC)."""
    if not any(ch.isdecimal() and not ch.isascii() for ch in text):
        return None
    normal = unicodedata.normalize("NFKC", text)
    return "".join(
        str(unicodedata.decimal(ch)) if ch.isdecimal() and not ch.isascii() else ch for ch in normal
    )


def foreign_digits_error(
    text: str, *, file: str | None = None, key_path: str | None = None
) -> ConfigError | None:
    """The error for ``text`` written with digits outside ASCII 0-9 (see :func:`ascii_digits_fix`);
    None where its digits are all ASCII."""
    fixed = ascii_digits_fix(text)
    if fixed is None:
        return None
    odd = "".join(dict.fromkeys(ch for ch in text if ch.isdecimal() and not ch.isascii()))
    return ConfigError(
        f"{text!r} has digits that are not ASCII 0-9 ({odd!r}: full-width or another script's)",
        file=file,
        key_path=key_path,
        hint=f"write {fixed} (ASCII digits; switch the input method to half-width)",
    )


# Names people call a provider by that spelling cannot reach: the company, its product, its old
# name.  Was: --provider amazon -> "did you mean lambda?" (difflib's nearest letters).
PROVIDER_ALIASES = {
    "amazon": "aws",
    "amazonwebservices": "aws",
    "ec2": "aws",
    "amazonec2": "aws",
    "microsoft": "azure",
    "msazure": "azure",
    "microsoftazure": "azure",
    "google": "gcp",
    "googlecloud": "gcp",
    "gcloud": "gcp",
    "gce": "gcp",
    "googlecloudplatform": "gcp",
    "lambdalabs": "lambda",
    "lambdacloud": "lambda",
}
# Serving stacks by their full or product names (was "known serving framework names: ..." alone
# for text-generation-inference, TGI's own name).
SERVING_ALIASES = {
    "textgenerationinference": "tgi",
    "huggingfacetgi": "tgi",
    "transformers": "hf-transformers",
    "huggingface": "hf-transformers",
    "huggingfacetransformers": "hf-transformers",
    "hfgenerate": "hf-transformers",
    "llamacpp": "llama.cpp",
    "llamacppserver": "llama.cpp",
    "trtllm": "tensorrt-llm",
    "tensorrtllm": "tensorrt-llm",
    "sglangruntime": "sglang",
}
# Purchase options by the names the clouds give them (GCP's preemptible and Azure's low-priority
# VMs are spot capacity; pay-as-you-go is on demand): was "known purchase option names" alone.
PURCHASE_ALIASES = {
    "preemptible": "spot",
    "spotinstance": "spot",
    "spotvm": "spot",
    "lowpriority": "spot",
    "interruptible": "spot",
    "payasyougo": "on-demand",
    "payg": "on-demand",
    "ondemand": "on-demand",
}
# Output formats by the other names people give them (a file's extension, the word): ``md`` for
# markdown, as a report's file extension reads it (reports/render.py)
FORMAT_ALIASES = {"md": "markdown", "text": "table", "txt": "table", "htm": "html"}
NAME_ALIASES: dict[str, dict[str, str]] = {
    "format": FORMAT_ALIASES,
    "provider": PROVIDER_ALIASES,
    "serving framework": SERVING_ALIASES,
    "purchase option": PURCHASE_ALIASES,
}


def aliased_name(kind: str, name: str, choices: Iterable[str]) -> str | None:
    """The one of ``choices`` that ``name`` is another name for (amazon -> aws), else None."""
    key = re.sub(r"[^a-z0-9]", "", name.lower())
    meant = NAME_ALIASES.get(kind, {}).get(key)
    return meant if meant is not None and meant in set(choices) else None


def suggestion_hint(kind: str, name: str, choices: Iterable[str]) -> str:
    """ "did you mean X or Y?" for the nearest ``choices``, else the known names (12 at most)."""
    options = sorted(set(choices))
    listed = listed_names(name, options)
    if listed:
        return one_each_hint(listed)
    meant = aliased_name(kind, name, options)
    if meant is not None:
        return f"did you mean {meant}? ({name.strip()} is written {meant} here)"
    close = suggest(name, options)
    if close:
        return "did you mean " + " or ".join(close) + "?" + lookalike_note(name)
    shown = ", ".join(options[:12]) + (" ..." if len(options) > 12 else "")
    return f"known {kind} names: {shown}"


# A key or column that names a credential (api_key, aws_secret_access_key, password, hf_token):
# no file of planner's takes one, and the nearest valid name is no fix for it.
_CREDENTIAL_NAME = re.compile(
    r"(^|_)(password|passwd|passphrase|secret|credentials?|private_key|service_account)($|_)"
    r"|(^|_)(api|access|auth|bearer|session|refresh|hf|client|secret)_?(key|token|secret)(_id)?($|_)"
    r"|(^|_)apikey($|_)"
)


def is_credential_name(name: str) -> bool:
    """Whether the key or column ``name`` names a credential (any case, dashes or spaces as
    underscores): ``api_key``, ``apiKey``, ``AWS_SECRET_ACCESS_KEY``, ``hf_token``; not ``tokens``."""
    plain = re.sub(r"[\s-]+", "_", name.strip().lower())
    return _CREDENTIAL_NAME.search(plain) is not None


def no_credentials_hint(name: str) -> str:
    """The fix for a credential written into one of planner's files (its value never shown)."""
    return (
        f"remove {name.strip()}: planner's files hold no credentials, and it needs none to plan "
        "on the bundled prices; a price refresh reads each provider's own (the AWS and Google "
        "Cloud SDKs' usual files and variables, az login, LAMBDA_API_KEY)"
    )


def listed_names(name: str, choices: Iterable[str]) -> list[str]:
    """The names of a comma-separated list ``name`` ("aws,gcp"), each one of ``choices`` (any
    case); [] where ``name`` is no such list."""
    pieces = [piece.strip() for piece in name.split(",")]
    if len(pieces) < 2:
        return []
    by_lower = {c.lower(): c for c in choices}
    found = [by_lower.get(piece.lower()) for piece in pieces]
    return [f for f in found if f is not None] if all(found) else []


def one_each_hint(names: Sequence[str]) -> str:
    """The fix for a list of names given where one name goes each time: was "did you mean aws?"
    (or "H100 or A10?") for 'aws,gcp'.  The same text serves a field that takes one name (pick
    one) and one that takes several (each given once)."""
    return (
        f"did you mean {' and '.join(names)}? One name each time: where one name is taken, pick "
        f"one of them; where several are, give the option once per name, or a tuple in Python "
        f"{tuple(names)!r}"
    )


# What each pydantic validation error type expected, in the words of a YAML file's reader.
EXPECTED_BY_PYDANTIC_ERROR = {
    "finite_number": "a finite number",
    "float_parsing": "a number",
    "float_type": "a number",
    "int_parsing": "a whole number",
    "int_type": "a whole number",
    "int_from_float": "a whole number",
    "bool_parsing": "true or false",
    "bool_type": "true or false",
    "string_type": "text",
    "list_type": "a list",
    "tuple_type": "a list",
    "dict_type": "a mapping of keys",
    "model_type": "a mapping of keys",
    "model_attributes_type": "a mapping of keys",
}


# Letters of other alphabets that look like Latin ones, and typographic dashes, as a word
# processor, a chat or a Cyrillic keyboard layout puts them in a name (Н100 with a Cyrillic Н,
# H100‐SXM with a hyphen U+2010): each to the ASCII character it looks like.
_LOOKALIKES = str.maketrans(
    dict(zip("АВЕКМНОРСТХУаеорсхуіІ", "ABEKMHOPCTXYaeopcxyiI", strict=True))
    | dict(zip("ΑΒΕΗΙΚΜΝΟΡΤΧΥΖ", "ABEHIKMNOPTXYZ", strict=True))
    | dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-")
)


def ascii_lookalike(text: str) -> str:
    """``text`` with full-width forms (NFKC), other alphabets' Latin lookalikes and typographic
    dashes written as the ASCII they look like; ``text`` itself when it has none."""
    if text.isascii():
        return text
    return unicodedata.normalize("NFKC", text).translate(_LOOKALIKES)


def lookalike_note(name: str) -> str:
    """ " ('Н' is not ASCII: ...)" for a name with lookalike characters, else ""."""
    folded = ascii_lookalike(name)
    if folded == name:
        return ""
    odd = "".join(dict.fromkeys(ch for ch in name if not ch.isascii()))
    return (
        f" ({odd!r} is not ASCII: a full-width form, a lookalike letter of another alphabet or "
        "a typographic dash)"
    )


def suggest(name: str, choices: Iterable[str], n: int = 3) -> list[str]:
    """Nearest names to ``name`` among ``choices`` (case-insensitive), best first; a name typed
    with lookalike characters (a Cyrillic Н in H100) is matched as the ASCII it looks like."""
    options = list(choices)
    by_lower = {c.lower(): c for c in options}
    typed = ascii_lookalike(name).lower()
    close = difflib.get_close_matches(typed, list(by_lower), n=n, cutoff=0.5)
    if not close and typed.strip():
        # the first part of a longer name: p5 for p5.48xlarge, whose spelling is too far for the
        # ratio above (was the first dozen names of the list, Azure's)
        stem = typed.strip()
        close = sorted(
            (c for c in by_lower if c.startswith(stem) and c[len(stem) : len(stem) + 1] in ".-_:"),
            key=len,
        )[:n]
    return [by_lower[c] for c in close]


# Training fields a caller may hand a library function that takes a workload: the CLI's --precision
# and --framework change the workload, and in Python planner.with_training does.
TRAINING_KEYWORDS = frozenset(
    {
        "precision",
        "framework",
        "optimizer",
        "method",
        "offload",
        "activation_checkpointing",
        "lora_rank",
        "lora_targets",
        "parallelism",
    }
)


# The command line's options that a quote's library call takes under another name or in another
# call: typed as a keyword they drew the nearest field by spelling (hardware_cost -> "did you mean
# hardware?", owned_only -> spot_only, rps -> gpus, report -> pareto).
OPTION_KEYWORDS = {
    "hardware_cost": "local_cost_basis='sunk' (or 'amortised')",
    "owned_only": "providers=('owned',) with hardware=(...)",
    "no_spot": "allow_spot=False",
    "reserved": "include_reserved=True",
    "rps": "requests_per_s=...",
    "p95_ttft": "ttft_ms_p95=... (milliseconds)",
    "p95_tpot": "tpot_ms_p95=... (milliseconds)",
    "p95_e2e": "e2e_ms_p95=... (milliseconds)",
    "peak_rps": "peak_requests_per_s=...",
    "peak_hours": "peak_hours_per_day=...",
    "report": "planner.report(result, fmt='html') on the result",
    "format": "result.to_dict() for JSON, or planner.report(result, fmt='markdown'|'csv')",
    "currency": "planner.Planner(currency='EUR') for the session, or planner.report(result, "
    "currency='EUR')",
}


def option_keyword_error(function: str, name: str, known: Iterable[str]) -> ConfigError | None:
    """The error for a command-line option's name (``hardware_cost``) handed to ``function``,
    saying what the library takes instead; None for any other name or one ``function`` knows."""
    if name not in OPTION_KEYWORDS or name in known:
        return None
    return ConfigError(
        f"unknown {function}() keyword argument {name!r}: that is the command line's "
        f"--{name.replace('_', '-')}",
        key_path=name,
        hint=f"in Python: {OPTION_KEYWORDS[name]}",
    )


def training_keyword_error(function: str, name: str) -> ConfigError | None:
    """The error for a training field ``name`` handed to ``function`` (a library function that
    takes a workload), saying how to set it; None for any other name."""
    if name not in TRAINING_KEYWORDS:
        return None
    return ConfigError(
        f"{function}() takes no {name!r} keyword: it is a training field of the workload",
        key_path=name,
        hint=f"planner.{function}(planner.with_training(WORKLOAD, {name}=...), ...)",
    )


def checked_fields(cls: type[_T]) -> type[_T]:
    """A dataclass whose constructor answers a misspelt or missing field with a ConfigError
    naming it (``OfferFilter(gpu=...)`` -> did you mean gpus?) instead of Python's TypeError:
    the library's value types are made by callers in notebooks, where the message is the help.
    Goes above ``@dataclass``."""
    fields = [f for f in dataclasses.fields(cls) if f.init]  # type: ignore[arg-type]
    names = [f.name for f in fields]
    required = [
        f.name
        for f in fields
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    ]
    init: Callable[..., None] = cls.__init__
    known, needed = frozenset(names), frozenset(required)

    @functools.wraps(init)
    def checked_init(self: Any, *args: Any, **kwargs: Any) -> None:
        if not args and kwargs.keys() <= known and kwargs.keys() >= needed:
            # every field by name, all known, none missing (how planner itself builds them: a
            # quote builds a thousand): nothing below would object
            init(self, **kwargs)
            return
        what = f"{cls.__name__} field"
        if len(args) > len(names):
            raise ConfigError(
                f"{cls.__name__}() takes at most {len(names)} values, got {len(args)}",
                hint=f"name them: {cls.__name__}({', '.join(f'{n}=...' for n in names[:3])}, ...)",
            )
        for key in kwargs:
            if key not in names:
                raise UnknownNameError(what, key, names, key_path=key)
        given = set(names[: len(args)]) | set(kwargs)
        missing = [n for n in required if n not in given]
        if missing:
            raise ConfigError(
                f"{cls.__name__}() needs {', '.join(missing)}",
                key_path=missing[0],
                hint=f"e.g. {cls.__name__}({', '.join(f'{n}=...' for n in missing)})",
            )
        init(self, *args, **kwargs)

    setattr(cls, "__init__", checked_init)  # noqa: B010 (mypy: a method cannot be assigned)
    return cls


def checked_arguments(func: Callable[_P, _T]) -> Callable[_P, _T]:
    """A public function that answers a misspelt keyword or a missing argument with a ConfigError
    naming it (``resolve_gpu(nme=...)`` -> did you mean name?) instead of Python's TypeError.  The
    call itself is not slowed: only a TypeError is looked into, and one the function's own body
    raised (its arguments bind) goes on as it was."""

    @functools.wraps(func)
    def call(*args: _P.args, **kwargs: _P.kwargs) -> _T:
        try:
            return func(*args, **kwargs)
        except TypeError:
            problem = binding_problem(func, args, kwargs)
            if problem is None:
                raise
            raise problem from None

    return call


def callable_name(func: Callable[..., Any]) -> str:
    """How a library call is named in messages: ``tco``, ``Planner.tco``, and ``Planner`` for
    the session's constructor (was "unknown __init__() keyword argument", "help(planner.__init__)")."""
    name = getattr(func, "__qualname__", func.__name__)
    return name.removesuffix(".__init__")


def binding_problem(
    func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> ConfigError | None:
    """Why ``func(*args, **kwargs)`` cannot bind, as a ConfigError; None when it can."""
    import inspect  # only on a failed call

    sig = inspect.signature(func)
    try:
        sig.bind(*args, **kwargs)
    except TypeError as e:
        params = sig.parameters
        kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        known = [name for name, p in params.items() if p.kind in kinds]
        open_ended = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
        shown = callable_name(func)
        for name in kwargs:
            if name not in params and not open_ended:
                return UnknownNameError(f"{shown}() keyword argument", name, known, key_path=name)
        named = re.search(r"'(\w+)'", str(e))
        return ConfigError(
            f"{shown}(): {e}",
            key_path=named.group(1) if named else None,
            hint=f"see help(planner.{shown})",
        )
    return None
