"""A Pew chart's card in a real browser: the values read off the chart under its crop, on the Upload
page's library and in a chat hop's evidence. Screenshots go to test-artifacts/charts-*.png."""

from __future__ import annotations

import re

import pytest
from conftest import PEW, pages_of, screenshot_of
from test_e2e_browser import ARTIFACTS, page, server  # noqa: F401 - the browser and the app, as fixtures

pytestmark = pytest.mark.slow

QUESTION = (
    "How many Foreign born Latinos rated their personal finances as excellent or good in 2015 and 2008?"
)


def test_chart_card_shows_the_values_read_off_the_chart(page, tmp_path):  # noqa: F811
    from playwright.sync_api import expect

    expect.set_options(timeout=60_000)
    page.set_viewport_size({"width": 1400, "height": 2400})  # a whole card in view: element shots clip to it
    pdf = tmp_path / "pew-charts.pdf"
    pdf.write_bytes(pages_of(PEW, [10, 11]))
    page.locator('[data-testid="stSidebarNav"]').get_by_role("link", name="Upload", exact=True).click()
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(pdf))
    expect(page.locator('[data-testid="stAlert"]').filter(has_text="pew-charts.pdf")).to_contain_text(
        "2 pages", timeout=180_000
    )

    # The library lists the document's charts, each with its crop and its table of values.
    charts = page.locator('[data-testid="stExpander"]').filter(has_text="charts read as data").first
    charts.locator("summary").click()
    card = (
        charts.locator('[data-testid="stVerticalBlock"]')
        .filter(has_text="Ratings of personal finances")
        .filter(has=page.locator('[data-testid="stImage"]'))
        .last
    )  # the innermost: the card itself
    expect(card.locator('[data-testid="stImage"]')).to_be_visible()
    table = card.locator('[data-testid="stTable"]')
    expect(table).to_contain_text("Foreign born")
    expect(table).to_contain_text("Change '08-'15")
    row = table.locator("tr").filter(has_text="Foreign born")
    expect(row).to_contain_text(re.compile(r"31\s*14\s*\+18"))
    card.scroll_into_view_if_needed()
    screenshot_of(card, ARTIFACTS / "charts-upload-card.png")
    screenshot_of(charts, ARTIFACTS / "charts-upload-library.png")

    # A chat hop shows the figure with its values before the model answers.
    page.locator('[data-testid="stSidebarNav"]').get_by_role("link", name="Chat", exact=True).click()
    page.locator('[data-testid="stChatInputTextArea"]').fill(QUESTION)
    page.locator('[data-testid="stChatInputTextArea"]').press("Enter")
    reply = page.locator('[data-testid="stChatMessage"]').nth(1)
    figure = (
        reply.locator('[data-testid="stVerticalBlock"]')
        .filter(has_text="Values read off the chart")
        .filter(has=page.locator('[data-testid="stImage"]'))
        .last
    )
    expect(figure).to_be_visible(timeout=300_000)
    expect(figure.locator('[data-testid="stImage"]')).to_be_visible()
    expect(figure.locator('[data-testid="stTable"]')).to_contain_text(
        re.compile(r"Foreign born|2014 · White")
    )
    figure.scroll_into_view_if_needed()
    screenshot_of(figure, ARTIFACTS / "charts-chat-card.png")
