"""What an agent's Dockerfile may ask of the building host: refused before anything is built.

The build's RUN steps get the build network (MEDALBOARD_AGENTS_BUILD_NETWORK, `none` by default), but
the Docker daemon itself does more on a build's behalf, with the host's network and disks: it fetches
`ADD <url>` sources, pulls any image a FROM, `COPY --from` or `RUN --mount from=` names that it does
not have, and BuildKit hands RUN steps the host's SSH agent, secrets and shared caches. An image's
ONBUILD triggers run in the next build of it (ours), and a VOLUME becomes a folder on the host's disk
for every container of it. So a Dockerfile is refused, naming its line, if it has:

- ADD with a URL or git source, or a source holding a variable (which could expand to one);
- FROM, `COPY --from` or `RUN --mount from=` of anything but an earlier stage of the same file,
  `scratch` or an allowed base (mlebench-env, the site's agent image), or naming one by a variable;
- RUN flags other than `--mount` of type bind (the build context or an earlier stage) or tmpfs, and
  `--network=none`; flags of FROM; ADD/COPY flags other than those that only shape the copy;
- ONBUILD, VOLUME, a `medalboard.*` label (the site's), or a `# syntax=` directive (a frontend image).

The file is read as both builders read it: the daemon's classic builder knows no heredocs (their
lines are instructions to it), BuildKit does; a problem in either reading refuses. Parser directives
(`# escape=` and the rest), line continuations, comments inside them, and keywords in any case are
read as the builders read them; a keyword spelled with anything but ASCII letters is refused.
"""

from __future__ import annotations

import csv
import json
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

MAX_BYTES = 1 << 20
# Go's whitespace (unicode.IsSpace), which the builders trim: Python's str.strip() also trims \x1c-\x1f,
# and a line Python thought empty, where Go did not, would end a continuation in one reading only.
GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
           "\u2028\u2029\u202f\u205f\u3000"
DIRECTIVE = re.compile(r"^#[\t\n\f\r ]*([a-zA-Z][a-zA-Z0-9]*)[\t\n\f\r ]*=[\t\n\f\r ]*(.+?)[\t\n\f\r ]*$")
KEYWORD_SPLIT = re.compile(r"[\t\v\f\r ]+")  # Go's reWhitespace: what separates an instruction's keyword
HEREDOC_WORD = re.compile(r"^(\d*)<<(-?)(.+)$")
HEREDOC_NAME = re.compile(r"[A-Za-z0-9_.-]+")
URL = re.compile(r"[a-z][a-z0-9+.-]*://|^[^/\s]+@[^/\s]+:", re.IGNORECASE)
COPY_FLAGS = {"chown", "chmod", "link", "parents", "exclude"}  # flags that only shape what is copied
RUN_NETWORKS = {"none"}
SAFE_MOUNTS = {"bind", "tmpfs"}
HEREDOC_INSTRUCTIONS = {"run", "copy", "add"}
INSTRUCTIONS = {"add", "arg", "cmd", "copy", "entrypoint", "env", "expose", "from", "healthcheck", "label",
                "maintainer", "onbuild", "run", "shell", "stopsignal", "user", "volume", "workdir"}


class DockerfileRefused(Exception):
    """The Dockerfile asks the building host for something it never gives; the message names the lines."""


@dataclass(frozen=True)
class Instruction:
    line: int  # where it starts, from 1
    keyword: str  # lower case
    args: str  # continuation lines joined, escapes at their ends removed
    text: str  # its first line as written, to quote in a message


