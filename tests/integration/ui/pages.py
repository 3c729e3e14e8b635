"""Reading the page as a user would: texts by test id, waits, opening a page."""

from __future__ import annotations

from collections.abc import Callable

from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait

WAIT_S = 15


def texts(driver: WebDriver, testid: str) -> list[str]:
    """Return the texts of the elements with ``testid``, read in one pass of the page.

    The page re-renders by replacing its content, so an element found may be gone before its
    text is read: then read again (a bounded number of times).
    """
    selector = f'[data-testid="{testid}"]'
    for _ in range(20):
        try:
            return [e.text for e in driver.find_elements(By.CSS_SELECTOR, selector)]
        except StaleElementReferenceException:
            continue
    raise AssertionError(f"the page kept re-rendering while {testid} was read")


def until(driver: WebDriver, check: Callable[[WebDriver], object], what: str) -> None:
    """Wait (at most ``WAIT_S``) until ``check`` holds; ``what`` names it if it never does."""
    WebDriverWait(
        driver,
        WAIT_S,
        poll_frequency=0.1,
        ignored_exceptions=(StaleElementReferenceException, NoSuchElementException),
    ).until(check, what)


def open_page(driver: WebDriver, url: str) -> None:
    """Open ``url`` and wait until the page has rendered."""
    driver.get(url)
    until(driver, lambda d: "Loading" not in d.find_element(By.ID, "main").text, "page rendered")
