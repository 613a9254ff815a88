"""Every encoding of a secret the redactor promises to catch, as source text: a hostile agent runs it
inside its sandbox (PRINT_EVERY_ENCODING) and the tests run the same code to know what to look for."""

from __future__ import annotations

import base64
import re

ENCODINGS_SOURCE = '''
import base64, json, re
from urllib.parse import quote, quote_plus

def every_encoding(secret):
    raw = secret.encode()
    b64 = base64.b64encode(raw).decode()
    mime = base64.encodebytes(b"key=" + raw).decode()  # 76-character lines
    return {
        "as is": secret, "quote": quote(secret), "quote_plus": quote_plus(secret),
        "quote safe=''": quote(secret, safe=""), "quote safe='/:~+ '": quote(secret, safe="/:~+ "),
        "quote_plus safe='/'": quote_plus(secret, safe="/"),
        "quote, lowercase hex": re.sub("%[0-9A-F]{2}", lambda m: m.group().lower(), quote(secret)),
        "every byte %xx": "".join("%%%02x" % b for b in raw), "every byte %XX": "".join("%%%02X" % b for b in raw),
        "hex": raw.hex(), "HEX": raw.hex().upper(), "json": json.dumps(secret), "reversed": secret[::-1],
        "base64": b64, "urlsafe base64": base64.urlsafe_b64encode(raw).decode(),
        "base64, offset 1": base64.b64encode(b"k" + raw).decode(),
        "base64, offset 2": base64.b64encode(b"k:" + raw).decode(),
        "MIME base64": mime, "MIME base64, CRLF": mime.replace("\\n", "\\r\\n"),
        "MIME base64 in JSON": json.dumps(mime), "MIME base64, repr in JSON": json.dumps(repr(mime)),
        "PEM base64 (64)": "\\n".join(b64[i:i + 64] for i in range(0, len(b64), 64)),
        "urlsafe base64, wrapped at 76": "\\n".join(base64.urlsafe_b64encode(b"xy" + raw).decode()[i:i + 76]
                                                   for i in range(0, 200, 76)),
    }
'''
namespace: dict = {}
exec(ENCODINGS_SOURCE, namespace)  # noqa: S102 - our own source, shared with the agent
every_encoding = namespace["every_encoding"]


def leaks(stored: bytes, secret: str) -> list[str]:
    """The encodings of `secret` found in `stored`: whole, or (base64) 16 characters of it across lines
    (broken as text or as JSON escapes)."""
    found = [name for name, text in every_encoding(secret).items() if text.encode() in stored]
    joined = re.sub(rb"\r|\n|\\+r|\\+n", b"", stored)
    raw = secret.encode()
    for pad in range(3):
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            core = encode(b"\0" * pad + raw)[pad + 1:-4]  # the characters only the secret's bytes set
            if any(core[i:i + 16] in joined for i in range(len(core) - 15)):
                found.append(f"base64 at offset {pad}, across lines")
    return found
