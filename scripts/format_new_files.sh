#!/usr/bin/env bash
# The formatter's rule: a Python file added since FORMAT_SINCE is kept `ruff format`ted, in the style
# of [tool.ruff.format] in pyproject.toml; older files keep their hand-aligned continuation lines until
# someone reformats one on purpose (in a commit of its own). New means added in a commit since then,
# staged as added, or untracked. `--check` only reports (make lint, CI); without it the files are
# formatted in place (make format, the pre-commit hook).
set -euo pipefail
cd "$(dirname "$0")/.."
FORMAT_SINCE=2026-12-06T06:30:00Z
RUFF=${RUFF:-.venv/bin/ruff}

if [ "$(git rev-parse --is-shallow-repository)" = true ]; then
  echo "a shallow clone cannot tell which files are new: git fetch --unshallow first" >&2
  exit 2
fi
new=()
while IFS= read -r path; do
  [ -f "$path" ] && new+=("$path")
done < <({
  git log --since="$FORMAT_SINCE" --diff-filter=A --name-only --format= -- '*.py'
  git diff --cached --name-only --diff-filter=A -- '*.py'
  git ls-files --others --exclude-standard -- '*.py'
} | sort -u)

if [ ${#new[@]} -eq 0 ]; then
  echo "no Python file added since $FORMAT_SINCE"
  exit 0
fi
if [ "${1:-}" = --check ]; then
  exec "$RUFF" format --check --force-exclude "${new[@]}"
fi
exec "$RUFF" format --force-exclude "${new[@]}"
