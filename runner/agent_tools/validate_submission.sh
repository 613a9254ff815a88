#!/bin/bash
# Ask the sandbox's submission checker whether a file is a valid submission (its format only; no score).
# Usage: bash /home/validate_submission.sh /home/submission/submission.csv
if [ -z "$1" ]; then
    echo "Usage: $0 <submission_file>"
    exit 1
fi
if [ ! -f "$1" ]; then
    echo "File $1 does not exist."
    exit 1
fi
curl -sS -X POST -F "file=@$1" "${VALIDATE_URL:-http://localhost:5000/validate}"
