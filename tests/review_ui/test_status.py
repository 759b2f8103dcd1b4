"""The status panel: mode and kill switch, content-free last slices, scan coverage beside
model-processed groups, spend today against the daily ceiling, and the fourteen-day SVG
chart (operations inside the window at its first day, outside one day past it)."""
from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import Client

from reconsolidation import bounds as recon_bounds
from reconsolidation import driver
from reconsolidation.store import ReconsolidationStore
from review_ui import bounds, chart
from review_ui.status import status, usd
from tests.factories import make_owner
from tests.reconsolidation.helpers import original
from tests.review_ui.seed import DAY_ONE, SECRET, build_bank


@pytest.fixture
def sliced(db, settings):
    """A fresh owner after one real slice (rules provider): slices, coverage, spend."""
    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = True
    owner, token = make_owner()
    for _ in range(2):
        original(owner, f"The owner prefers Celsius {SECRET}.", subject="units")
    original(owner, f"The owner waters the plants on Sunday {SECRET}.", subject="plants")
    run = driver.run_slice(owner, lease_owner="test", store=ReconsolidationStore(), now=DAY_ONE)
    assert run is not None and run.operations
    return owner, token, run


def _panel_html(token: str) -> str:
    client = Client()
    client.post("/review/sign-in", {"token": token})
    html = client.get("/review/").content.decode()
    return html.split('id="status"')[1]


def test_the_panel_reports_slices_coverage_and_spend_without_content(sliced):
    owner, token, run = sliced
    panel = status(owner, now=DAY_ONE)
    assert panel.mode == "reviewed" and panel.processing_enabled
    assert panel.slices and panel.slices[0].event == "slice_inventory"
    assert panel.coverage.generation_size == 3 and panel.coverage.scan_complete
    assert panel.coverage.groups_processed == run.groups_processed
    assert panel.spend_today_usd == run.spend_usd > 0
    assert panel.daily_ceiling_usd == recon_bounds.RECON_DAILY_BUDGET_USD
    panel_html = _panel_html(token)
    assert SECRET not in panel_html and "Celsius" not in panel_html


def test_the_panel_says_in_words_what_dreaming_read_and_reviewed(sliced):
    owner, token, run = sliced
    panel = status(owner, now=DAY_ONE)
    assert panel.coverage_sentences[0] == (
        f"Dreaming read 3 of 3 memories today; {run.groups_processed} group reviewed; 0 waiting for a later pass.")
    panel_html = _panel_html(token)  # the wall clock: the scan was on DAY_ONE, not today
    assert f"Dreaming read 3 of 3 memories on {DAY_ONE.date().isoformat()}; 1 group reviewed" in panel_html
    assert "Reviewed: dreaming proposes, and nothing is used until you approve it." in panel_html
    assert "dreaming read 3 memories, formed" in panel_html  # the last pass, in words
    cover = panel.coverage
    assert cover.groupable_anchors == cover.groupable_processed == 1
    assert "Of the 1 memory with related ones, the model has looked at 1 (100%)." in panel.coverage_sentences
    for counter in ("slice_inventory", "full_anchors", "groups_queued", "not_selected", "generation"):
        assert counter not in panel_html, counter


def test_a_free_local_provider_shows_no_spend_and_a_paid_one_does(sliced, settings):
    owner, token, _run = sliced
    panel_html = _panel_html(token)
    assert "Free: the rules provider runs locally and sends nothing anywhere." in panel_html
    assert "daily ceiling" not in panel_html and 'class="spend"' not in panel_html
    settings.AGENT_MEMORY_RECONSOLIDATION_PROVIDER = "openai"
    panel_html = _panel_html(token)
    assert f"Spent $0.00 of the ${usd(recon_bounds.RECON_DAILY_BUDGET_USD)} daily ceiling today." in panel_html
    assert "E-" not in panel_html
    assert "spend that day in US dollars (left axis)" in panel_html and "operations recorded that day (right axis)" in panel_html


def test_the_panel_says_when_processing_is_switched_off(sliced, settings):
    owner, _token, _run = sliced
    settings.AGENT_MEMORY_RECONSOLIDATION_ENABLED = False
    assert status(owner, now=DAY_ONE).processing_enabled is False


def test_the_chart_covers_exactly_fourteen_days_ending_today(db):
    bank = build_bank()  # three operations recorded on DAY_ONE
    last_inside = DAY_ONE + timedelta(days=bounds.REVIEW_CHART_DAYS - 1)
    inside = status(bank.owner, now=last_inside)
    assert len(inside.days) == bounds.REVIEW_CHART_DAYS == 14
    assert inside.days[0].day == DAY_ONE.date() and inside.days[0].operations == 3
    past = status(bank.owner, now=last_inside + timedelta(days=1))
    assert past.days[0].day == DAY_ONE.date() + timedelta(days=1)
    assert sum(d.operations for d in past.days) == 0


def test_the_svg_chart_is_numbers_only_with_presentation_attributes(db):
    bank = build_bank()
    panel = status(bank.owner, now=DAY_ONE)
    svg = str(chart.render(panel.days, panel.daily_ceiling_usd))
    assert svg.startswith("<svg") and svg.count('class="day"') == 14
    assert " style=" not in svg and "<script" not in svg
    assert f"{DAY_ONE.date().isoformat()}: 3 operations, $0.00000003 spent" in svg  # three rules calls
    assert 'class="axis spend-axis"' in svg and 'class="axis ops-axis"' in svg  # one axis per series
    heights = [float(h) for h in re.findall(r'class="spend" x="[^"]+" y="[^"]+" width="[^"]+" height="([^"]+)"', svg)]
    assert len(heights) == 14 and all(h >= 0 for h in heights)


def test_money_is_fixed_point_with_at_least_cents():
    from decimal import Decimal

    assert usd(Decimal("3E-8")) == "0.00000003" and usd(Decimal("2")) == "2.00" and usd(Decimal("2.50")) == "2.50"


def test_without_spend_the_chart_draws_operations_on_their_own_axis(db):
    bank = build_bank()
    panel = status(bank.owner, now=DAY_ONE)
    svg = str(chart.render(panel.days, panel.daily_ceiling_usd, paid=False))
    assert 'class="spend"' not in svg and "spend-axis" not in svg and 'class="axis ops-axis"' in svg
    assert svg.count('class="ops"') == 14
    assert [words for _swatch, words in chart.legend(panel.daily_ceiling_usd, paid=False)] == [
        "operations recorded that day (right axis)"]


def test_recent_passes_are_one_account_per_day_that_agrees_with_the_slices(sliced):
    owner, token, run = sliced
    panel = status(owner, now=DAY_ONE)
    (day,) = panel.passes
    groups, proposals = len(run.report.groups_queued), len(run.operations)
    assert day.sentence == (f"{DAY_ONE.strftime('%b')} {DAY_ONE.day}: dreaming read 3 memories, "
                            f"formed {groups} group{'' if groups == 1 else 's'}, "
                            f"recorded {proposals} proposal{'' if proposals == 1 else 's'} in 1 slice.")
    assert day.sentence in _panel_html(token).replace("&#x27;", "'")
