#!/bin/bash
set -x

eval "$(conda shell.bash hook)"
conda activate agent

cd ${AGENT_DIR}
python main.py "$@"

# The environment's checker: format only, never a score.
bash /home/validate_submission.sh ${SUBMISSION_DIR}/submission.csv
