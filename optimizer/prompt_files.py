"""Prompt templates: files in `prompts/`, installed as the package `optimizer.prompts`.

Templates use `{{name}}` placeholders; `fence` wraps untrusted text (from tools, tasks or models) so it
cannot pose as the template's own instructions or delimiters. Rendering fails on a missing or an unknown variable, so a
template and its caller can never drift apart silently.
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

FENCE = "~~~~"


def fence(label: str, text: str) -> str:
    """Wrap untrusted text so it cannot close the fence or fake the prompt's own markers."""
    clean = re.sub(r"~{3,}", "~~", text).replace("<untrusted", "<_untrusted").replace("</untrusted", "</_untrusted")
    return f'<untrusted source="{label}">\n{FENCE}\n{clean}\n{FENCE}\n</untrusted>'
PLACEHOLDER = re.compile(r"\{\{\s*([a-z_][a-z0-9_]*)\s*\}\}")


class PromptError(ValueError):
    """A prompt file that is missing, or rendered with the wrong variables."""


def load_prompt(name: str) -> str:
    """The text of prompts/<name>.md (from the installed package, or the source tree)."""
    try:
        return resources.files("optimizer.prompts").joinpath(f"{name}.md").read_text(encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError):
        source = Path(__file__).resolve().parent.parent / "prompts" / f"{name}.md"
        if source.exists():
            return source.read_text(encoding="utf-8")
        raise PromptError(f"prompt file prompts/{name}.md is missing from this installation") from None


def render(template: str, **variables: str) -> str:
    """Fill `{{name}}` placeholders; every placeholder must be given and every variable used."""
    wanted = set(PLACEHOLDER.findall(template))
    missing, unknown = wanted - set(variables), set(variables) - wanted
    if missing or unknown:
        raise PromptError(f"prompt variables missing: {sorted(missing)}; not in the template: {sorted(unknown)}")
    return PLACEHOLDER.sub(lambda m: variables[m.group(1)], template)
