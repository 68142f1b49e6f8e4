"""The leaderboard Space in a real browser: app.py served on 127.0.0.1, driven by headless Chromium.

The results dataset holds a record submitted from a real harness run (``finished_run``) beside three
rescored copies; the page must rank all four, a click on a header's text must sort the rows, a filter
must change them, and nothing may leave 127.0.0.1 (the browser resolves no other host; its network log
is checked).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1280,1800",
]

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# A record string that would run script or fetch an image if any cell were not escaped (the ``${...}`` part
# targets the JS template that gr.HTML fills in).
HOSTILE = '<img src=x onerror="window.__xss=1">${window.__xss=2}'


@pytest.fixture
def space(results_dataset, canonical_recipe, tmp_path):
    """``python leaderboard/app.py`` on a free port of 127.0.0.1 over a copy of ``results_dataset`` whose
    real-run record names a HOSTILE evaluator and whose syn record names its model repo; yields its URL,
    stops it afterwards."""
    port, log, results = _free_port(), tmp_path / "app.log", tmp_path / "results"
    shutil.copytree(results_dataset, results)
    real = next(results.rglob("real-run-*.json"))
    real.write_text(json.dumps({**json.loads(real.read_text()), "base_model": HOSTILE}))
    syn = next(results.rglob("syn-*.json"))  # as `submit --model_repo` writes it: a card link
    syn.write_text(json.dumps({**json.loads(syn.read_text()), "model_repo": "me/syn-evaluator"}))
    for file in results.rglob("*.json"):  # all made with a canonical recipe: the main table
        record = json.loads(file.read_text())
        record["recipe"] = canonical_recipe
        file.write_text(json.dumps(record))
    env = {
        **os.environ,
        "CONTINUOUSBENCH_RESULTS": str(results),
        "GRADIO_SERVER_NAME": "127.0.0.1",
        "GRADIO_SERVER_PORT": str(port),
        "GRADIO_ANALYTICS_ENABLED": "False",
        "HF_HUB_OFFLINE": "1",
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, str(ROOT / "leaderboard" / "app.py")],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url, deadline = f"http://127.0.0.1:{port}/", time.monotonic() + 120
    try:
        while True:
            try:
                urllib.request.urlopen(url, timeout=2).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"the Space did not start:\n{log.read_text()[-3000:]}")
                time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture
def browser(tmp_path):
    if not (shutil.which(CHROMIUM) and shutil.which(CHROMEDRIVER)):
        message = "Debian chromium and chromium-driver are missing (`make test` installs them)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in [*FLAGS, f"--user-data-dir={tmp_path / 'chromium-profile'}"]:
        options.add_argument(flag)
    options.add_argument("--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1")  # no host but ours
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


ROWS_JS = """return Array.from(document.querySelectorAll('#ranking table.cb-ranking tbody tr'), row =>
    Array.from(row.cells, cell => cell.innerText.trim()));"""


IDLE_JS = """return Array.from(document.querySelectorAll('[data-testid=status-tracker]'))
    .every(tracker => tracker.classList.contains('hide'));"""


def _rows(driver) -> list[list[str]]:
    """The ranking table's rows as the page shows them, read in one step (the table re-renders)."""
    return driver.execute_script(ROWS_JS)


def _wait_rows(driver, predicate, timeout: float = 60) -> list[list[str]]:
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, timeout).until(lambda d: d.execute_script(IDLE_JS) and predicate(_rows(d)))
    return _rows(driver)


