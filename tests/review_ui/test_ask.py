"""Ask your memory over Django's test client: the page runs the same recall as the search
API, says which channel ran and any fallback in words, marks a merged set's representative
and a summary as what they are, keeps the question out of URLs and logs, and refuses a
blank or over-long question with nothing asked."""
from __future__ import annotations

import logging

import pytest
from django.test import Client

from recall.models import RecallTrace
from tests.review_ui.seed import SECRET, build_bank
from veetbot.rls import owner_context


@pytest.fixture
def approved(db, settings):
    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = True
    return build_bank(approve_kinds=("merge", "summary"))


def signed_in(token: str) -> Client:
    client = Client()
    assert client.post("/review/sign-in", {"token": token}).status_code == 303
    return client


def test_an_answer_cites_each_item_and_marks_a_merged_set(approved, caplog):
    client = signed_in(approved.token)
    with caplog.at_level(logging.DEBUG):
        response = client.post("/review/ask", {"query": "Celsius", "ceiling": "restricted"})
    html = response.content.decode()
    assert response.status_code == 200 and "no-store" in response["Cache-Control"]
    a, b = approved.originals["merge"]
    assert html.count('class="answer"') == 1  # one rendering for the merged pair
    assert "standing for merged duplicates" in html and f'href="/review/operations/{approved.merge.id}"' in html
    assert SECRET in html  # the owner reads their own words here...
    assert SECRET not in caplog.text and "Celsius" not in caplog.text  # ...and nothing logs them
    assert "Searched by keywords only. Search by meaning is switched off here" in html
    with owner_context(approved.owner):
        (trace,) = RecallTrace.objects.all()
    assert trace.surface == "dashboard" and trace.channel == "sparse"


def test_a_summary_is_marked_as_derived_with_its_clauses(approved):
    html = signed_in(approved.token).post("/review/ask", {"query": "runs", "ceiling": "restricted"}).content.decode()
    c, d = approved.originals["summary"]
    assert f'href="/review/sources/{c.id}"' in html and f'href="/review/sources/{d.id}"' in html


def test_blank_and_over_long_questions_are_refused_and_nothing_is_asked(approved):
    client = signed_in(approved.token)
    for query, phrase in (("   ", "Type a question first."), ("x" * 2001, "at most 2000 characters")):
        response = client.post("/review/ask", {"query": query, "ceiling": "restricted"})
        assert response.status_code == 400 and phrase in response.content.decode()
    assert client.post("/review/ask", {"query": "tea", "ceiling": "top-secret"}).status_code == 400
    with owner_context(approved.owner):
        assert not RecallTrace.objects.exists()


def test_the_page_needs_a_sign_in_and_the_form_posts(approved):
    assert Client().get("/review/ask").status_code == 302
    html = signed_in(approved.token).get("/review/ask").content.decode()
    assert 'method="post" action="/review/ask"' in html and 'aria-current="page">Ask your memory' in html
