"""README screenshots (desktop 1440 px and phone 390 px) of a running site with the demo content.

    DEBUG=true .venv/bin/python scripts/screenshots.py http://127.0.0.1:8000 [--out docs/img]

Run it against a site that `make run` started (catalogue + seed_demo); it needs Playwright and
Debian's Chromium (/usr/bin/chromium), as the browser tests do.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from playwright.sync_api import sync_playwright

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
SIZES = {"desktop": {"width": 1440, "height": 1000}, "phone": {"width": 390, "height": 844}}


def pages(base: str, page) -> dict[str, str]:
    """name -> URL: the leaderboard, a competition with runs, an AIDE replay and the runs index."""
    page.goto(base + "/runs/?agent=AIDE")
    aide = page.locator("#runs-table tbody a[href^='/runs/']").first.get_attribute("href")
    return {"leaderboard": base + "/?split=demo",
            "competition": base + "/competitions/tabular-playground-series-may-2022/",
            "run": base + aide, "runs": base + "/runs/"}


def shoot(base: str, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        for size_name, viewport in SIZES.items():
            context = browser.new_context(viewport=viewport, device_scale_factor=1)
            page = context.new_page()
            for name, url in pages(base, page).items():
                page.goto(url)
                page.wait_for_load_state("networkidle")
                if name == "run":
                    page.wait_for_selector("#replay[data-ready='true']")
                target = out / f"{name}-{size_name}.png"
                page.screenshot(path=str(target))
                written.append(target)
            context.close()
        browser.close()
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base_url")
    parser.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "docs" / "img"))
    args = parser.parse_args()
    for path in shoot(args.base_url.rstrip("/"), Path(args.out)):
        print(path)


if __name__ == "__main__":
    main()
