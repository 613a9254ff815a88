#!/bin/bash
# AIDE in MLE-bench's sandbox: instructions for its prompt, its workspace wired to the kept folders,
# then aideml under the time limit. Arguments are aideml's omegaconf key=value pairs (config.yaml).
set -x

cd ${AGENT_DIR}
eval "$(conda shell.bash hook)"
conda activate agent

HARDWARE="a CPU"
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi --query-gpu=name --format=csv,noheader >/dev/null 2>&1; then
  HARDWARE=$(nvidia-smi --query-gpu=name --format=csv,noheader | sort | uniq -c | awk '{$1=$1 " x"; print}' | paste -sd ', ' -)
fi
export HARDWARE

# The job's limit wins over the variant's cap.
LIMIT=${TIME_LIMIT_SECS:-86400}
if [ -n "${TIME_LIMIT_SECONDS}" ] && [ "${TIME_LIMIT_SECONDS}" -lt "${LIMIT}" ]; then
  LIMIT=${TIME_LIMIT_SECONDS}
fi
human() { echo "$(($1 / 3600)) hours $((($1 % 3600) / 60)) minutes"; }
export TIME_LIMIT=$(human ${LIMIT})
STEP_TIMEOUT=32400
for arg in "$@"; do
  case ${arg} in exec.timeout=*) STEP_TIMEOUT=${arg#exec.timeout=} ;; esac
done
export STEP_TIMEOUT=$(human ${STEP_TIMEOUT})

# The prompt: the environment's instructions with paths relative to AIDE's workspace, AIDE's notes,
# then the competition's description.
{
  sed 's|/home/||g' /home/instructions.txt
  echo
  envsubst < ${AGENT_DIR}/additional_notes.txt
  printf "\nCOMPETITION INSTRUCTIONS\n------\n\n"
  cat /home/data/description.md
} > ${AGENT_DIR}/full_instructions.txt

# launch.py: aideml, its journal in LOGS_DIR, its workspace's submission/ being SUBMISSION_DIR.
timeout --signal=TERM ${LIMIT} python ${AGENT_DIR}/launch.py data_dir=/home/data \
  desc_file=${AGENT_DIR}/full_instructions.txt exp_name=exp \
  log_dir=${AGENT_DIR}/logs workspace_dir=${AGENT_DIR}/workspaces "$@"
status=$?
[ ${status} -eq 124 ] && echo "AIDE stopped at the time limit (${TIME_LIMIT})"

# AIDE's own prompt also asks for ./working/submission.csv: take it when nothing else was written.
for written in ${AGENT_DIR}/workspaces/*/working/submission.csv; do
  [ -f ${SUBMISSION_DIR}/submission.csv ] || { [ -f "${written}" ] && cp "${written}" ${SUBMISSION_DIR}/submission.csv; }
done
[ -f ${LOGS_DIR}/best_solution.py ] && cp ${LOGS_DIR}/best_solution.py ${CODE_DIR}/solution.py
bash /home/validate_submission.sh ${SUBMISSION_DIR}/submission.csv
exit ${status}