def check_file(path: Path | str, *, where: str = "", allowed_bases: set[str] | None = None) -> str:
    """The Dockerfile's text, if nothing in it is refused; DockerfileRefused names every refused line."""
    path = Path(path)
    data = path.read_bytes()
    if len(data) > MAX_BYTES:
        raise DockerfileRefused(f"{where or path}: larger than {MAX_BYTES} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise DockerfileRefused(f"{where or path}: not UTF-8 text") from None
    problems = check(text, allowed_bases=allowed_bases)
    if problems:
        raise DockerfileRefused(f"{where or path}: refused, the build would reach outside its sandbox:\n"
                                + "\n".join(problems))
    return text


def check(text: str, *, allowed_bases: set[str] | None = None) -> list[str]:
    """Every refused line of `text`, as `line N: <line>: why`, in order (empty: the file may be built)."""
    allowed = default_bases() if allowed_bases is None else allowed_bases
    lines = _lines(text)
    escape, directive_lines, problems = _directives(lines)
    found: dict[tuple[int, str], None] = dict.fromkeys(problems)
    for heredocs in (False, True):
        for instruction_problem in _check_instructions(_instructions(lines, escape, directive_lines, heredocs),
                                                       allowed):
            found.setdefault(instruction_problem)
    return [f"line {line}: {why}" for line, why in sorted(found)]


def external_images(text: str) -> set[str]:
    """The allowed bases `text` (already checked) builds on: each must exist locally, or it would be pulled."""
    lines = _lines(text)
    escape, directive_lines, _ = _directives(lines)
    images: set[str] = set()
    for heredocs in (False, True):
        stages: list[str] = []
        for ins in _instructions(lines, escape, directive_lines, heredocs):
            for ref in _image_refs(ins, stages):
                if not _is_stage(ref, stages) and ref != "scratch":
                    images.add(ref)
            if ins.keyword == "from":
                stages.append(_stage_name(ins))
    return images


def default_bases() -> set[str]:
    from django.conf import settings

    from runner.agents.base_image import TAG

    return {TAG, settings.MEDALBOARD_AGENT_IMAGE}


# --- reading ------------------------------------------------------------------------------------


def _lines(text: str) -> list[str]:
    """Lines as Go's scanner cuts them: at \\n only, one \\r before it dropped (str.splitlines also
    cuts at \\v, \\f, \\x1c-\\x1e, \\x85 and \\u2028, where a builder sees one line)."""
    return [line.removesuffix("\r") for line in text.removeprefix("\ufeff").split("\n")]


def _directives(lines: list[str]) -> tuple[str, int, list[tuple[int, str]]]:
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
            problems.append((number, f"{_quote(line)}: a parser directive spelled with a form feed or carriage "
                                     "return"))
        if name in seen:
            problems.append((number, f"{_quote(line)}: the {name} directive is given twice"))
        seen.add(name)
        if name == "escape":
            if value not in ("\\", "`"):
                problems.append((number, f"{_quote(line)}: the escape character must be \\ or `"))
            else:
                escape = value
        elif name == "syntax":
            problems.append((number, f"{_quote(line)}: a syntax directive names a frontend image to pull; "
                                     "the build uses the daemon's own"))
    return escape, count, problems


def _instructions(lines: list[str], escape: str, skip: int, heredocs: bool) -> list[Instruction]:
    continued = re.compile(re.escape(escape) + r"[ \t]*$")
    found: list[Instruction] = []
    index = skip
    while index < len(lines):
        first = lines[index]
        start, index = index + 1, index + 1
        line = first.lstrip(GO_SPACE)
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
    for word in _words(args):
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


def _words(args: str) -> list[str]:
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


# --- checking -----------------------------------------------------------------------------------


def _check_instructions(instructions: list[Instruction], allowed: set[str]) -> list[tuple[int, str]]:
    problems: list[tuple[int, str]] = []
    stages: list[str] = []
    for ins in instructions:
        for why in _problems(ins, stages, allowed):
            problems.append((ins.line, f"{_quote(ins.text)}: {why}"))
        if ins.keyword == "from":
            stages.append(_stage_name(ins))
    return problems


def _problems(ins: Instruction, stages: list[str], allowed: set[str]) -> list[str]:
    keyword = ins.keyword
    if keyword.startswith("!"):
        return [f"{keyword[1:].upper()} spelled with letters other than ASCII: refused"]
    if keyword == "<heredoc>":
        return [f"a heredoc named {ins.args!r}: name a heredoc with a plain word"]
    if keyword == "onbuild":
        return ["ONBUILD runs its instruction in a later build of this image (the site's): refused"]
    if keyword == "volume":
        return ["VOLUME makes a folder on the host's disk for every container of the image: refused "
                "(write under /home, which is the sandbox's)"]
    checks = {"from": _check_from, "copy": _check_copy, "add": _check_add, "run": _check_run,
              "label": _check_label}
    return checks[keyword](ins, stages, allowed) if keyword in checks else []


def _check_from(ins: Instruction, stages: list[str], allowed: set[str]) -> list[str]:
    flags, rest = _flags(ins.args)
    problems = [f"FROM --{name} is refused (an image is only ever taken as it is here)" for name, _ in flags]
    if not rest:
        return [*problems, "FROM names no image"]
    return [*problems, *_check_image(rest[0], stages, allowed, "FROM")]


def _check_copy(ins: Instruction, stages: list[str], allowed: set[str]) -> list[str]:
    problems = []
    for name, value in _flags(ins.args)[0]:
        if name == "from":
            problems += _check_image(value or "", stages, allowed, "COPY --from")
        elif name not in COPY_FLAGS:
            problems.append(f"COPY --{name} is refused")
    return problems


def _check_add(ins: Instruction, stages: list[str], allowed: set[str]) -> list[str]:
    flags, rest = _flags(ins.args)
    problems = [f"ADD --{name} is refused" for name, _ in flags if name not in COPY_FLAGS]
    sources = _json_list(ins.args)
    if sources is None:
        sources = rest
    for source in sources[:-1]:
        plain = re.sub(r"[\"'\\`]", "", source)
        if URL.search(plain) or plain.lower().startswith("git@"):
            problems.append(f"ADD of {source!r}: the daemon would fetch it from the network; put the file in "
                            "the agent's folder and COPY it")
        elif "$" in plain:
            problems.append(f"ADD of {source!r}: a variable in an ADD source could be a URL; use COPY")
    return problems


def _check_run(ins: Instruction, stages: list[str], allowed: set[str]) -> list[str]:
    problems = []
    for name, value in _flags(ins.args)[0]:
        if name == "mount":
            problems += _check_mount(value or "", stages, allowed)
        elif name == "network" and (value or "").lower() in RUN_NETWORKS:
            continue
        else:
            problems.append(f"RUN --{name}{'=' + value if value else ''} is refused (the build network is "
                            "the site's setting)")
    return problems


def _check_mount(value: str, stages: list[str], allowed: set[str]) -> list[str]:
    try:
        fields = next(csv.reader([value]))
    except (csv.Error, StopIteration):
        return [f"RUN --mount={value}: cannot be read"]
    options = {}
    for item in fields:
        key, _, val = item.partition("=")
        options[key.strip().lower()] = val.strip()
    kind = options.get("type", "bind").lower()
    if kind not in SAFE_MOUNTS:
        return [f"RUN --mount=type={kind} reaches the building host (its SSH agent, secrets or shared "
                "caches): refused"]
    if "from" in options:
        return _check_image(options["from"], stages, allowed, "RUN --mount from")
    return []


def _check_label(ins: Instruction, stages: list[str], allowed: set[str]) -> list[str]:
    for word in _words(ins.args):
        key = re.sub(r"[\"'\\`]", "", word.partition("=")[0]).lower()
        if key.startswith("medalboard.") or "$" in key:
            return [f"the label {key!r}: labels named medalboard.* (or by a variable) are the site's"]
    return []


def _check_image(ref: str, stages: list[str], allowed: set[str], what: str) -> list[str]:
    ref = _unquote(ref)
    if "$" in ref:
        return [f"{what} {ref}: an image named by a variable cannot be checked"]
    if _is_stage(ref, stages) or ref == "scratch" or _with_latest(ref) in {_with_latest(a) for a in allowed}:
        return []
    return [f"{what} {ref}: not an earlier stage of this Dockerfile nor an allowed base "
            f"({', '.join(sorted(allowed))}); the build never pulls an image"]


def _image_refs(ins: Instruction, stages: list[str]) -> list[str]:
    flags, rest = _flags(ins.args)
    if ins.keyword == "from":
        return [_unquote(rest[0])] if rest else []
    refs = [_unquote(v or "") for name, v in flags if ins.keyword == "copy" and name == "from"]
    for name, value in flags if ins.keyword == "run" else []:
        if name == "mount":
            options = dict(item.partition("=")[::2] for item in (value or "").split(","))
            refs += [_unquote(options["from"])] if "from" in options else []
    return refs


def _stage_name(ins: Instruction) -> str:
    rest = _flags(ins.args)[1]
    return rest[2].lower() if len(rest) >= 3 and rest[1].lower() == "as" else ""


def _is_stage(ref: str, stages: list[str]) -> bool:
    if ref.isdigit():
        return int(ref) < len(stages)
    return bool(ref) and ref.lower() in stages


def _with_latest(ref: str) -> str:
    return ref if ":" in ref.rsplit("/", 1)[-1] else f"{ref}:latest"


def _flags(args: str) -> tuple[list[tuple[str, str | None]], list[str]]:
    """Leading `--name[=value]` words (names in lower case) and the words after them."""
    words = _words(args)
    flags = []
    while words and words[0].startswith("--"):
        name, sep, value = words.pop(0)[2:].partition("=")
        flags.append((name.lower(), _unquote(value) if sep else None))
    return flags, words


def _json_list(args: str) -> list[str] | None:
    words = _flags(args)[1]
    text = " ".join(words)
    if not text.startswith("["):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, list) and all(isinstance(v, str) for v in value) else None


def _unquote(word: str) -> str:
    if len(word) >= 2 and word[0] == word[-1] and word[0] in "'\"":
        return word[1:-1]
    return word


def _quote(line: str, limit: int = 120) -> str:
    line = line.strip()
    return line if len(line) <= limit else line[:limit] + "..."
