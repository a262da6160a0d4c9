"""The git repositories the git server works on: "quillmark", a small markdown-notes tool, its remote, and the
project's website.

`build(directory)` writes, into `directory` (created if missing):

- `quillmark/`, a working repository with 17 commits on `main` by three authors (a `--no-ff` merge of
  `feature/search` among them), three annotated release tags and one lightweight tag, two unmerged branches
  (`feature/pdf-export`, `fix/unicode-titles`) and two merged ones (`feature/search`, `docs/readme-typos`), a
  stash entry, a remote `origin` at the relative path `../quillmark-origin.git`, and a dirty working tree: a
  staged change to CHANGELOG.md, an unstaged change to src/quillmark/config.py and an untracked notes/todo.txt;
- `quillmark-origin.git/`, the bare remote: every branch of the working repository as of its last fetch except
  `fix/unicode-titles` (never pushed), plus one commit on `main` ("Add contributor guide") that the working
  repository has not fetched;
- `quillmark-site/`, the website: four commits on `main`, an unmerged branch `draft/pricing` with two commits,
  an unstaged change to about.md and an untracked faq.md, and its remote `quillmark-site-origin.git/`, one
  commit ahead on `main`. Tasks that commit, merge, pull or cherry-pick work here, so they never change what the
  questions about `quillmark` read.

Every author, committer and tagger date is fixed and no global or system git configuration is read, so commit
hashes are the same on every build and every machine (they depend on the content only). Run `python fixture.py
DIR` to build it into DIR and print the head commit of `quillmark`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

REPO = "quillmark"
ORIGIN = "quillmark-origin.git"
SITE = "quillmark-site"
SITE_ORIGIN = "quillmark-site-origin.git"
AUTHORS = {
    "maya": ("Maya Lindqvist", "maya@quillmark.dev"),
    "oskar": ("Oskar Brandt", "oskar@quillmark.dev"),
    "ines": ("Ines Duarte", "ines@quillmark.dev"),
}

README = """# quillmark

quillmark turns a folder of markdown notes into a small static website.

## Install

    pip install quillmark

## Use

    quillmark render notes/ --out site/
"""
README_EXPORT = README + """
## Export options

