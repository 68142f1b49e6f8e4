"""Credentials in option values: redacted once, where the command line is parsed, kept only in memory.

A spec such as ``endpoint:https://user:pw@host/v1?key=abc#model`` is what some servers need, but every
record, card, manifest and log line that names the spec must not carry ``pw`` or ``abc``. The parser
(:mod:`continuousbench.commands`) replaces each model spec option value by :func:`redact`'s form and keeps
the original here (:func:`hold`); the one place that sends requests asks for it back (:func:`reveal`). So the
redacted form is what the program passes around, and the secret never reaches a file. ``submit`` scrubs a
record with the same :func:`redact`.
"""

from __future__ import annotations

import re

REDACTED = "REDACTED"
_USERINFO = re.compile(r"(?<=://)[^/@\s#?]+@")
# ?key=, &api_key=, ;token=, sig=, X-Goog-Signature=, ... (names containing a secret-like word)
_SECRET_PARAM = re.compile(
    r"([?&;][^=&#\s]*(?:key|token|secret|password|passwd|signature|sig|auth|credential)[^=&#\s]*=)[^&#\s]*",
    re.IGNORECASE,
)
SPEC_KINDS = ("endpoint:", "completions:")  # the make_generator specs that hold a URL
_HELD: dict[str, str] = {}  # redacted value -> the value as given (this process only, never written)


def redact(text: str) -> str:
    """``text`` with ``user:password@`` of URLs and secret-named query parameters replaced by REDACTED."""
    if "://" not in text and "=" not in text:
        return text
    return _SECRET_PARAM.sub(rf"\1{REDACTED}", _USERINFO.sub(f"{REDACTED}@", text))


def hold(value: str) -> str:
    """The redacted form of a model spec (``endpoint:``/``completions:``, whose URL is only ever used through
    :func:`reveal`); the original stays in memory. Other values pass unchanged: a data URL such as
    ``--corpus https://...?sig=...`` is fetched as given (``submit`` still scrubs it from what it shares)."""
    if not value.startswith(SPEC_KINDS):
        return value
    shown = redact(value)
    if shown != value:
        _HELD[shown] = value
    return shown


def reveal(value: str) -> str:
    """The value as given for a redacted one held by this process (else ``value`` itself)."""
    return _HELD.get(value, value)
