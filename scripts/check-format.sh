#!/usr/bin/env bash
# Fails when a C file of the project is not formatted as .clang-format says (CI runs it).
# `make format` rewrites them. The files: host/, registry/, and the C of spec/ and bench/.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:---check}
mapfile -t files < <(git ls-files 'host/*.[ch]' 'registry/*.[ch]' 'spec/c/*.[ch]' 'spec/fuzz/*.c' \
                                  'spec/tools/*.c' 'bench/*.[ch]')
if [ "$mode" = "--fix" ]; then
  clang-format -i "${files[@]}"
  exit 0
fi
clang-format --dry-run --Werror "${files[@]}"
echo "check-format: ${#files[@]} files formatted as .clang-format says"
