"""OpenAICompatibleModel against hostile servers on 127.0.0.1.

Each server is a raw socket server started in the test (port 0) that misbehaves in one
way: it drips its answer, never ends it, sends 10 MB or invalid UTF-8, redirects to
another port, or asks to retry after a day. The client must end each call in bounded time
with a ModelError, and never send the API key anywhere but the base_url.
"""

from __future__ import annotations

import json
import socket
import threading
import time

import pytest

from agentic_machines.errors import ModelError
from agentic_machines.models import OpenAICompatibleModel

OK_BODY = json.dumps({"choices": [{"message": {"content": "Paris"}}]}).encode()


class RawServer:
    """Accepts connections on 127.0.0.1 and answers each with ``respond(conn, request)``."""

    def __init__(self, respond) -> None:
        self.respond = respond
        self.requests: list[bytes] = []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.1)
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stopped.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        conn.settimeout(5)
        try:
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                data += chunk
            head, _, body = data.partition(b"\r\n\r\n")
            length = next(
                (
                    int(line.split(b":", 1)[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                ),
                0,
            )
            while len(body) < length:
                body += conn.recv(65536)
            self.requests.append(head)
            self.respond(conn, self)
        except OSError:
            pass  # the client gave up: that is what these tests want
        finally:
            conn.close()

    def close(self) -> None:
        self.stopped.set()
        self.thread.join(timeout=5)
        self.sock.close()


@pytest.fixture
def serve():
    servers = []

    def start(respond):
        server = RawServer(respond)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()


def model(server, **kw):
    kw.setdefault("retries", 0)
    return OpenAICompatibleModel(server.url, "m", api_key="sk-secret", proxies={}, **kw)


def test_a_server_dripping_one_byte_at_a_time_cannot_hold_a_call(serve):
    def drip(conn, server):
        answer = b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + b" " * 100000
        for byte in answer:
            if server.stopped.is_set():
                return
            conn.sendall(bytes([byte]))
            time.sleep(0.05)

    server = serve(drip)
    m = model(server, timeout=0.5)
    start = time.monotonic()
    with pytest.raises(ModelError, match="timed out"):
        m.complete("hi")
    # the total deadline (1 s here), not one read's timeout: the drip would last 5000 s;
    # a deadline test, so with far more than 5x slack for a busy machine
    assert time.monotonic() - start < 30


def test_an_endless_body_is_cut_at_the_size_cap(serve):
    def endless(conn, server):
        conn.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        while not server.stopped.is_set():
            conn.sendall(b"10000\r\n" + b"x" * 0x10000 + b"\r\n")

    server = serve(endless)
    m = model(server, timeout=10, max_response_bytes=1_000_000)
    with pytest.raises(ModelError, match="max_response_bytes"):
        m.complete("hi")


def test_a_10_mb_body_is_refused_above_the_cap_and_read_below_it(serve):
    big = json.dumps({"choices": [{"message": {"content": "x" * 10_000_000}}]}).encode()

    def huge(conn, server):
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(big) + big)

    server = serve(huge)
    with pytest.raises(ModelError, match="max_response_bytes"):
        model(server, max_response_bytes=1_000_000).complete("hi")
    assert len(model(server, max_response_bytes=20_000_000).complete("hi")) == 10_000_000


def test_invalid_utf8_is_a_model_error(serve):
    def garbage(conn, server):
        body = b'{"choices": [{"message": {"content": "\xff\xfe"}}]}'
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)

    with pytest.raises(ModelError, match="malformed JSON"):
        model(serve(garbage)).complete("hi")


def test_deeply_nested_json_is_a_model_error_not_a_crash(serve):
    def nested(conn, server):
        body = b"[" * 200_000
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)

    with pytest.raises(ModelError):
        model(serve(nested)).complete("hi")


def test_a_redirect_to_another_port_is_not_followed_with_the_key(serve):
    def fine(conn, server):
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(OK_BODY) + OK_BODY)

    other = serve(fine)

    def redirect(conn, server):
        location = f"http://127.0.0.1:{other.port}/v1/chat/completions".encode()
        conn.sendall(b"HTTP/1.1 307 Temporary Redirect\r\nLocation: " + location)
        conn.sendall(b"\r\nContent-Length: 0\r\n\r\n")

    first = serve(redirect)
    with pytest.raises(ModelError, match="redirect"):
        model(first).complete("hi")
    assert b"sk-secret" in first.requests[0]  # the key went to base_url only
    time.sleep(0.2)
    assert other.requests == []  # and nothing reached the other port


def test_a_huge_retry_after_ends_the_call_instead_of_sleeping(serve):
    def busy(conn, server):
        conn.sendall(
            b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 86400\r\nContent-Length: 0\r\n\r\n"
        )

    m = model(serve(busy), retries=3, timeout=2, max_retry_after=10**6, deadline=5)
    slept = []
    m.sleep = slept.append
    with pytest.raises(ModelError, match="deadline"):
        m.complete("hi")
    assert slept == []  # refused at once: no wait the deadline could not cover


def test_every_failure_is_a_model_error(serve, monkeypatch):
    server = serve(lambda conn, s: conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"))
    m = model(server)

    def boom(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(m, "_read_capped", boom)
    with pytest.raises(ModelError, match="MemoryError"):
        m.complete("hi")


def _echo(status: bytes):
    """A server that puts the request's Authorization header into its answer."""

    def respond(conn, server):
        head = server.requests[-1].decode()
        auth = next(h for h in head.split("\r\n") if h.lower().startswith("authorization:"))
        said = f"you sent {auth}; your key is {auth.split()[-1]}"
        if status == b"200 OK":
            body = json.dumps({"choices": [{"message": {"content": said}}]}).encode()
        else:
            body = json.dumps({"error": {"message": said}}).encode()
        conn.sendall(b"HTTP/1.1 %s\r\nContent-Length: %d\r\n\r\n" % (status, len(body)) + body)

    return respond


def test_a_key_echoed_in_the_middle_of_a_long_error_leaves_no_part_of_it(serve):
    # The error message is cut in its middle (300 characters kept); the key must go before
    # the cut, or a prefix of it ("sk-proj-ABC…") stays in the error.
    key = "sk-proj-" + "ABCDEFGHIJKLMNOPQRSTUVWXYZ" * 4

    def respond(conn, server):
        said = "x" * 100 + " your key is " + key + " " + "y" * 300
        body = json.dumps({"error": {"message": said}}).encode()
        conn.sendall(b"HTTP/1.1 401 Unauthorized\r\nContent-Length: %d\r\n\r\n" % len(body) + body)

    m = OpenAICompatibleModel(serve(respond).url, "m", api_key=key, proxies={}, retries=0)
    with pytest.raises(ModelError) as error:
        m.complete("hi")
    assert "HTTP 401" in str(error.value)
    assert "sk-proj-ABC" not in str(error.value) and "ABCDEFGHIJKL" not in str(error.value)


def test_a_server_that_echoes_the_key_never_gets_it_into_a_trace_or_an_error(serve, tmp_path):
    from agentic_machines.architectures import react
    from agentic_machines.runtime.run import run

    m = model(serve(_echo(b"200 OK")))
    trace_path = tmp_path / "trace.jsonl"
    run(react.machine(), m, max_steps=1, path=trace_path)
    text = trace_path.read_text()
    assert "you sent" in text and "sk-secret" not in text
    with pytest.raises(ModelError) as error:
        model(serve(_echo(b"400 Bad Request"))).complete("hi")
    assert "you sent" in str(error.value) and "sk-secret" not in str(error.value)
