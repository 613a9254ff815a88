"""The redactor replaces a secret in every encoding it promises (runner.secrets.Redactor): URL-quoted
with any safe set, in either hex case, every byte percent-encoded, hex, JSON, reversed, and base64 or
URL-safe base64 at any alignment, unwrapped or wrapped at MIME's or PEM's width; in one piece of text
and streamed in chunks cut anywhere. Ordinary log text (URLs, digests, base64 blobs) is left as it is."""

from __future__ import annotations

import base64
import hashlib

import pytest

from runner.secrets import REPLACEMENT, Redactor
from tests.runner.secret_forms import every_encoding, leaks

SECRETS = [
    "tok-live-7Hq2ZpXw9LmN4rT8vKd3",  # a key as most providers make them
    "tok/live+7Hq2 ZpXw9:LmN4~rT8vKd3/abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ",  # long, every quote case
    "pässwörd/with spaces & more=yes",  # not ASCII
]
ENCODINGS = list(every_encoding(SECRETS[0]))


@pytest.mark.parametrize("secret", SECRETS)
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_every_encoding_is_replaced(secret, encoding):
    text = every_encoding(secret)[encoding]
    out = Redactor([secret]).bytes(b"GET /api?key=" + text.encode() + b"&next=1 HTTP/1.1\n")
    assert REPLACEMENT in out
    assert leaks(out, secret) == [], out
    assert out.startswith(b"GET /api?key=") and out.endswith(b"&next=1 HTTP/1.1\n")


@pytest.mark.parametrize("secret", SECRETS[:2])
def test_every_encoding_is_replaced_when_streamed_in_chunks_cut_anywhere(secret):
    data = b"".join(b"line %d: %s\n" % (n, text.encode()) for n, text in enumerate(every_encoding(secret).values()))
    redactor = Redactor([secret])
    for size in (7, 64, 1000, 4093):
        chunks = [data[i:i + size] for i in range(0, len(data), size)]
        out = b"".join(redactor.stream(iter(chunks)))
        assert leaks(out, secret) == [], size
        assert out.count(REPLACEMENT) >= len(ENCODINGS)


def test_ordinary_log_text_is_left_as_it_is():
    secret = SECRETS[1]
    log = b"".join([
        b"GET https://huggingface.co/api/models/org%2Fmodel%20name?rev=%2Fmain 200\n",
        f"sha256:{hashlib.sha256(b'weights').hexdigest()}\n".encode(),
        base64.encodebytes(hashlib.sha512(b"blob").digest() * 8),
        b"epoch 3 loss=0.1234 tok/live is not the whole key\n",
    ])
    assert Redactor([secret]).bytes(log) == log


def test_a_secret_among_many_similar_anchors_is_still_found():
    """Anchors found everywhere (a log full of the secret's first characters) only cost time."""
    secret = SECRETS[0]
    noise = b"tok-live-7Hq2 " * 5000
    out = Redactor([secret]).bytes(noise + every_encoding(secret)["quote safe=''"].encode() + noise)
    assert out == noise + REPLACEMENT + noise
