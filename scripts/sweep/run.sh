#!/usr/bin/env bash
# run.sh DATA [CONFIGS] [PARALLEL]: train and score every recipe of CONFIGS
# (default configs.txt beside this script; one per line: a name and a JSON
# object of sweep.py's settings, no spaces in it) with sweep.py, PARALLEL
# (default 8) at a time, on a GPU machine with a CUDA PyTorch and sacreBLEU.
# DATA is what ids wrote, with the validation references as val.en:
#
#   go run ./scripts/sweep/ids ../shared/data/multi30k sweep-data 8000 5000 12000
#   zcat ../shared/data/multi30k/val.en.gz > sweep-data/val.en
#
# Each finished recipe adds a line of JSON to results.jsonl in the current
# folder; the translations go to hyp/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
data=${1:?usage: run.sh DATA [CONFIGS] [PARALLEL]}
configs=${2:-$here/configs.txt}
mkdir -p hyp
export SWEEP="$here/sweep.py" DATA="$data"
xargs -P "${3:-8}" -d '\n' -n 1 bash -c 'set -- $0; python3 "$SWEEP" "$DATA" hyp "$1" "$2" >> results.jsonl' < "$configs"
