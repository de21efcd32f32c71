#!/usr/bin/env bash
# Build the docs site into _docs/ from nbs/, from the notebooks' committed outputs:
#   - with Quarto on PATH (or in the active virtual environment's bin/): nbdev_docs, nbdev's own command (its config:
#     nbs/_quarto.yml, nbs/nbdev.yml, nbs/sidebar.yml), run by tools/build_docs.py --quarto with one rule changed
#     (see there); README.md stays what tools/render_readme.py renders;
#   - without it (Quarto is not installable from PyPI offline: the quarto-cli package downloads Quarto from GitHub
#     while it installs): Jupyter Book 1 (Sphinx + myst-nb), nothing executed; see tools/build_docs.py.
# PRISM_DOCS_ENGINE=jupyter-book takes the second way even where Quarto is installed.
# View: python -m http.server -d _docs 8000 (http://127.0.0.1:8000/); check in Chromium: python tools/check_docs.py
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$(dirname "$(command -v python)"):$PATH"
if [ "${PRISM_DOCS_ENGINE:-}" != jupyter-book ] && command -v quarto >/dev/null 2>&1; then
  touch README.md  # newer than nbs/index.ipynb, so nbdev_docs leaves it alone
  python tools/build_docs.py --quarto
  python tools/render_readme.py
else
  python tools/build_docs.py "$@"
fi
