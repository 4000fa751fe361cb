#!/usr/bin/env bash
# Lessons compute, views draw (DESIGN.md): a view takes its lesson's parameters as the lesson read them, typed (in the
# step data, in the run's theory and measured values, or the run's parameters through run_params), never by a
# parameter's key, so a renamed key or a changed reading cannot leave a view drawing another value than the lesson used.
set -u
root=${1:?usage: views_read_typed.sh PROJECT_ROOT}
cd "$root" || exit 1
hits=$(grep -rnE '\bparams\.(at|find|count|text|integer|real|list)\(' app/views --include='*.cpp' --include='*.h' || true)
if [[ -n $hits ]]; then
  echo "views must not read a parameter by its key (take the typed value from the lesson's step data or the run):"
  echo "$hits"
  exit 1
fi
echo "views read no parameter by its key"
