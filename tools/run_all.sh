#!/usr/bin/env bash
# The project's whole test suite (the README's test command):
#   1. prism_nb/ is exactly what nbdev_export produces from nbs/;
#   2. notebooks are committed clean (nbdev_clean changes nothing; papermill's `parameters` tags kept);
#   3. README.md is what nbs/index.ipynb renders to; the exported code passes ruff (tools/lint.py);
#   4. every notebook runs top to bottom with its inline tests (nbdev_test);
#   5. pytest: end-to-end papermill runs, data checks, determinism, bad input, the committed outputs of paper.ipynb
#      (re-executed) and of the library notebooks (show_doc fresh; no error, stderr or machine path);
#   with PRISM_DOCS_CHECK=1 (set by .ci/run), before 4: the docs site built into _docs/ (Jupyter Book) and checked in
#   headless Chromium (images load, links and their anchors within the site resolve, no console errors, math typeset,
#   search finds; needs Debian's chromium, chromium-driver).
# Before all of it, a notebook in nbs/ that is not the project's (JupyterLab's File > New saves Untitled.ipynb there)
# is named in one line, with what to do. It prints as it goes: each notebook as nbdev_test starts and ends it (with its
# seconds), each test as pytest runs it, and how long each step took (about 40 minutes in all on a loaded 2-core machine).
set -euo pipefail
cd "$(dirname "$0")/.."
python -c 'import sys; sys.path.insert(0, "tests"); import conftest as c; n = c.scratch_notebooks(); sys.exit(c.scratch_message(n) if n else 0)'
if [ -z "${PRISM_DATA:-}" ] && [ -d ../shared/data ]; then export PRISM_DATA="$(cd ../shared/data && pwd)"; fi
export MPLBACKEND=Agg
fail=0
snapshot() { git status --porcelain --untracked-files=all -- prism_nb nbs README.md | sort; git diff -- prism_nb nbs README.md | sha1sum; }
before=$(snapshot)
nbdev_export
if [ "$(snapshot)" != "$before" ]; then echo "FAIL: prism_nb/ differs from what nbdev_export produces:"; git status --short -- prism_nb; fail=1; fi
before=$(snapshot)
nbdev_clean  # what nbdev's Jupyter hook does on every save (jupyter_hooks = True): a JupyterLab save leaves them as they are
if [ "$(snapshot)" != "$before" ]; then echo "FAIL: notebooks are not clean (run nbdev_clean):"; git status --short -- nbs; fail=1; fi
before=$(snapshot)
python tools/render_readme.py
if [ "$(snapshot)" != "$before" ]; then echo "FAIL: README.md is not what nbs/index.ipynb renders (run python tools/render_readme.py)"; fail=1; fi
python tools/lint.py || fail=1  # ruff on the exported code: lines <= 100, no `;` joins, no undefined names
[ $fail -eq 0 ] || exit 1
if [ "${PRISM_DOCS_CHECK:-0}" = 1 ]; then
  echo "== docs: build _docs/ and check it in headless Chromium"
  start_docs=$(date +%s)
  bash tools/build_docs.sh
  python tools/check_docs.py
  echo "docs took $(( $(date +%s) - start_docs )) s"
fi
# nbdev_test's "- Completed <notebook>" line carries no time (its --timing lists them all only at the end): each gets
# the seconds since that notebook's "Starting" line, as it is printed
with_seconds() {
  local -A started
  local line
  while IFS= read -r line; do
    case "$line" in
      'Starting '*) started[${line#Starting }]=$SECONDS ;;
      '- Completed '*) line+=" in $(( SECONDS - ${started[${line#- Completed }]:-$SECONDS} )) s" ;;
    esac
    printf '%s\n' "$line"
  done
}
# unbuffered: the two workers' lines reach the pipe as they are printed; "$@": more nbdev_test options (--path in a test)
notebook_tests() {
  PYTHONUNBUFFERED=1 nbdev_test --n_workers 2 --do_print --skip_file_re '^run_|^paper|^results' "$@" 2>&1 | with_seconds
}
echo "== nbdev_test: every notebook's inline tests, two at a time, each named as it starts and as it ends, with its seconds"
start=$(date +%s)
notebook_tests
echo "nbdev_test took $(( $(date +%s) - start )) s"
echo "== pytest: one line per test as it runs, the 15 slowest at the end"
start=$(date +%s)
python -m pytest -v --durations=15 tests "$@"
echo "pytest took $(( $(date +%s) - start )) s"
