"""What request an HTTP client in a container's command sends: curl's and wget's method and URLs, read
from their options as each client reads them."""

from __future__ import annotations

from meshlint.mesh.facts.shellwords import Word

# The options that take a value: what follows them is no URL.
_CURL_SHORT_VALUE = frozenset("AbcCdDeEFHKmoPQrtTuUwxXyYz")
_CURL_LONG_VALUE = frozenset(
    (
        "request", "data", "data-raw", "data-binary", "data-ascii", "data-urlencode", "json", "form", "form-string", "header", "output",
        "user", "user-agent", "referer", "cookie", "cookie-jar", "max-time", "connect-timeout", "retry", "retry-delay", "retry-max-time",
        "write-out", "proxy", "resolve", "connect-to", "cacert", "cert", "key", "upload-file", "unix-socket", "interface", "url", "config",
    )
)
_WGET_VALUE = frozenset(("-O", "-o", "-a", "-e", "-P", "-T", "-t", "-U", "-w", "-Q", "-i", "-B", "--header", "--user-agent", "--timeout", "--tries", "--output-document", "--method", "--post-data", "--post-file", "--body-data"))


def curl_request(args: list[Word]) -> tuple[str, list[Word]]:
    """curl's method (`-X`, `--request`; data or a form makes a POST, `-G` a GET, `-I` a HEAD) and URLs."""
    said = _CurlOptions()
    urls: list[Word] = []
    i = 0
    while i < len(args):
        text = args[i].text
        i += 1
        if text.startswith("--"):
            i = said.long_option(args, i, urls)
        elif text.startswith("-") and len(text) > 1:
            i = said.short_options(args, i)
        else:
            urls.append(args[i - 1])
    return said.method_sent(), urls


class _CurlOptions:
    """What curl's options say of the request it sends."""

    def __init__(self) -> None:
        self.method: str | None = None
        self.data = self.get = self.head = self.upload = False

    def long_option(self, args: list[Word], i: int, urls: list[Word]) -> int:
        """`--name[=value]` at `args[i - 1]`; returns the index after what it took."""
        name, equals, value = args[i - 1].text[2:].partition("=")
        word = args[i - 1]
        if not equals and name in _CURL_LONG_VALUE and i < len(args):
            word, value, i = args[i], args[i].text, i + 1
        if name == "request":
            self.method = value.upper()
        elif name.startswith(("data", "form")) or name == "json":
            self.data = True
        elif name == "get":
            self.get = True
        elif name == "head":
            self.head = True
        elif name == "upload-file":
            self.upload = True
        elif name == "url":
            urls.append(word._replace(text=value))
        return i

    def short_options(self, args: list[Word], i: int) -> int:
        """A cluster of short options at `args[i - 1]` (`-sSX POST`); returns the index after what it took."""
        text = args[i - 1].text
        for j, letter in enumerate(text[1:], start=1):
            if letter in _CURL_SHORT_VALUE:
                value = text[j + 1:]
                if not value and i < len(args):
                    value, i = args[i].text, i + 1
                if letter == "X":
                    self.method = value.upper()
                self.data = self.data or letter in "dF"
                self.upload = self.upload or letter == "T"
                break
            self.get = self.get or letter == "G"
            self.head = self.head or letter == "I"
        return i

    def method_sent(self) -> str:
        return self.method or ("GET" if self.get else "POST" if self.data else "PUT" if self.upload else "HEAD" if self.head else "GET")


def wget_request(args: list[Word]) -> tuple[str, list[Word]]:
    """wget sends a GET unless `--post-data`, `--post-file` or `--method` says otherwise."""
    method, urls = None, []
    i = 0
    while i < len(args):
        text = args[i].text
        i += 1
        name, equals, value = text.partition("=")
        if name in _WGET_VALUE and not equals and text.startswith("-") and i < len(args):
            value, i = args[i].text, i + 1
        if name in ("--post-data", "--post-file"):
            method = method or "POST"
        elif name == "--method":
            method = value.upper()
        elif name == "--spider":
            method = method or "HEAD"
        elif not text.startswith("-"):
            urls.append(args[i - 1])
    return method or "GET", urls
