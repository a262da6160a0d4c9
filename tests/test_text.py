"""The shared text helpers every matcher leans on: the stemmer (lint, the leakage guard and the offline agents all
compare its stems) and the namespace prefix a tool list shares."""

from __future__ import annotations

import pytest

from optimizer.text.tokens import inflection_base, shared_prefix, stem, terms


@pytest.mark.parametrize("forms", [("create", "creates", "created", "creating"), ("make", "makes", "making"),
                                   ("order", "orders", "ordered", "ordering"), ("reply", "replies", "replied"),
                                   ("change", "changes", "changed", "changing"), ("ship", "shipped", "shipping")])
def test_a_verb_and_its_inflections_share_one_stem(forms: tuple[str, ...]) -> None:
    assert len({stem(f) for f in forms}) == 1, {f: stem(f) for f in forms}


def test_a_tool_name_meets_the_request_that_inflects_its_verb() -> None:
    assert set(terms("create_directory")) & set(terms("creating the parent folders"))


def test_the_inflection_base_stays_a_word_for_lookups_in_an_english_word_list() -> None:
    assert [inflection_base(w) for w in ("acme", "orders", "created", "replies")] == ["acme", "order", "creat", "reply"]
    assert stem("acme") == "acm"  # a stem need not be a word: compare stems only with stems


def test_short_words_keep_their_e() -> None:
    assert [stem(w) for w in ("use", "see", "one")] == ["use", "see", "one"]


def test_the_shared_prefix_is_every_leading_word_all_names_share() -> None:
    assert shared_prefix(["git_log", "git_commit"]) == "git_"
    assert shared_prefix(["files_server_read_file", "files_server_write_file"]) == "files_server_"
    assert shared_prefix(["read_file", "write_file"]) == ""
    assert shared_prefix(["x_a", "x_"]) == ""  # a name is never all prefix
    assert shared_prefix(["only_one"]) == ""
