#!/usr/bin/env bash
# Lessons compute, views draw (DESIGN.md): a view takes its lesson's parameters as the lesson read them, typed (in the
# step data, or in the run's theory and measured values), never by a parameter's key, so a renamed key or a changed
# reading cannot leave a view drawing another value than the lesson used. The views named below still read a run's
# parameters by key: their runs' typed values do not yet carry what they print (matmul's m x n x k), or their lessons
# are not typed lessons yet (allreduce, flash). The list may only shrink.
set -u
root=${1:?usage: views_read_typed.sh PROJECT_ROOT}
cd "$root" || exit 1
still_by_key='app/views/(matmul|allreduce|flash)_view\.cpp'
hits=$(grep -rnE '\bparams\.(at|find|count|text|integer|real|list)\(' app/views --include='*.cpp' --include='*.h' |
  grep -vE "^($still_by_key):" || true)
if [[ -n $hits ]]; then
  echo "views must not read a parameter by its key (take the typed value from the lesson's step data or the run):"
  echo "$hits"
  exit 1
fi
echo "views read no parameter by its key (beyond the listed runs' sizes)"
