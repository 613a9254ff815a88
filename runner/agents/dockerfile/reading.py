"""How Docker's builders read a Dockerfile into instructions, in Python, as closely as a check needs.

Lines are cut as Go's scanner cuts them, whitespace is Go's, parser directives (`# escape=`) are read
only at the top, continuations drop the comments and blank lines inside them, keywords are in any
case. `readings()` gives both ways the file is built: the daemon's classic builder knows no
heredocs (their lines are instructions to it), BuildKit skips their bodies.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

# Go's whitespace (unicode.IsSpace), which the builders trim: Python's str.strip() also trims \x1c-\x1f,
# and a line Python thought empty, where Go did not, would end a continuation in one reading only.
GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
           "\u2028\u2029\u202f\u205f\u3000"
DIRECTIVE = re.compile(r"^#[\t\n\f\r ]*([a-zA-Z][a-zA-Z0-9]*)[\t\n\f\r ]*=[\t\n\f\r ]*(.+?)[\t\n\f\r ]*$")
KEYWORD_SPLIT = re.compile(r"[\t\v\f\r ]+")  # Go's reWhitespace: what separates an instruction's keyword
HEREDOC_WORD = re.compile(r"^(\d*)<<(-?)(.+)$")
HEREDOC_NAME = re.compile(r"[A-Za-z0-9_.-]+")
HEREDOC_INSTRUCTIONS = {"run", "copy", "add"}
INSTRUCTIONS = {"add", "arg", "cmd", "copy", "entrypoint", "env", "expose", "from", "healthcheck", "label",
                "maintainer", "onbuild", "run", "shell", "stopsignal", "user", "volume", "workdir"}


@dataclass(frozen=True)
class Instruction:
    line: int  # where it starts, from 1
    keyword: str  # lower case
    args: str  # continuation lines joined, escapes at their ends removed
    text: str  # its first line as written, to quote in a message


def readings(text: str) -> tuple[list[tuple[int, str]], list[list[Instruction]]]:
    """Refused parser directives (line, why), and the instructions as each builder reads them."""
    all_lines = lines(text)
    escape, skip, problems = directives(all_lines)
    return problems, [instructions(all_lines, escape, skip, heredocs) for heredocs in (False, True)]


def lines(text: str) -> list[str]:
    """Lines as Go's scanner cuts them: at \\n only, one \\r before it dropped (str.splitlines also
    cuts at \\v, \\f, \\x1c-\\x1e, \\x85 and \\u2028, where a builder sees one line)."""
    return [line.removesuffix("\r") for line in text.removeprefix("\ufeff").split("\n")]


def directives(lines: list[str]) -> tuple[str, int, list[tuple[int, str]]]:
    """The escape character, how many leading lines are directives, and refused directives. As the
    builders do: only the first lines, until any other line; each at most once."""
    escape, seen, problems = "\\", set(), []
    count = 0
    for number, line in enumerate(lines, 1):
        match = DIRECTIVE.match(line.lstrip(GO_SPACE))
        if not match:
            break
        name, value = match.group(1).lower(), match.group(2)
        count = number
        if re.search(r"[\f\r]", line):  # a directive to one version of the builder, a comment to another
            problems.append((number, f"{quote(line)}: a parser directive spelled with a form feed or carriage "
                                     "return"))
        if name in seen:
            problems.append((number, f"{quote(line)}: the {name} directive is given twice"))
        seen.add(name)
        if name == "escape":
            if value not in ("\\", "`"):
                problems.append((number, f"{quote(line)}: the escape character must be \\ or `"))
            else:
                escape = value
        elif name == "syntax":
            problems.append((number, f"{quote(line)}: a syntax directive names a frontend image to pull; "
                                     "the build uses the daemon's own"))
    return escape, count, problems


def instructions(lines: list[str], escape: str, skip: int, heredocs: bool) -> list[Instruction]:
    continued = re.compile(re.escape(escape) + r"[ \t]*$")
    found: list[Instruction] = []
    index = skip
    while index < len(lines):
        first = lines[index]
        start, index = index + 1, index + 1
        line: str | None = first.lstrip(GO_SPACE)
        if not line or line.startswith("#"):
            continue
        parts = []
        while True:
            if not continued.search(line):
                parts.append(line)
                break
            parts.append(continued.sub("", line))
            line = None
            while index < len(lines):  # comments and empty lines inside a continuation are dropped
                candidate = lines[index]
                index += 1
                if candidate.lstrip(GO_SPACE) and not candidate.lstrip(GO_SPACE).startswith("#"):
                    line = candidate
                    break
            if line is None:
                break
        split = KEYWORD_SPLIT.split("".join(parts).strip(GO_SPACE), maxsplit=1)
        keyword, args = split[0], split[1] if len(split) > 1 else ""
        instruction = Instruction(start, _fold(keyword), args, first.strip())
        found.append(instruction)
        if heredocs and instruction.keyword in HEREDOC_INSTRUCTIONS:
            index = _skip_heredocs(lines, index, args, found, start)
    return found


def _skip_heredocs(lines: list[str], index: int, args: str, found: list[Instruction], start: int) -> int:
    """Past the bodies of the heredocs `args` opens (BuildKit's reading). A heredoc named by more than a
    plain word is refused: two lexers could disagree on where its body ends."""
    for word in words(args):
        match = HEREDOC_WORD.match(word)
        if not match:
            continue
        name, chomp = match.group(3), match.group(2) == "-"
        if len(name) >= 2 and name[0] == name[-1] and name[0] in "'\"":
            name = name[1:-1]
        if not HEREDOC_NAME.fullmatch(name):
            found.append(Instruction(start, "<heredoc>", name, word))
            continue
        for end in range(index, len(lines)):
            body = lines[end].lstrip("\t") if chomp else lines[end]
            if body.rstrip("\r\n") == name:
                index = end + 1
                break
    return index


def _fold(keyword: str) -> str:
    """The keyword in lower case; one spelled with other letters that a builder could lower-case to an
    instruction (Go maps the Kelvin sign to k) is marked `!<instruction>`."""
    if keyword.isascii():
        return keyword.lower()
    folded = "".join(c for c in unicodedata.normalize("NFKD", keyword.lower()) if c.isascii())
    return f"!{folded}" if folded in INSTRUCTIONS else ""


def words(args: str) -> list[str]:
    """Whitespace-separated words as written, a quoted part (with its quotes) never split."""
    words, current, quote, i = [], "", None, 0
    while i < len(args):
        char = args[i]
        if quote is None and char in " \t":
            if current:
                words.append(current)
            current = ""
        else:
            current += char
            if char == "\\" and i + 1 < len(args):
                current += args[i + 1]
                i += 1
            elif quote is None and char in "'\"":
                quote = char
            elif char == quote:
                quote = None
        i += 1
    return [*words, current] if current else words


def quote(line: str, limit: int = 120) -> str:
    line = line.strip()
    return line if len(line) <= limit else line[:limit] + "..."
