#!/usr/bin/env bash
# Build the docs site into _docs/ from nbs/ (nothing is executed but what show_doc needs; paper.ipynb and
# index.ipynb show their committed outputs). See tools/build_docs.py for what runs and why.
#   - with Quarto on PATH (or in the active virtual environment's bin/): nbdev_docs, nbdev's own command;
#   - without it: nbdev's notebook processing, pages rendered in Python (Quarto is not installable offline:
#     the quarto-cli package on PyPI downloads Quarto from GitHub while it installs).
# README.md stays what tools/render_readme.py renders (nbdev_docs would render it again with Quarto).
# View: python -m http.server -d _docs 8000 (http://127.0.0.1:8000/); check in Chromium: python tools/check_docs.py
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$(dirname "$(command -v python)"):$PATH"
if [ "${PRISM_DOCS_RENDERER:-}" != python ] && command -v quarto >/dev/null 2>&1; then
  touch README.md  # newer than nbs/index.ipynb, so nbdev_docs leaves it alone
  python tools/build_docs.py --quarto "$@"
  python tools/render_readme.py
else
  python tools/build_docs.py "$@"
fi
