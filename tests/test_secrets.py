"""Credentials are hidden in command lines and text, and model-provider keys never reach MCP servers."""

from __future__ import annotations

import pytest

from optimizer.secrets import redact_argv, redact_text, scrubbed_environ, secret_values


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["server.py", "--api-key", "abc123456"], ["server.py", "--api-key", "***"]),
        (["server.py", "--token", "t0ken-value", "--port", "8080"], ["server.py", "--token", "***", "--port", "8080"]),
        (["server.py", "--password", "p"], ["server.py", "--password", "***"]),
        (["server.py", "--api-key=abc123456"], ["server.py", "--api-key=***"]),
        (["env", "GITHUB_TOKEN=ghp_x", "API_KEY=abc", "DEBUG=1"],
         ["env", "GITHUB_TOKEN=***", "API_KEY=***", "DEBUG=1"]),
        (["server.py", "sk-abcdefgh12345678"], ["server.py", "***"]),
        (["server.py", "--header", "X-Auth=sk-abcdefgh12345678"], ["server.py", "--header", "X-Auth=***"]),
        (["uvx", "mcp-server-git", "--repository", "/tmp/repo"],
         ["uvx", "mcp-server-git", "--repository", "/tmp/repo"]),
    ],
)
def test_redact_argv(argv: list[str], expected: list[str]) -> None:
    assert redact_argv(argv) == expected


def test_redact_argv_hides_only_the_value_after_a_secret_flag() -> None:
    out = redact_argv(["s", "--secret", "one", "two", "--bearer", "three"])
    assert out == ["s", "--secret", "***", "two", "--bearer", "***"]
    assert redact_argv(["s", "--api-key"]) == ["s", "--api-key"]


@pytest.mark.parametrize(
    "token",
    ["sk-ant-api03-abcdefgh", "sk-test-1234567890abcdef", "xoxb-1234567890-abc", "ghp_abcdefghijklmnopqrst",
     "gho_abcdefghijklmnopqrst"],
)
def test_redact_text_hides_token_shapes(token: str) -> None:
    assert redact_text(f"the key is {token}.") == "the key is ***."


def test_redact_text_hides_known_values_of_eight_characters_or_more() -> None:
    assert redact_text("pw=hunter2!! and abc", known=["hunter2!!", "abc"]) == "pw=*** and abc"
    assert redact_text("nothing to hide here") == "nothing to hide here"
    assert redact_text("sk-short") == "sk-short"


def test_secret_values_come_from_credential_like_names() -> None:
    env = {"MY_API_KEY": "sk-test-1234567890abcdef", "DB_PASSWORD": "correct-horse", "GH_TOKEN": "short",
           "HOME": "/home/someone-long", "AUTH_HEADER": "Bearer abcdefgh"}
    assert sorted(secret_values(env)) == ["Bearer abcdefgh", "correct-horse", "sk-test-1234567890abcdef"]


def test_scrubbed_environ_drops_model_provider_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret-value-123")
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "another-secret-value")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-secret-value")
    monkeypatch.setenv("MY_SERVER_API_KEY", "the-server-needs-this")
    env = scrubbed_environ()
    assert "ANTHROPIC_API_KEY" not in env
    assert "ANTHROPIC_AUTH_TOKEN" not in env
    assert "OPENAI_API_KEY" not in env
    assert env["MY_SERVER_API_KEY"] == "the-server-needs-this"
    assert "sk-ant-secret-value-123" not in env.values()
    assert env.get("PATH") is not None
