#!/usr/bin/env bash
# The README's lesson list names every exercise of every lesson (`dlsys-lab exercises LESSON` lists them).
set -u
bin=$1 readme=$2
fail=0
for lesson in $("$bin" list | awk '{print $1}'); do
  row=$(grep -F "| \`$lesson\` |" "$readme")
  ids=$("$bin" exercises "$lesson" | sed -n 's/^\[\([a-z0-9_]*\)\].*/\1/p')
  if [[ $(wc -w <<<"$ids") -lt 3 ]]; then echo "FAIL: $lesson lists fewer than 3 exercises"; fail=1; fi
  for id in $ids; do
    if [[ "$row" != *"\`$id\`"* ]]; then echo "FAIL: README's row of $lesson does not name its exercise $id"; fail=1; fi
  done
done
[[ $fail -eq 0 ]] && echo "the README names every lesson's exercises"
exit $fail
