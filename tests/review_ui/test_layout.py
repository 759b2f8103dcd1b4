"""The site's front door and shared furniture: / leads to the dashboard, a favicon is
served, and every page comes from the one shared base in the top-level templates/."""
from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.test import Client


def test_the_root_leads_to_the_dashboard(db):
    response = Client().get("/")
    assert response.status_code == 302 and response["Location"] == "/review/"


def test_a_favicon_is_served_as_svg(db):
    response = Client().get("/review/assets/favicon.svg")
    assert response.status_code == 200 and response["Content-Type"] == "image/svg+xml"
    assert response.content.startswith(b"<svg")
    legacy = Client().get("/favicon.ico")
    assert legacy.status_code == 301 and legacy["Location"] == "/review/assets/favicon.svg"


def test_every_dashboard_template_lives_in_the_top_level_folder_and_extends_the_one_base():
    folder = Path(settings.BASE_DIR) / "templates" / "review"
    assert not (Path(settings.BASE_DIR) / "review_ui" / "templates").exists()
    pages = [p for p in folder.glob("*.html") if p.name != "base.html" and not p.name.startswith("_")]
    assert pages
    for page in pages:
        text = page.read_text()
        assert text.startswith('{% extends "review/base.html" %}'), page.name
