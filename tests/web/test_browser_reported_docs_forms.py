"""In Chromium: the authors' figures per split side by side, the API docs
linking back to the site, and one clear message for an empty upload."""

from __future__ import annotations

import pytest

from tests.web.test_browser_upload import log_in_to_upload

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_item6_published_results_show_every_split_side_by_side(page, catalogue):
    page.goto(f"{page.base_url}/?split=dev")
    table = page.locator("#published-results table")
    headers = table.locator("thead th").all_inner_texts()
    assert headers[2:6] == ["Low (Lite) %", "Medium %", "High %", "All 75 %"]
    first = table.locator("tbody tr").first
    assert first.locator("td[data-split='low']").inner_text().startswith("90.91")
    assert first.locator("td[data-split='all']").inner_text().startswith("77.78")
    assert "publishes no figures for" in page.locator("#published-results").inner_text()


def test_item10_the_api_docs_link_back_to_the_site(page, catalogue):
    page.goto(f"{page.base_url}/api/docs/")
    back = page.locator("a", has_text="Back to Medalboard")
    back.wait_for()
    assert back.get_attribute("href") == "/"
    assert page.locator("a[href='/runs/']", has_text="Runs").is_visible()


def test_item20_an_empty_file_gets_one_message(page, catalogue, tmp_path, django_user_model):
    django_user_model.objects.create_user("alice", "alice@example.org", "alice-password-1")
    empty = tmp_path / "journal.json"
    empty.write_bytes(b"")
    log_in_to_upload(page)
    page.fill("#id_task", "cifar10")
    page.fill("#id_agent", "aide")
    page.fill("#id_model", "gpt-4o")
    page.set_input_files("#id_trajectory_files", str(empty))
    page.click("#upload-submit")
    page.wait_for_selector(".errorlist")
    errors = page.locator(".errorlist li").all_inner_texts()
    assert errors == ["The submitted file is empty."]