- `--format html` (default) writes one HTML page per note.
- `--toc` adds a table of contents to every page.
- `--theme NAME` picks a theme from `themes/` (default: `paper`).
"""
PARSER_V1 = '''"""Parse a markdown note into blocks."""


def parse(text):
    blocks = []
    for line in text.splitlines():
        if line.startswith("#"):
            level = len(line) - len(line.lstrip("#"))
            blocks.append(("heading", level, line.lstrip("# ").strip()))
        elif line.startswith(("- ", "* ")):
            blocks.append(("item", 0, line[2:].strip()))
        elif line.strip():
            blocks.append(("text", 0, line.strip()))
    return blocks
'''
PARSER_V2 = '''"""Parse a markdown note into blocks."""


def parse(text):
    blocks = []
    fence = None
    for line in text.splitlines():
        if line.startswith("```"):
            if fence is None:
                fence = []
            else:
                blocks.append(("code", 0, "\\n".join(fence)))
                fence = None
            continue
        if fence is not None:
            fence.append(line)
        elif line.startswith("#"):
            level = len(line) - len(line.lstrip("#"))
            blocks.append(("heading", level, line.lstrip("# ").strip()))
        elif line.startswith(("- ", "* ")):
            blocks.append(("item", 0, line[2:].strip()))
        elif line.strip():
            blocks.append(("text", 0, line.strip()))
    return blocks
'''
PARSER_V3 = PARSER_V2.replace('''    blocks = []
    fence = None''', '''    if not text or not text.strip():
        return []
    blocks = []
    fence = None''')
CLI_V1 = '''"""The quillmark command line."""

import argparse
from pathlib import Path

from quillmark.parser import parse


def main(argv=None):
    parser = argparse.ArgumentParser(prog="quillmark")
    sub = parser.add_subparsers(dest="command", required=True)
    render = sub.add_parser("render", help="render a folder of notes")
    render.add_argument("folder", type=Path)
    render.add_argument("--out", type=Path, default=Path("site"))
    args = parser.parse_args(argv)
    if args.command == "render":
        for note in sorted(args.folder.glob("*.md")):
            print(note.name, len(parse(note.read_text(encoding="utf-8"))))
'''
CLI_V2 = CLI_V1.replace('''    args = parser.parse_args(argv)''', '''\
    search = sub.add_parser("search", help="find notes that mention a word")
    search.add_argument("folder", type=Path)
    search.add_argument("word")
    args = parser.parse_args(argv)''') + '''    elif args.command == "search":
        from quillmark.search import SearchIndex

        index = SearchIndex.from_folder(args.folder)
        for name in index.find(args.word):
            print(name)
'''
TESTS_V1 = '''from quillmark.parser import parse


def test_heading_level():
    assert parse("## Plans")[0] == ("heading", 2, "Plans")


def test_list_items():
    assert [b[2] for b in parse("- one\\n- two")] == ["one", "two"]
'''
TESTS_V2 = TESTS_V1 + '''

def test_empty_input():
    assert parse("") == []
    assert parse("   \\n") == []
'''
EXPORT_V1 = '''"""Write parsed notes as HTML pages."""

import html

TAGS = {"text": "p", "item": "li", "code": "pre"}


def to_html(blocks, title):
    body = []
    for kind, level, text in blocks:
        tag = f"h{level}" if kind == "heading" else TAGS[kind]
        body.append(f"<{tag}>{html.escape(text)}</{tag}>")
    return f"<html><head><title>{html.escape(title)}</title></head><body>{''.join(body)}</body></html>"
'''
SEARCH_V1 = '''"""A full-text index over a folder of notes."""

from pathlib import Path


class SearchIndex:
    def __init__(self, notes):
        self.notes = notes

    @classmethod
    def from_folder(cls, folder):
        return cls({p.name: p.read_text(encoding="utf-8").lower() for p in Path(folder).glob("*.md")})

    def find(self, word):
        word = word.lower()
        return sorted(name for name, text in self.notes.items() if word in text)
'''
SEARCH_V2 = '''"""A full-text index over a folder of notes, with a trigram index for fast look-ups."""

from collections import defaultdict
from pathlib import Path


def trigrams(text):
    return {text[i:i + 3] for i in range(len(text) - 2)}


class SearchIndex:
    def __init__(self, notes):
        self.notes = notes
        self.index = defaultdict(set)
        for name, text in notes.items():
            for gram in trigrams(text):
                self.index[gram].add(name)

    @classmethod
    def from_folder(cls, folder):
        return cls({p.name: p.read_text(encoding="utf-8").lower() for p in Path(folder).glob("*.md")})

    def find(self, word):
        word = word.lower()
        grams = trigrams(word) or {word}
        candidates = set.intersection(*(self.index.get(g, set()) for g in grams)) if grams else set()
        return sorted(name for name in candidates if word in self.notes[name])
'''
CONFIG_V1 = '''"""Settings from quillmark.toml in the notes folder."""

import tomllib
from pathlib import Path

DEFAULTS = {"theme": "paper", "toc": False, "base_url": "/"}


def load(folder):
    path = Path(folder) / "quillmark.toml"
    if not path.exists():
        return dict(DEFAULTS)
    with path.open("rb") as f:
        return {**DEFAULTS, **tomllib.load(f).get("site", {})}
'''
CHANGELOG = """# Changelog

## 0.3.0 (2026-02-18)
- Full-text search (`quillmark search`), with a trigram index.

