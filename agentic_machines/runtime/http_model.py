"""A model over HTTP: :class:`OpenAICompatibleModel` calls a chat-completions server
(OpenAI, vLLM, llama.cpp server, Ollama) with the standard library only, and is hardened
against a server that misbehaves. ``agentic_machines.models`` re-exports it.
"""

from __future__ import annotations

import email.utils
import http.client
import json
import re
import socket
import ssl
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from .._text import counted
from ..errors import InvalidArgument, ModelError
from .model_base import ModelBase, shorten

__all__ = ["OpenAICompatibleModel"]


class OpenAICompatibleModel(ModelBase):
    """A chat-completions server (OpenAI, vLLM, llama.cpp server, Ollama) over HTTP.

    Each call POSTs ``{"model", "messages", "temperature", ...}`` to
    ``{base_url}/chat/completions`` with the standard library and returns
    ``choices[0].message.content``. The prompt is sent as one user message, after
    ``system`` when given. Rate limits (429), server errors (5xx), refused connections
    and timeouts are retried ``retries`` times with exponential backoff
    (``backoff * 2**attempt`` seconds), or after the server's ``Retry-After`` delay
    capped at ``max_retry_after``; any other status, or a body that is not the expected
    JSON, raises :class:`ModelError` with the status and the server's message.
    ``extra`` is merged into the request body (e.g. ``{"seed": 1}``). ``proxies=None``
    uses the environment's proxy settings; ``{}`` connects directly.

    Hardened against a server that misbehaves (every failure is a :class:`ModelError`):

    - ``timeout`` bounds each attempt *in total* (connecting, sending, waiting, reading
      the whole answer), so a server that drips one byte a second cannot hold a call;
      ``deadline`` bounds the whole call, retries and waits included (default: each
      attempt its ``timeout`` plus the backoff sleeps); a ``Retry-After`` longer than what is left of it
      ends the call at once instead of sleeping;
    - an answer larger than ``max_response_bytes`` is refused (no unbounded memory);
    - redirects are never followed: the ``Authorization`` header would travel with
      them; the error names the target, to use as ``base_url`` if it is trusted.

    >>> m = OpenAICompatibleModel("http://127.0.0.1:8000/v1", "llama-3", api_key="sk-secret")
    >>> m
    OpenAICompatibleModel('http://127.0.0.1:8000/v1', 'llama-3', api_key=***)
    >>> m.request_body("Hi")["messages"]
    [{'role': 'user', 'content': 'Hi'}]
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        system: str | None = None,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        stop: str | Sequence[str] | None = None,
        timeout: float = 30.0,
        retries: int = 3,
        backoff: float = 0.5,
        max_retry_after: float = 60.0,
        deadline: float | None = None,
        max_response_bytes: int = 16 * 1024 * 1024,
        extra: Mapping[str, Any] | None = None,
        proxies: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__()
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise InvalidArgument(
                f"base_url must start with http:// or https://, got {base_url!r}; e.g. 'http://127.0.0.1:8000/v1'"
            )
        if not isinstance(model, str) or not model:
            raise InvalidArgument(f"model must be the model's name on the server, got {model!r}")
        if not isinstance(retries, int) or retries < 0:
            raise InvalidArgument(f"retries must be an integer >= 0, got {retries!r}")
        if timeout <= 0 or backoff < 0 or max_retry_after < 0:
            raise InvalidArgument("timeout must be > 0 and backoff, max_retry_after >= 0 (seconds)")
        if deadline is not None and deadline <= 0:
            raise InvalidArgument(f"deadline must be > 0 seconds (or None), got {deadline!r}")
        if not isinstance(max_response_bytes, int) or max_response_bytes < 1:
            raise InvalidArgument(
                f"max_response_bytes must be a positive integer, got {max_response_bytes!r}"
            )
        self.base_url = base_url.rstrip("/")
        self.url = self.base_url + "/chat/completions"
        self.model = model
        self.api_key = api_key
        self.system = system
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.stop = stop
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.max_retry_after = max_retry_after
        # default: every attempt its whole timeout, plus the backoff sleeps between them,
        # plus a little for the work around the attempts
        self.deadline = (
            deadline
            if deadline is not None
            else (retries + 1) * timeout + backoff * (2**retries - 1) + min(timeout, 1.0)
        )
        self.max_response_bytes = max_response_bytes
        self.extra = dict(extra or {})
        self.proxies = None if proxies is None else dict(proxies)
        self.sleep: Callable[[float], None] = time.sleep  # replaceable, so tests need not wait

    def __repr__(self) -> str:
        key = ", api_key=***" if self.api_key else ""
        return f"{type(self).__name__}({self.base_url!r}, {self.model!r}{key})"

    def request_body(self, prompt: str) -> dict[str, Any]:
        """The JSON body sent for ``prompt``."""
        messages = [{"role": "system", "content": self.system}] if self.system is not None else []
        messages.append({"role": "user", "content": prompt})
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature,
        }
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        if self.stop is not None:
            body["stop"] = self.stop if isinstance(self.stop, str) else list(self.stop)
        body.update(self.extra)
        return body

    def _complete(self, prompt: str) -> str:
        # What the server sends back (a completion, an error body it echoes) never carries
        # the API key further: not into a trace, a cassette, a log or an error message.
        try:
            return self.hide_key(self._complete_within_deadline(prompt))
        except ModelError as exc:
            raise ModelError(self.hide_key(str(exc))) from None
        except Exception as exc:  # noqa: BLE001 - every failure of the call is a ModelError
            raise ModelError(
                f"{self.url} failed: {type(exc).__name__}: {shorten(self.hide_key(str(exc)), 200)}"
            ) from None

    def hide_key(self, text: str) -> str:
        """``text`` with this model's API key (and any ``Authorization`` header value)
        replaced by ``***``.

        >>> m = OpenAICompatibleModel("http://127.0.0.1:9/v1", "m", api_key="sk-secret-123")
        >>> m.hide_key("you sent Authorization: Bearer sk-secret-123, key sk-secret-123")
        'you sent Authorization: ***, key ***'
        """
        text = _AUTHORIZATION.sub(r"\1***", text)
        if self.api_key:
            text = text.replace(self.api_key, "***")
        return text

    def _hide_key_in_bytes(self, raw: bytes) -> bytes:
        # hide_key on the undecoded body: the bytes that are not the key stay as they came
        raw = _AUTHORIZATION_BYTES.sub(rb"\1***", raw)
        if self.api_key:
            raw = raw.replace(self.api_key.encode("utf-8"), b"***")
        return raw

    def _complete_within_deadline(self, prompt: str) -> str:
        data = json.dumps(self.request_body(prompt)).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        end = time.monotonic() + self.deadline
        last_problem = ""
        for attempt in range(self.retries + 1):
            left = end - time.monotonic()
            if left <= 0:
                last_problem = f"the call's deadline of {self.deadline:g} s passed"
                break
            retry_after: float | None = None
            try:
                code, response_headers, raw = self._post(data, headers, min(self.timeout, left))
                # The key leaves what the server sent before any of it is parsed or cut
                # short: a shortened message could keep part of it (hide_key then misses it).
                raw = self._hide_key_in_bytes(raw)
            except TimeoutError as exc:
                detail = str(exc)
                last_problem = (
                    f"timed out {detail}"
                    if detail.startswith("after")
                    else f"timed out after {self.timeout} s ({detail})"
                )
            except (OSError, http.client.HTTPException) as exc:
                last_problem = f"connection failed: {type(exc).__name__}: {exc}"
            else:
                if 200 <= code < 300:
                    return self._parse(raw)
                text = raw.decode("utf-8", "replace")
                if 300 <= code < 400:
                    target = self.hide_key(response_headers.get("Location", "(no Location)"))
                    raise ModelError(
                        f"{self.url} answered HTTP {code}, a redirect to {shorten(target, 200)}; "
                        "redirects are not followed (the API key would be sent with it): set "
                        "base_url to the final address if you trust it"
                    )
                if code != 429 and code < 500:
                    raise ModelError(
                        f"{self.url} answered HTTP {code}: {_server_message(text)}; "
                        "check the model name, the API key and the request options"
                    )
                last_problem = f"HTTP {code}: {_server_message(text)}"
                retry_after = _retry_after(response_headers.get("Retry-After"))
            if attempt < self.retries:
                delay = (
                    self.backoff * 2**attempt
                    if retry_after is None
                    else min(retry_after, self.max_retry_after)
                )
                if delay >= end - time.monotonic():
                    raise ModelError(
                        f"{self.url} failed ({last_problem}) and the next try would start after "
                        f"{delay:g} s, past this call's deadline of {self.deadline:g} s; raise "
                        "deadline= or try again later"
                    )
                self.sleep(delay)
        raise ModelError(
            f"{self.url} failed after {counted(attempt + 1, 'attempt')}; last error: {last_problem}. "
            "Check that the server is running and reachable, or raise timeout=/retries=/deadline=."
        )

    def _post(
        self, data: bytes, headers: Mapping[str, str], limit: float
    ) -> tuple[int, Any, bytes]:
        """One POST that ends within ``limit`` seconds: status, headers, body (capped)."""
        conn, target = self._connection(limit)
        expired = threading.Event()

        def stop() -> None:
            # A blocked read returns at once when the socket is shut down from here.
            expired.set()
            sock = conn.sock
            if sock is not None:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

        timer = threading.Timer(limit, stop)
        timer.daemon = True
        timer.start()
        try:
            conn.request("POST", target, body=data, headers=dict(headers))
            response = conn.getresponse()
            body = self._read_capped(response, expired)
            if expired.is_set():
                raise TimeoutError(f"after {limit:.3g} s without a complete answer")
            return response.status, response.headers, body
        except (OSError, http.client.HTTPException):
            if expired.is_set():
                raise TimeoutError(f"after {limit:.3g} s without a complete answer") from None
            raise
        finally:
            timer.cancel()
            conn.close()

    def _read_capped(self, response: http.client.HTTPResponse, expired: threading.Event) -> bytes:
        length = response.getheader("Content-Length")
        if length is not None and length.isdigit() and int(length) > self.max_response_bytes:
            raise ModelError(
                f"{self.url} announced an answer of {length} bytes, more than "
                f"max_response_bytes={self.max_response_bytes}; raise it if that is expected"
            )
        chunks, size = [], 0
        while not expired.is_set():
            chunk = response.read1(65536)
            if not chunk:
                break
            size += len(chunk)
            if size > self.max_response_bytes:
                raise ModelError(
                    f"{self.url} sent more than max_response_bytes={self.max_response_bytes} "
                    "bytes; the answer was cut off and refused (raise the limit if expected)"
                )
            chunks.append(chunk)
        return b"".join(chunks)

    def _connection(self, limit: float) -> tuple[http.client.HTTPConnection, str]:
        parts = urllib.parse.urlsplit(self.url)
        host, https = parts.hostname or "", parts.scheme == "https"
        port = parts.port or (443 if https else 80)
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        proxies = urllib.request.getproxies() if self.proxies is None else self.proxies
        proxy = proxies.get(parts.scheme)
        if proxy and self.proxies is None and urllib.request.proxy_bypass(host):
            proxy = None
        context = ssl.create_default_context() if https else None
        if not proxy:
            if https:
                return http.client.HTTPSConnection(host, port, timeout=limit, context=context), path
            return http.client.HTTPConnection(host, port, timeout=limit), path
        p = urllib.parse.urlsplit(proxy if "://" in proxy else f"http://{proxy}")
        if https:  # a CONNECT tunnel through the proxy, TLS to the server inside it
            conn = http.client.HTTPSConnection(
                p.hostname or "", p.port or 80, timeout=limit, context=context
            )
            conn.set_tunnel(host, port)
            return conn, path
        return http.client.HTTPConnection(p.hostname or "", p.port or 80, timeout=limit), self.url

    def _parse(self, raw: bytes) -> str:
        try:
            payload = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            raise ModelError(
                f"{self.url} returned malformed JSON ({type(exc).__name__}: {shorten(str(exc), 100)}): "
                f"{shorten(raw.decode('utf-8', 'replace'), 200)!r}; "
                "is base_url the API root of an OpenAI-compatible server (usually ending in /v1)?"
            ) from None
        try:
            content = payload["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise ModelError(
                f"{self.url} returned JSON without choices[0].message.content: {shorten(json.dumps(payload), 200)}; "
                "is the server OpenAI-compatible?"
            ) from None
        if not isinstance(content, str):
            raise ModelError(
                f"{self.url} returned content {content!r} instead of text (a tool call or a refusal?); "
                "this adapter needs plain text completions"
            )
        return content


_AUTHORIZATION = re.compile(r"(authorization[\"']?\s*[:=]\s*[\"']?)[^\"'\r\n,}]+", re.I)
"""An ``Authorization`` header's value as a server may echo it (in text or in JSON)."""
_AUTHORIZATION_BYTES = re.compile(_AUTHORIZATION.pattern.encode("ascii"), re.I)


def _server_message(body: str) -> str:
    """The ``error.message`` of an OpenAI-style error body, else the body itself."""
    try:
        payload = json.loads(body)
    except json.JSONDecodeError:
        return shorten(body.strip(), 300) or "(empty body)"
    if isinstance(payload, dict):
        err = payload.get("error", payload)
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            return shorten(err["message"], 300)
        if isinstance(err, str):
            return shorten(err, 300)
    return shorten(body.strip(), 300)


def _retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header (seconds or an HTTP date), else None."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())
