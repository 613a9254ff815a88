"""Source code as a sequence of normalised tokens, the input of fingerprinting.

Copying survives renaming and re-commenting, so the tokens forget what those change: every
identifier becomes one symbol, every literal another, comments and blank lines go. Keywords,
operators and the statement structure (NEWLINE, INDENT, DEDENT) stay, since they are the code's
shape. Each token keeps the line it starts on, so a match can be shown as a range of lines.

Python is read with the standard tokenizer; anything it refuses (another language, a file cut off
mid-statement) is read by a small regex tokenizer with the same normalisation.
"""

from __future__ import annotations

import io
import keyword
import re
import tokenize
from typing import NamedTuple

IDENTIFIER = "I"
LITERAL = "L"
_DROPPED = {tokenize.COMMENT, tokenize.NL, tokenize.ENCODING, tokenize.ENDMARKER}
_STRUCTURE = {tokenize.NEWLINE: "\\n", tokenize.INDENT: "\\t", tokenize.DEDENT: "\\b"}
_FALLBACK = re.compile(
    r"""(?P<comment>\#[^\n]*|//[^\n]*)
      | (?P<string>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')
      | (?P<number>\d[\w.]*)
      | (?P<name>[A-Za-z_]\w*)
      | (?P<newline>\n)
      | (?P<space>\s+)
      | (?P<op>.)""",
    re.VERBOSE,
)


class Token(NamedTuple):
    symbol: str
    line: int  # 1-based, of the token's start


def normalised(source: str) -> list[Token]:
    """The tokens of `source`, normalised; never raises on bad code."""
    try:
        return list(_python_tokens(source))
    except (tokenize.TokenError, IndentationError, SyntaxError, ValueError):
        return _fallback_tokens(source)


def _symbol(kind: int, text: str) -> str | None:
    if kind in _DROPPED:
        return None
    if kind in _STRUCTURE:
        return _STRUCTURE[kind]
    if kind == tokenize.NAME:
        return text if keyword.iskeyword(text) else IDENTIFIER
    if kind in (tokenize.STRING, tokenize.NUMBER):
        return LITERAL
    return text  # operators and anything else the tokenizer names


def _python_tokens(source: str):
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        symbol = _symbol(tok.type, tok.string)
        if symbol is not None and (symbol.strip() or symbol.startswith("\\")):
            yield Token(symbol, tok.start[0])


def _fallback_tokens(source: str) -> list[Token]:
    tokens, line, pending_newline = [], 1, False
    for match in _FALLBACK.finditer(source):
        group, text = match.lastgroup, match.group()
        if group == "newline":
            line += 1
            pending_newline = bool(tokens)  # blank lines make no token, as NL in Python
            continue
        if group in ("comment", "space"):
            line += text.count("\n")
            continue
        if pending_newline:
            tokens.append(Token("\\n", line - 1))
            pending_newline = False
        symbol = (LITERAL if group in ("string", "number")
                  else (text if keyword.iskeyword(text) else IDENTIFIER) if group == "name" else text)
        tokens.append(Token(symbol, line))
    return tokens