## 0.2.0 (2026-02-02)
- HTML exporter.
- Fix: empty notes no longer crash the parser (#14).

## 0.1.0 (2026-01-15)
- First preview: headings, lists and fenced code blocks.
"""
PYPROJECT = """[project]
name = "quillmark"
version = "{version}"
description = "Turn a folder of markdown notes into a small static website"
requires-python = ">=3.11"

[project.scripts]
quillmark = "quillmark.cli:main"
"""
PDF_V1 = '''"""Write parsed notes as PDF pages (work in progress)."""


def to_pdf(blocks, title):
    raise NotImplementedError("PDF export is not finished")
'''
PDF_V2 = '''"""Write parsed notes as PDF pages (work in progress)."""

PAGE_SIZES = {"a4": (210, 297), "letter": (216, 279)}


def to_pdf(blocks, title, page_size="a4"):
    width, height = PAGE_SIZES[page_size]
    raise NotImplementedError(f"PDF export is not finished ({width}x{height} mm)")
'''

# (author, date, message, {path: text or None to delete}); dates are UTC.
MAIN_BEFORE_MERGE = [
    ("maya", "2026-01-05T09:12:00", "Initial commit: project skeleton", {
        "README.md": README, "pyproject.toml": PYPROJECT.format(version="0.1.0"),
        ".gitignore": "__pycache__/\n*.egg-info/\nsite/\n",
        "LICENSE": "MIT License\n\nCopyright (c) 2026 quillmark contributors\n",
        "src/quillmark/__init__.py": '__version__ = "0.1.0"\n'}),
    ("maya", "2026-01-07T14:30:00", "Add markdown parser for headings and lists",
     {"src/quillmark/parser.py": PARSER_V1}),
    ("oskar", "2026-01-09T10:05:00", "Add CLI entry point with render command", {"src/quillmark/cli.py": CLI_V1}),
    ("oskar", "2026-01-12T16:45:00", "Add tests for the parser", {"tests/test_parser.py": TESTS_V1}),
    ("maya", "2026-01-14T11:20:00", "Support fenced code blocks in the parser", {"src/quillmark/parser.py": PARSER_V2}),
]
AFTER_V010 = [
    ("ines", "2026-01-20T13:00:00", "Add HTML exporter", {"src/quillmark/export.py": EXPORT_V1}),
    ("ines", "2026-01-22T09:40:00", "Document export options in the README", {"README.md": README_EXPORT}),
    ("oskar", "2026-01-27T17:10:00", "Fix crash on empty input files\n\nThe parser now returns no blocks for an "
     "empty or blank note.\n\nFixes #14", {"src/quillmark/parser.py": PARSER_V3, "tests/test_parser.py": TESTS_V2}),
    ("maya", "2026-02-02T10:00:00", "Bump version to 0.2.0", {
        "pyproject.toml": PYPROJECT.format(version="0.2.0"), "src/quillmark/__init__.py": '__version__ = "0.2.0"\n'}),
]
SEARCH_BRANCH = [
    ("ines", "2026-02-05T15:25:00", "Add full-text search index", {"src/quillmark/search.py": SEARCH_V1}),
    ("ines", "2026-02-07T11:50:00", "Add search command to the CLI", {"src/quillmark/cli.py": CLI_V2}),
]
TYPO_BRANCH = [
    ("oskar", "2026-02-11T08:30:00", "Fix typos in the README", {"README.md": README_EXPORT.replace(
        "small static website", "small, static website")}),
]
AFTER_MERGE = [
    ("oskar", "2026-02-12T12:00:00", "Add a changelog", {"CHANGELOG.md": CHANGELOG}),
    ("ines", "2026-02-16T16:20:00", "Speed up search with a trigram index", {"src/quillmark/search.py": SEARCH_V2}),
    ("maya", "2026-02-18T09:00:00", "Release 0.3.0", {
        "pyproject.toml": PYPROJECT.format(version="0.3.0"), "src/quillmark/__init__.py": '__version__ = "0.3.0"\n'}),
]
PDF_BRANCH = [
    ("ines", "2026-02-20T14:00:00", "Add PDF exporter stub", {"src/quillmark/pdf.py": PDF_V1}),
    ("ines", "2026-02-24T10:30:00", "Add page size option to the PDF exporter", {"src/quillmark/pdf.py": PDF_V2}),
]
LAST_ON_MAIN = [
    ("oskar", "2026-02-23T15:45:00", "Add config file loading", {"src/quillmark/config.py": CONFIG_V1}),
]
UNICODE_BRANCH = [
    ("oskar", "2026-02-25T11:15:00", "Normalize unicode in note titles", {"src/quillmark/export.py": EXPORT_V1.replace(
        "import html\n", "import html\nimport unicodedata\n").replace(
        "html.escape(title)", "html.escape(unicodedata.normalize('NFC', title))")}),
]
ONLY_ON_ORIGIN = [
    ("maya", "2026-02-26T10:00:00", "Add contributor guide", {"CONTRIBUTING.md": """# Contributing

1. Open an issue before a large change.
2. Run `pytest` before you push.
3. One topic per pull request; rebase on main.
"""}),
]
# (name, author, date, message); annotated tags, made right after the commit they name
TAGS = {
    "v0.1.0": ("maya", "2026-01-15T08:00:00", "First preview release"),
    "v0.2.0": ("oskar", "2026-02-02T10:30:00", "HTML exporter and the empty-note fix"),
    "v0.3.0": ("maya", "2026-02-18T09:30:00", "Full-text search"),
}
LIGHTWEIGHT_TAG = "demo-2026-02"  # on the merge of feature/search
STASH = ("maya", "2026-02-27T16:00:00", "try a dark theme",
         {"src/quillmark/export.py": EXPORT_V1.replace('"<html><head>', '"<html class=\\"dark\\"><head>')})
CHANGELOG_STAGED = CHANGELOG.replace("# Changelog\n", "# Changelog\n\n## Unreleased\n- Settings from quillmark.toml.\n")
CONFIG_UNSTAGED = CONFIG_V1.replace('"theme": "paper"', '"theme": "ink"')
UNTRACKED = {"notes/todo.txt": "- PDF export: finish page sizes\n- ask Ines about the trigram index memory use\n"}
HEAD_TIME = "2026-02-28T12:00:00"

# The website repository
SITE_MAIN = [
    ("ines", "2026-01-10T10:00:00", "Start the project website", {
        "_config.yml": "title: quillmark\ntheme: minima\n",
        "index.md": "# quillmark\n\nYour notes, as a website.\n"}),
    ("ines", "2026-01-18T15:30:00", "Add about page", {
        "about.md": "# About\n\nquillmark started as a weekend project in January 2026.\n"}),
    ("maya", "2026-02-03T09:15:00", "Add install instructions", {
        "install.md": "# Install\n\n    pip install quillmark\n\nPython 3.11 or newer.\n"}),
]
SITE_PRICING = [
    ("oskar", "2026-02-12T11:00:00", "Add pricing page", {
        "pricing.md": "# Pricing\n\nquillmark is free. Hosted sites cost 4 EUR a month.\n"}),
    ("oskar", "2026-02-14T16:40:00", "Add student discount to pricing", {
        "pricing.md": "# Pricing\n\nquillmark is free. Hosted sites cost 4 EUR a month, 2 EUR for students.\n"}),
]
SITE_LAST = [
    ("maya", "2026-02-19T08:45:00", "Announce 0.3.0 on the home page", {
        "index.md": "# quillmark\n\nYour notes, as a website.\n\nNew in 0.3.0: full-text search.\n"}),
]
SITE_ONLY_ON_ORIGIN = [
    ("ines", "2026-02-26T17:20:00", "Set the base URL for GitHub Pages", {
        "_config.yml": "title: quillmark\ntheme: minima\nbaseurl: /quillmark\n"}),
]
SITE_UNSTAGED = {"about.md": "# About\n\nquillmark started as a weekend project in January 2026.\n\n"
                             "Maintained by Maya, Oskar and Ines.\n"}
SITE_UNTRACKED = {"faq.md": "# FAQ\n\n**Does it need a server?** No: the output is static HTML.\n"}


class Git:
    """git in one repository with a fixed identity and date and no user or system configuration."""

    def __init__(self, cwd: Path, home: Path) -> None:
        self.cwd = cwd
        self.base = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
        self.base.update({"HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
                          "LC_ALL": "C", "TZ": "UTC"})

    def __call__(self, *args: str, who: str = "maya", when: str = HEAD_TIME, env: Mapping[str, str] = {}) -> str:
        name, email = AUTHORS[who]
        stamp = f"{when}+0000"
        full = {**self.base, "GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email, "GIT_AUTHOR_DATE": stamp,
                "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email, "GIT_COMMITTER_DATE": stamp, **env}
        done = subprocess.run(["git", *args], cwd=self.cwd, env=full, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"git {' '.join(args)} failed in {self.cwd}: {done.stderr.strip()}")
        return done.stdout.strip()


def _write(root: Path, files: Mapping[str, str | None]) -> None:
    for name, text in files.items():
        path = root / name
        if text is None:
            path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        path.chmod(0o644)


def _commits(git: Git, commits: list[tuple[str, str, str, dict[str, str | None]]]) -> None:
    for who, when, message, files in commits:
        _write(git.cwd, files)
        git("add", "-A", who=who, when=when)
        git("commit", "-q", "-m", message, who=who, when=when)


def _tag(git: Git, name: str) -> None:
    who, when, message = TAGS[name]
    git("tag", "-a", name, "-m", message, who=who, when=when)


def _site(directory: Path, home: Path) -> None:
    """The website, its bare remote (one commit ahead on main), and its dirty working tree."""
    root = directory / SITE
    root.mkdir()
    git = Git(root, home)
    git("init", "-q", "-b", "main")
    git("config", "commit.gpgsign", "false")
    git("config", "pull.rebase", "false")
    _commits(git, SITE_MAIN)
    git("checkout", "-q", "-b", "draft/pricing")
    _commits(git, SITE_PRICING)
    git("checkout", "-q", "main")
    _commits(git, SITE_LAST)
    Git(directory, home)("clone", "-q", "--bare", SITE, SITE_ORIGIN)
    Git(directory / SITE_ORIGIN, home)("remote", "remove", "origin")
    git("remote", "add", "origin", f"../{SITE_ORIGIN}")
    git("fetch", "-q", "origin")
    git("branch", "-q", "--set-upstream-to=origin/main", "main")
    scratch = directory / ".site-work"
    Git(directory, home)("clone", "-q", SITE_ORIGIN, scratch.name)
    _commits(Git(scratch, home), SITE_ONLY_ON_ORIGIN)
    Git(scratch, home)("push", "-q", "origin", "main")
    shutil.rmtree(scratch)
    _write(root, {**SITE_UNSTAGED, **SITE_UNTRACKED})

def build(directory: Path) -> str:
    """Build the repositories into `directory` (see the module docstring); return the head commit of
    `quillmark`. `directory` must not already hold them."""
    directory.mkdir(parents=True, exist_ok=True)
    home = directory / ".home"
    home.mkdir(exist_ok=True)
    root = directory / REPO
    root.mkdir()
    git = Git(root, home)
    git("init", "-q", "-b", "main")
    git("config", "commit.gpgsign", "false")
    git("config", "tag.gpgsign", "false")
    _commits(git, MAIN_BEFORE_MERGE)
    _tag(git, "v0.1.0")
    _commits(git, AFTER_V010)
    _tag(git, "v0.2.0")
    git("checkout", "-q", "-b", "feature/search")
    _commits(git, SEARCH_BRANCH)
    git("checkout", "-q", "main")
    git("merge", "-q", "--no-ff", "-m", "Merge branch 'feature/search'", "feature/search", when="2026-02-10T10:15:00")
    git("tag", LIGHTWEIGHT_TAG)
    git("checkout", "-q", "-b", "docs/readme-typos")
    _commits(git, TYPO_BRANCH)
    git("checkout", "-q", "main")
    git("merge", "-q", "--ff-only", "docs/readme-typos", when="2026-02-11T09:00:00")
    _commits(git, AFTER_MERGE)
    _tag(git, "v0.3.0")
    git("checkout", "-q", "-b", "feature/pdf-export")
    _commits(git, PDF_BRANCH)
    git("checkout", "-q", "main")
    _commits(git, LAST_ON_MAIN)

    origin = directory / ORIGIN
    Git(directory, home)("clone", "-q", "--bare", REPO, ORIGIN)
    Git(origin, home)("remote", "remove", "origin")  # a bare clone remembers where it came from; forget it
    git("remote", "add", "origin", f"../{ORIGIN}")
    git("fetch", "-q", "origin")
    git("branch", "-q", "--set-upstream-to=origin/main", "main")
    scratch = directory / ".origin-work"
    Git(directory, home)("clone", "-q", ORIGIN, scratch.name)
    _commits(Git(scratch, home), ONLY_ON_ORIGIN)
    Git(scratch, home)("push", "-q", "origin", "main")
    shutil.rmtree(scratch)

    git("checkout", "-q", "-b", "fix/unicode-titles")
    _commits(git, UNICODE_BRANCH)
    git("checkout", "-q", "main")
    who, when, message, files = STASH
    _write(root, files)
    git("stash", "push", "-q", "-m", message, who=who, when=when)
    _write(root, {"CHANGELOG.md": CHANGELOG_STAGED})
    git("add", "CHANGELOG.md")
    _write(root, {"src/quillmark/config.py": CONFIG_UNSTAGED, **UNTRACKED})
    _site(directory, home)
    head = git("rev-parse", "HEAD")
    shutil.rmtree(home)
    return head

if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python fixture.py DIRECTORY")
    print(build(Path(sys.argv[1])))
