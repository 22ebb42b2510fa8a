"""pydantic validation errors in the words of the YAML file: one translator for every file kind."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

from planner.errors import EXPECTED_BY_PYDANTIC_ERROR, ConfigError, suggest


def _key_path(loc: Sequence[int | str]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def _allowed_keys(model: type[BaseModel], loc: Sequence[int | str]) -> list[str]:
    """Keys allowed at ``loc`` (walking nested models), for "did you mean"."""
    current: Any = model
    for part in loc:
        if isinstance(part, int) or not (
            isinstance(current, type) and issubclass(current, BaseModel)
        ):
            continue
        info = current.model_fields.get(part)
        if info is None:
            break
        current = _inner_model(info.annotation)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return list(current.model_fields)
    return []


def _inner_model(annotation: Any) -> Any:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _inner_model(arg)
        if found is not None:
            return found
    return None


def _field_loc(model: type[BaseModel], loc: Sequence[int | str]) -> tuple[int | str, ...]:
    """``loc`` without pydantic's union tags (``demand_gpu_hours._Growth.start`` ->
    ``demand_gpu_hours.start``): a part that names no field right after a union-typed field."""
    out: list[int | str] = []
    current: Any = model
    after_union = False
    for part in loc:
        if isinstance(part, int):
            out.append(part)
            continue
        fields = (
            current.model_fields
            if isinstance(current, type) and issubclass(current, BaseModel)
            else {}
        )
        if after_union and part not in fields:
            after_union = False
            continue  # a tag such as 'list[float]', '_Growth', 'str'
        out.append(part)
        info = fields.get(part)
        annotation = info.annotation if info is not None else None
        after_union = len(getattr(annotation, "__args__", ())) > 1
        current = _inner_model(annotation) if annotation is not None else None
    return tuple(out)


# pydantic error types that only say "the input is not of this union branch's type"
_TYPE_MISMATCH = {
    "list_type",
    "dict_type",
    "model_type",
    "model_attributes_type",
    "float_type",
    "int_type",
    "string_type",
    "bool_type",
    "is_instance_of",
}


def _best_error(errors: Sequence[Any]) -> Any:
    """The error to show: a misspelt key before its missing twin, and within a union the branch
    whose type matched the input (its error says what is wrong inside it)."""
    for err in errors:
        if err["type"] == "extra_forbidden":
            return err
    for err in errors:
        if err["type"] not in _TYPE_MISMATCH and err["type"] != "missing":
            return err
    return errors[0]


def _describe(err: Any) -> str:
    """A pydantic error in the words of the YAML file."""
    etype, got = err["type"], err.get("input")
    if etype in EXPECTED_BY_PYDANTIC_ERROR:
        return f"expected {EXPECTED_BY_PYDANTIC_ERROR[etype]}, got {got!r}"
    if etype == "string_pattern_mismatch":
        return f"expected a month like '2027-01', got {got!r}"
    return f"{err['msg']} (got {got!r})"


def config_error(e: ValidationError, model: type[BaseModel], file: str) -> ConfigError:
    """The most useful pydantic error as a ConfigError with file, key path and a hint."""
    errors = e.errors()
    err = _best_error(errors)
    loc = _field_loc(model, tuple(err["loc"]))
    key = _key_path(loc)
    if err["type"] == "extra_forbidden":
        allowed = _allowed_keys(model, loc[:-1])
        missing = [
            str(f[-1])
            for f in (_field_loc(model, tuple(x["loc"])) for x in errors if x["type"] == "missing")
            if f and f[:-1] == loc[:-1]
        ]
        typed = str(loc[-1])
        close = difflib.get_close_matches(typed, missing, 1, 0.3) or suggest(typed, allowed, 1)
        hint = f"did you mean {close[0]!r}?" if close else "known keys: " + ", ".join(allowed)
        return ConfigError("unknown key", file=file, key_path=key, hint=hint)
    if err["type"] == "missing":
        return ConfigError("required key is missing", file=file, key_path=key)
    if err["type"] == "enum":
        expected = str((err.get("ctx") or {}).get("expected", ""))
        options = [o.strip(" '") for o in expected.replace(" or ", ",").split(",") if o.strip()]
        close = suggest(str(err.get("input")), options, 1)
        return ConfigError(
            f"{err.get('input')!r} is not one of {', '.join(options)}",
            file=file,
            key_path=key,
            hint=f"did you mean {close[0]!r}?" if close else None,
        )
    date_hint = 'YAML read a date; quote it, e.g. start: "2027-01"'
    is_date = err["type"] == "string_type" and hasattr(err.get("input"), "isoformat")
    return ConfigError(_describe(err), file=file, key_path=key, hint=date_hint if is_date else None)
