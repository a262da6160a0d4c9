"""Keeping credentials out of run directories, logs and reports.

Anything the optimizer writes to disk or prints about a server goes through these helpers.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

SECRET_WORDS = re.compile(r"(key|token|secret|password|passwd|auth|credential|bearer)", re.IGNORECASE)
SECRET_VALUES = re.compile(r"\b(sk-[A-Za-z0-9_\-]{8,}|xox[abp]-[A-Za-z0-9\-]{8,}|gh[pousr]_[A-Za-z0-9]{16,})")
MODEL_PROVIDER_VARIABLES = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY")
REDACTED = "***"


def redact_argv(argv: Iterable[str]) -> list[str]:
    """A command line with secret-looking option values and KEY=VALUE pairs replaced by ***."""
    out: list[str] = []
    hide_next = False
    for arg in argv:
        if hide_next:
            out.append(REDACTED)
            hide_next = False
            continue
        flag, eq, value = arg.partition("=")
        if eq and SECRET_WORDS.search(flag):
            out.append(f"{flag}={REDACTED}")
        elif arg.startswith("-") and SECRET_WORDS.search(arg):
            out.append(arg)
            hide_next = True
        else:
            out.append(redact_text(arg))
    return out


def redact_text(text: str, known: Iterable[str] = ()) -> str:
    """Replace well-known token shapes and the given secret values in free text."""
    for secret in known:
        if secret and len(secret) >= 8:
            text = text.replace(secret, REDACTED)
    return SECRET_VALUES.sub(REDACTED, text)


def secret_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """Values of environment variables whose names look like credentials (to scrub from outputs)."""
    env = os.environ if environ is None else environ
    return [v for k, v in env.items() if SECRET_WORDS.search(k) and len(v) >= 8]


def scrubbed_environ() -> dict[str, str]:
    """This process's environment minus model-provider credentials: MCP servers never need them."""
    return {k: v for k, v in os.environ.items() if k not in MODEL_PROVIDER_VARIABLES}
