"""OpenAICompatibleModel against a small chat-completions server on 127.0.0.1.

The server is started inside each test (port 0, shut down afterwards) and plays a
script of responses; no test reaches any other address (the model is built with
``proxies={}`` so that proxy settings in the environment cannot redirect it).
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from agentic_machines.errors import InvalidArgument, ModelError
from agentic_machines.models import OpenAICompatibleModel


def ok(content="Paris", **extra):
    body = {
        "id": "x",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}],
    }
    body.update(extra)
    return (200, {"Content-Type": "application/json"}, json.dumps(body).encode(), 0.0)


def status(code, body=b"", headers=None, delay=0.0):
    return (code, {"Content-Type": "application/json", **(headers or {})}, body, delay)


class Server:
    """A scripted server: each request pops the next (status, headers, body, delay)."""

    def __init__(self) -> None:
        self.script: list[tuple] = []
        self.requests: list[dict] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - the http.server API
                length = int(self.headers.get("Content-Length", 0))
                raw = self.rfile.read(length)
                server.requests.append(
                    {"path": self.path, "headers": dict(self.headers), "body": json.loads(raw)}
                )
                code, headers, body, delay = (
                    server.script.pop(0) if server.script else status(500, b"script ran out")
                )
                if delay:
                    time.sleep(delay)
                try:
                    self.send_response(code)
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:
                    pass  # the client gave up (timeout test): nothing to answer

            def log_message(self, *args):  # keep test output quiet
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


@pytest.fixture
def server():
    s = Server()
    yield s
    s.close()


def make(server, **kw):
    kw.setdefault("backoff", 0.001)
    m = OpenAICompatibleModel(server.url, kw.pop("model", "test-model"), proxies={}, **kw)
    m.slept = []
    real_sleep = m.sleep

    def sleep(seconds):
        m.slept.append(seconds)
        real_sleep(min(seconds, 0.01))  # record the delay the model chose; never really wait long

    m.sleep = sleep
    return m


def test_request_body_headers_and_parsed_answer(server):
    server.script = [ok("Paris")]
    m = make(
        server,
        api_key="sk-test",
        system="Be brief.",
        temperature=0.3,
        max_tokens=5,
        stop=["\n"],
        extra={"seed": 7},
    )
    assert m.complete("Capital of France?") == "Paris"
    (req,) = server.requests
    assert req["path"] == "/v1/chat/completions"
    assert req["body"] == {
        "model": "test-model",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Capital of France?"},
        ],
        "temperature": 0.3,
        "max_tokens": 5,
        "stop": ["\n"],
        "seed": 7,
    }
    assert req["headers"]["Authorization"] == "Bearer sk-test"
    assert req["headers"]["Content-Type"] == "application/json"
    assert m.calls == [("Capital of France?", "Paris")]


def test_no_auth_header_without_key_and_minimal_body(server):
    server.script = [ok("x")]
    m = make(server)
    m.complete("p")
    (req,) = server.requests
    assert "Authorization" not in req["headers"]
    assert req["body"] == {
        "model": "test-model",
        "messages": [{"role": "user", "content": "p"}],
        "temperature": 0.0,
    }


@pytest.mark.parametrize("first", [429, 500, 503])
def test_retries_on_rate_limit_and_server_errors(server, first):
    server.script = [status(first, b'{"error": {"message": "busy"}}'), ok("fine")]
    m = make(server, backoff=0.001)
    assert m.complete("p") == "fine"
    assert len(server.requests) == 2
    assert m.slept == [0.001]


def test_backoff_is_exponential_and_gives_up_with_the_last_error(server):
    server.script = [status(502, b"bad gateway")] * 4
    m = make(server, retries=3, backoff=0.001)
    with pytest.raises(ModelError) as info:
        m.complete("p")
    assert m.slept == [0.001, 0.002, 0.004]
    assert len(server.requests) == 4
    assert (
        "4 attempts" in str(info.value)
        and "HTTP 502" in str(info.value)
        and "bad gateway" in str(info.value)
    )
    assert m.calls == []


def test_retry_after_is_honoured_and_capped(server):
    server.script = [
        status(429, b"{}", {"Retry-After": "2"}),
        status(429, b"{}", {"Retry-After": "3600"}),
        ok("done"),
    ]
    m = make(server, backoff=0.001, max_retry_after=5.0)
    assert m.complete("p") == "done"
    assert m.slept == [2.0, 5.0]


def test_timeout_is_retried_then_reported(server):
    code, headers, body, _ = ok("late")
    server.script = [
        (code, headers, body, 1.0)
    ] * 2  # the server sleeps longer than the 0.2 s timeout
    m = make(server, timeout=0.2, retries=1)
    with pytest.raises(ModelError, match="timed out after 0.2 s"):
        m.complete("p")
    assert len(server.requests) == 2
    assert len(m.slept) == 1


def test_a_slow_first_answer_then_a_fast_one_succeeds(server):
    code, headers, body, _ = ok("late")
    server.script = [(code, headers, body, 1.0), ok("quick")]
    m = make(server, timeout=0.2, retries=2)
    assert m.complete("p") == "quick"


def test_client_error_is_not_retried_and_shows_the_server_message(server):
    server.script = [
        status(
            400,
            b'{"error": {"message": "model \'nope\' does not exist", "type": "invalid_request_error"}}',
        )
    ]
    m = make(server, model="nope")
    with pytest.raises(ModelError) as info:
        m.complete("p")
    assert "HTTP 400" in str(info.value) and "model 'nope' does not exist" in str(info.value)
    assert len(server.requests) == 1 and m.slept == []


def test_plain_text_error_body_is_shown(server):
    server.script = [status(404, b"no such route")]
    with pytest.raises(ModelError, match="HTTP 404: no such route"):
        make(server).complete("p")


def test_malformed_json_and_missing_content(server):
    server.script = [(200, {"Content-Type": "application/json"}, b"{not json", 0.0)]
    with pytest.raises(ModelError, match="malformed JSON"):
        make(server).complete("p")
    server.script = [(200, {}, json.dumps({"choices": []}).encode(), 0.0)]
    with pytest.raises(ModelError, match=r"choices\[0\]\.message\.content"):
        make(server).complete("p")
    server.script = [ok(None)]
    with pytest.raises(ModelError, match="instead of text"):
        make(server).complete("p")


def test_connection_refused_is_retried_then_reported():
    # Bind a port on 127.0.0.1 and close it again, so nothing listens there.
    probe = Server()
    url = probe.url
    probe.close()
    m = OpenAICompatibleModel(url, "m", retries=1, backoff=0.001, proxies={})
    with pytest.raises(ModelError, match="2 attempt"):
        m.complete("p")


def test_arguments_are_validated_and_the_key_never_printed():
    with pytest.raises(InvalidArgument, match="http://"):
        OpenAICompatibleModel("localhost:8000", "m")
    with pytest.raises(InvalidArgument, match="retries"):
        OpenAICompatibleModel("http://127.0.0.1:1", "m", retries=-1)
    assert "sk-secret" not in repr(
        OpenAICompatibleModel("http://127.0.0.1:1", "m", api_key="sk-secret")
    )