def _choose(driver, control: str, value: str) -> None:
    """Pick ``value`` in the Gradio dropdown ``#control`` as a user does: open it, click the option."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    box = driver.find_element(By.CSS_SELECTOR, f"#{control} input[role=combobox]")
    box.click()
    listbox = box.get_attribute("aria-controls")
    option = f'#{listbox} [role=option][aria-label="{value}"]'
    WebDriverWait(driver, 20).until(lambda d: d.find_elements(By.CSS_SELECTOR, option))[0].click()


SHOTS = ROOT / "outputs" / "browser"  # ignored by git; CI keeps it as an artifact
WIDTH_JS = """const t = document.querySelector('#ranking table.cb-ranking');
    return [t.scrollWidth, t.parentElement.clientWidth];"""


def _click_header_text(driver, name: str) -> None:
    """Click the text of the column header ``name``, as a reader does (no menu, no hidden control)."""
    from selenium.webdriver.common.by import By

    xpath = f"//*[@id='ranking']//th//*[normalize-space(text())='{name}']"
    driver.find_element(By.XPATH, xpath).click()


def test_submitted_run_appears_ranked_and_filters_change_the_rows(space, browser, tmp_path):
    browser.get(space)
    rows = _wait_rows(browser, lambda r: len(r) == 4)
    assert [r[0] for r in rows] == ["1", "2", "3", "4"]
    assert [r[1].rsplit("-", 1)[0] for r in rows] == ["syn", "dp-eps100", "dp-eps10", "real-run"]
    real = rows[3]  # the record submitted from the real harness run, ranked last at 0 of 6
    assert real[2] == HOSTILE and browser.execute_script("return window.__xss === undefined")  # escaped
    assert real[4] == "corpus" and real[5] == "no statement" and float(real[6]) == 0.0
    assert real[7] == "[0.0, 39.0]"
    assert real[8] == "6" and float(rows[0][6]) == 100.0
    # MCQ % and its interval (10, 11): the real run carries ranked-choice accuracy, the others show "-"
    assert real[10] != "-" and [r[10] for r in rows[:3]] == ["-"] * 3
    assert rows[1][12].startswith("≈ not separable (McNemar p = 1")
    assert "no per-question outcomes" in rows[2][12] and [r[4] for r in rows[:3]] == [
        "non-private data",
        "DP data",
        "DP data",
    ]
    assert [r[15] for r in rows] == ["geminon-tiny-demo"] * 4  # method, run folder, recipe: 13, 14, 15
    assert rows[0][16] == "card · record · release"
    assert all(r[16] == "record · release" for r in rows[1:])  # local base models: no card
    from selenium.webdriver.common.by import By

    card = browser.find_element(By.LINK_TEXT, "card").get_attribute("href")
    assert card == "https://huggingface.co/me/syn-evaluator"
    table, frame = browser.execute_script(WIDTH_JS)
    assert table <= frame, f"the ranking is {table} px wide in a {frame} px frame at 1280 px"
    SHOTS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(SHOTS / "leaderboard.png"))
    print(f"screenshot: {SHOTS / 'leaderboard.png'}")

    _click_header_text(browser, "EM %")  # by accuracy, worst first
    rows = _wait_rows(browser, lambda r: r and r[0][1].startswith("real-run"))
    assert [float(r[6]) for r in rows] == [0.0, 33.3, 83.3, 100.0]
    _click_header_text(browser, "EM %")  # again: best first
    rows = _wait_rows(browser, lambda r: r and r[0][1].startswith("syn"))
    assert [float(r[6]) for r in rows] == [100.0, 83.3, 33.3, 0.0]
    _click_header_text(browser, "ε")  # by the requested budget: non-private is infinite, no statement last
    rows = _wait_rows(browser, lambda r: r and r[0][1].startswith("dp-eps10-"))
    assert [r[5] for r in rows] == ["10", "100", "∞ (non-private)", "no statement"]

    _choose(browser, "epsilon", "10")
    rows = _wait_rows(browser, lambda r: len(r) == 1)
    assert rows[0][1].startswith("dp-eps10-") and rows[0][5] == "10"
    browser.save_screenshot(str(SHOTS / "leaderboard-epsilon-10.png"))

    link = browser.find_element(By.LINK_TEXT, "record")
    browser.get(link.get_attribute("href"))  # follow the row's link: its submitted record
    record = json.loads(browser.find_element(By.TAG_NAME, "body").text)
    assert record["corpus"]["privacy"]["epsilon"] == 10.0

    requests = {
        json.loads(entry["message"])["message"]["params"]["request"]["url"]
        for entry in browser.get_log("performance")
        if '"Network.requestWillBeSent"' in entry["message"]
    }
    outside = [
        u for u in requests if u.split(":")[0] in ("http", "https", "ws", "wss") and not u.startswith(space)
    ]
    assert outside == []
