"""A small W3C WebDriver client over the standard library, for the browser tests.

chromedriver speaks WebDriver as JSON over HTTP, so urllib is enough: no Selenium, no
websocket. Only what the tests use: a session, navigation, finding and clicking
elements, typing, running a script, waiting for a condition and taking screenshots.
"""

from __future__ import annotations

import base64
import json
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

ELEMENT = "element-6066-11e4-a52e-4f735466cecf"  # the W3C key of an element reference


def find_chromium() -> tuple[str, str] | None:
    """Returns the paths of chromium and chromedriver, or None when either is missing."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    driver = shutil.which("chromedriver")
    return (browser, driver) if browser and driver else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class WebDriverError(AssertionError):
    pass


class Browser:
    """Headless Chromium driven through chromedriver."""

    def __init__(self, browser: str, driver: str, width: int = 1400, height: int = 1000):
        port = free_port()
        self._driver = subprocess.Popen([driver, f"--port={port}"], stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
        self._base = f"http://127.0.0.1:{port}"
        self.session = None
        deadline = time.monotonic() + 20
        while True:
            try:
                if self._call("GET", "/status")["ready"]:
                    break
            except (OSError, WebDriverError):
                pass
            if time.monotonic() > deadline:
                self.quit()
                raise WebDriverError("chromedriver did not start within 20 s")
            time.sleep(0.1)
        options = {"binary": browser, "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                                               "--disable-dev-shm-usage", f"--window-size={width},{height}"]}
        answer = self._call("POST", "/session", {"capabilities": {"alwaysMatch": {
            "browserName": "chrome", "goog:chromeOptions": options}}})
        self.session = answer["sessionId"]

    def _call(self, method: str, path: str, body: dict | None = None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self._base + path, data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return json.loads(response.read())["value"]
        except urllib.error.HTTPError as error:
            value = json.loads(error.read() or b"{}").get("value", {})
            raise WebDriverError(f"{method} {path}: {value.get('error')}: {value.get('message', '')[:300]}") from None

    def _session(self, method: str, path: str, body: dict | None = None):
        return self._call(method, f"/session/{self.session}{path}", body)

    def get(self, url: str) -> None:
        self._session("POST", "/url", {"url": url})

    def find(self, css: str) -> str:
        """Returns the element reference of the first match of a CSS selector."""
        return self._session("POST", "/element", {"using": "css selector", "value": css})[ELEMENT]

    def click(self, css: str) -> None:
        self._session("POST", f"/element/{self.find(css)}/click", {})

    def type(self, css: str, text: str) -> None:
        element = self.find(css)
        self._session("POST", f"/element/{element}/clear", {})
        self._session("POST", f"/element/{element}/value", {"text": text})

    def run(self, script: str, *args):
        """Runs a script body (``return ...``) in the page and returns its value."""
        return self._session("POST", "/execute/sync", {"script": script, "args": list(args)})

    def wait(self, script: str, *args, timeout: float = 15.0):
        """Polls a script until it returns something truthy; returns that value."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.run(script, *args)
            if value:
                return value
            if time.monotonic() > deadline:
                raise WebDriverError(f"timed out after {timeout} s waiting for: {script}")
            time.sleep(0.05)

    def screenshot(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(self._session("GET", "/screenshot")))
        return path

    def quit(self) -> None:
        try:
            if self.session:
                self._session("DELETE", "")
        except (OSError, WebDriverError):
            pass
        finally:
            self._driver.terminate()
            try:
                self._driver.wait(10)
            except subprocess.TimeoutExpired:
                self._driver.kill()
