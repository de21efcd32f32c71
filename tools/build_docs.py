"""Build the docs site into _docs/ with Jupyter Book 1 (Sphinx + myst-nb) from the notebooks' committed outputs:
nothing is executed (`execute_notebooks: off` in tools/docs/_config.yml). tools/build_docs.sh runs this where
Quarto is not installed (and nbdev_docs where it is).

Jupyter Book reads a temporary copy of nbs/ prepared the way nbdev prepares notebooks for Quarto, in text alone:
- each page is named as nbdev names it (`02_sampling.ipynb` -> `sampling.html`), so nbdev's doc links, which point
  at `sampling.html#budget_steps`, and the Quarto site's addresses work here too;
- the cells nbdev leaves out of the docs are left out (`#| hide`, `export`, `exporti`, `default_exp`,
  `include: false`); `echo: false` and `output: false` become myst-nb's `remove-input` and `remove-output`;
- a `show_doc` cell becomes the Markdown it displays (what nbdev's `output: asis` does), without its leading `---`
  (docutils refuses a section that begins with a transition); an exported name with no `show_doc` cell gets what
  nbdev would show_doc without running anything: a heading and the definition's source;
- each of those API entries gets nbdev's anchor (`budget_steps`, `arm.update`) as its id, which Sphinx's own ids
  (`budget-steps`) cannot spell: the prepared Markdown marks it (`<div id="budget_steps"></div>` before the heading)
  and `nbdev_anchors` below, loaded by Sphinx, moves it onto the heading's section;
- backticked names become nbdev's doc links (`NbdevLookup.linkify`), made relative for this site (a method with no
  entry of its own links to its class);
- links written relative to nbs/, as JupyterLab and the README need them (`../tables/harc.md`,
  `../nbs/05_prism.ipynb`, `![...](../figures/x.png)`), become a notebook's page, an image copied into the site, or
  any other file of the repository on its host (`repo_links`);
- the table of contents comes from nbs/sidebar.yml, which must list every notebook once;
- tools/docs/*.css (the site's style sheet: long code lines wrap, wide tables scroll in their own box) goes into
  the book's `_static/`, where Jupyter Book adds it to every page.
Sphinx's warnings are shown and counted; the build fails on any (the site has none).

With --quarto (tools/build_docs.sh, where Quarto is installed): nbdev_docs itself, in this process, so that one rule
of nbdev's can be changed: to render show_doc, nbdev runs exported cells, show_doc cells and any cell with an import,
including a cell that mixes imports with other code (its FAQ warns about them); the notebooks' inline tests have such
cells that depend on earlier test cells and fail when run alone, so here only cells made of imports alone run.

Usage: python tools/build_docs.py [--keep DIR] [--quarto]   (--keep: prepare the book in DIR and keep it, to look at)"""
import argparse, ast, copy, json, re, shutil, subprocess, sys, tempfile, time
from pathlib import Path

import yaml
from nbdev.config import get_config
from nbdev.doclinks import NbdevLookup, _nbpath2html
from nbdev.showdoc import showdoc_nm

ROOT = Path(__file__).resolve().parent.parent
NBS, DOCS, CONFIG = ROOT / 'nbs', ROOT / '_docs', Path(__file__).resolve().parent / 'docs' / '_config.yml'
cfg = get_config(path=ROOT)
SITE_URL = cfg.doc_host.rstrip('/') + '/' + cfg.doc_baseurl.strip('/') + '/'  # where nbdev's doc links point
REPO_URL = f"{cfg.git_url.rstrip('/')}/blob/{cfg.branch}/"  # where a link to a repository file points

def page(nb_name: str) -> str: return _nbpath2html(Path(nb_name)).stem  # 02_sampling.ipynb -> sampling
def text(x) -> str: return ''.join(x) if isinstance(x, list) else (x or '')

def sidebar() -> list:
    "The notebooks in nbs/sidebar.yml in order, as (section or None, notebook); each notebook must be listed once."
    entries = []
    def walk(items, section):
        for it in items:
            if isinstance(it, str): entries.append((section, it))
            else: walk(it.get('contents', []), it.get('section'))
    walk(yaml.safe_load((NBS / 'sidebar.yml').read_text())['website']['sidebar']['contents'], None)
    names, on_disk = [n for _, n in entries], sorted(p.name for p in NBS.glob('*.ipynb'))
    missing, extra, twice = set(on_disk) - set(names), set(names) - set(on_disk), {n for n in names if names.count(n) > 1}
    if missing or extra or twice or names[0] != 'index.ipynb':
        sys.exit(f'nbs/sidebar.yml must list each notebook once, index.ipynb first: missing {sorted(missing)}, '
                 f'not in nbs/ {sorted(extra)}, twice {sorted(twice)}')
    return entries

def toc(entries) -> dict:
    "Jupyter Book's _toc.yml: index.ipynb the root, each sidebar section a captioned part, in the sidebar's order."
    parts = []
    for section, nb in entries[1:]:
        if not parts or parts[-1].get('caption') != section:
            parts.append({'caption': section, 'chapters': []} if section else {'chapters': []})
        parts[-1]['chapters'].append({'file': page(nb)})
    return {'format': 'jb-book', 'root': page(entries[0][1]), 'parts': parts}

# ---- cells
_re_dir = re.compile(r'^\s*#\|\s?(.*?)\s*$')
def directives(src: str):
    "nbdev/Quarto `#|` lines at the top of a cell as {key: value}, and the source without them."
    lines, d = src.splitlines(), {}
    while lines and _re_dir.match(lines[0]):
        key, _, value = _re_dir.match(lines.pop(0)).group(1).partition(' ')
        d[key.rstrip(':')] = value.strip().strip('"\'').lower()
    return d, '\n'.join(lines).strip('\n')

def md_cell(source: str, id: str) -> dict: return {'cell_type': 'markdown', 'id': id, 'metadata': {}, 'source': source}

def anchor(name: str) -> str: return f'<div id="{name.lower()}"></div>\n\n'  # nbdev's anchor: the name, lower case

_re_source_link = re.compile(r'^\[source\]\(([^)\s]+)\)\{[^}]*\}\s*$', re.M)
_re_heading = re.compile(r'^#{1,6}\s+(.+?)\s*$', re.M)
def show_doc_markdown(md: str) -> tuple:
    "A show_doc output as a Markdown cell: its anchor first, no leading `---`, the source link as HTML."
    md = re.sub(r'^\s*---\s*\n', '', md)
    md = _re_source_link.sub(lambda m: f'<a class="source-link" href="{m.group(1)}" target="_blank" '
                             'style="float:right; font-size:smaller">source</a>', md)
    h = _re_heading.search(md)
    name = re.sub(r'[`\\]', '', h.group(1)) if h else None
    return (anchor(name) + md if name else md), name

def definitions(src: str) -> list:
    "The public functions and classes a cell defines, as (name show_doc gives them, source with decorators)."
    try: tree = ast.parse(src)
    except SyntaxError: return []
    lines, res = src.splitlines(), []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and not node.name.startswith('_'):
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            res.append((showdoc_nm(node), '\n'.join(lines[start - 1:node.end_lineno])))
    return res

def is_show_doc(src: str) -> bool:
    lines = [l for l in src.splitlines() if l.strip() and not l.lstrip().startswith('#')]
    return bool(lines) and all(re.match(r'^show_doc\(.*\)\s*$', l) for l in lines)

def headings(md: str) -> list:
    "Levels of the Markdown headings outside fenced code."
    levels, fence = [], False
    for l in md.splitlines():
        if l.startswith('```'): fence = not fence
        elif not fence and (m := re.match(r'^(#{1,6})\s', l)): levels.append(len(m.group(1)))
    return levels

def shift_headings(md: str, top: int) -> str:
    "Headings moved up so the first is at most level `top`: show_doc's `###` under a page title (`#`) would skip one."
    levels = headings(md)
    by = max(0, levels[0] - top) if levels else 0
    if not by: return md
    fence, out = False, []
    for l in md.splitlines():
        if l.startswith('```'): fence = not fence
        elif not fence and re.match(r'^#{1,6}\s', l): l = l[by:]
        out.append(l)
    return '\n'.join(out)

def prepare(nb: dict) -> tuple:
    "The notebook as its docs page (see the module's docstring) and the anchors of its API entries."
    shown = {show_doc_markdown(text(o.get('data', {}).get('text/markdown')))[1] for c in nb['cells']
             if c['cell_type'] == 'code' and is_show_doc(text(c['source'])) for o in c.get('outputs', [])}
    cells, anchors, level = [], set(), 1  # level: the last heading's, so an entry's heading is at most one below
    def entry(md, name, cell_id):
        nonlocal level
        md = shift_headings(md, level + 1)
        level = (headings(md) or [level])[-1]
        anchors.add(name.lower()); cells.append(md_cell(md, f'{cell_id}-{len(anchors)}'))
    for c in nb['cells']:
        cell_id = c.get('id') or f'cell{len(cells)}'
        if c['cell_type'] == 'markdown':
            cells.append(md_cell(text(c['source']), cell_id))
            level = (headings(cells[-1]['source']) or [level])[-1]
            continue
        if c['cell_type'] != 'code': continue
        d, src = directives(text(c['source']))
        if d.keys() & {'hide', 'default_exp', 'exporti'} or d.get('include') == 'false': continue
        if d.keys() & {'export', 'exports'}:
            for name, code in definitions(src):
                if name not in shown: entry(f'{anchor(name)}{"####" if "." in name else "###"} {name}\n\n```python\n{code}\n```', name, cell_id)
            if 'exports' not in d: continue
        if is_show_doc(src):
            for o in c.get('outputs', []):
                md, name = show_doc_markdown(text(o.get('data', {}).get('text/markdown')))
                if name: entry(md, name, cell_id)
            continue
        if not src and not c.get('outputs'): continue
        tags = [t for k, v, t in [('echo', 'false', 'remove-input'), ('output', 'false', 'remove-output'),
                                  ('code-fold', None, 'hide-input')] if k in d and (v is None or d[k] == v)]
        cells.append({'cell_type': 'code', 'execution_count': c.get('execution_count'), 'id': cell_id,
                      'metadata': {'tags': tags} if tags else {}, 'outputs': copy.deepcopy(c.get('outputs', [])), 'source': src})
    meta = {'kernelspec': nb['metadata'].get('kernelspec', {'name': 'python3', 'display_name': 'Python 3', 'language': 'python'}),
            'language_info': {'name': 'python', 'pygments_lexer': 'ipython3'}}
    return {'cells': cells, 'metadata': meta, 'nbformat': 4, 'nbformat_minor': 5}, anchors

# ---- nbdev's doc links, within this site
_re_site_link = re.compile(r'\]\(' + re.escape(SITE_URL) + r'([^)#\s]+)(#[^)\s]*)?\)')
def linker(anchors: dict):
    lookup = NbdevLookup()
    def local(m):
        target, frag = m.group(1), (m.group(2) or '#')[1:]
        ids = anchors.get(Path(target).stem, set())
        if frag and frag not in ids: frag = frag.split('.')[0] if frag.split('.')[0] in ids else ''  # a method: its class
        return f']({target}{"#" + frag if frag else ""})'
    return lambda md: _re_site_link.sub(local, lookup.linkify(md) or '')

_re_repo_link = re.compile(r'(!?)\[([^\]]*)\]\(\.\./([^)\s#]+)(#[^)\s]*)?\)')
def repo_links(md: str, images: set) -> str:
    """Links relative to nbs/ (`../tables/harc.md`) as this site needs them: a notebook's link goes to its page, an
    image stays relative and is added to `images` (copied into the site by `build`), any other file links to the
    repository."""
    def sub(m):
        bang, label, target, frag = m.group(1), m.group(2), m.group(3), m.group(4) or ''
        if bang: images.add(target); return f'![{label}]({target})'
        if target.startswith('nbs/') and target.endswith('.ipynb'): return f'[{label}]({page(Path(target).name)}.html{frag})'
        return f'[{label}]({REPO_URL}{target}{frag})'
    return _re_repo_link.sub(sub, md)

def link(nb: dict, linkify, images: set) -> None:
    for c in nb['cells']:
        if c['cell_type'] == 'markdown': c['source'] = linkify(repo_links(c['source'], images))
        for o in c.get('outputs', []):
            if 'text/markdown' in o.get('data', {}): o['data']['text/markdown'] = linkify(repo_links(text(o['data']['text/markdown']), images))

_re_md_image = re.compile(r'!\[[^\]]*\]\([^)\s]+\)')
def figures(nb: dict) -> int:
    "Images a prepared notebook shows: image outputs, and images in its Markdown (cells and Markdown outputs)."
    shown = [c for c in nb['cells'] if 'remove-output' not in c['metadata'].get('tags', [])]
    outputs = sum(any(k.startswith('image/') for k in o.get('data', {})) for c in shown if c['cell_type'] == 'code' for o in c['outputs'])
    markdown = [c['source'] for c in shown if c['cell_type'] == 'markdown']
    markdown += [text(o['data']['text/markdown']) for c in shown if c['cell_type'] == 'code' for o in c['outputs'] if 'text/markdown' in o.get('data', {})]
    return outputs + sum(len(_re_md_image.findall(m)) for m in markdown)

def build(book: Path) -> int:
    t0 = time.time()
    entries = sidebar()
    pages, anchors = {}, {}
    for _, nb in entries:
        pages[page(nb)], anchors[page(nb)] = prepare(json.loads((NBS / nb).read_text()))
    linkify, images = linker(anchors), set()
    for name, nb in pages.items():
        link(nb, linkify, images)
        (book / f'{name}.ipynb').write_text(json.dumps(nb, indent=1, ensure_ascii=False))
    for rel in sorted(images):
        if not (ROOT / rel).is_file(): print(f'FAIL: a notebook shows ../{rel}, which does not exist'); return 1
        (book / rel).parent.mkdir(parents=True, exist_ok=True); shutil.copy(ROOT / rel, book / rel)
    (book / '_static').mkdir(exist_ok=True)
    for css in sorted(CONFIG.parent.glob('*.css')): shutil.copy(css, book / '_static')
    config = yaml.safe_load(CONFIG.read_text())
    config['sphinx']['local_extensions'] = {Path(__file__).stem: str(Path(__file__).parent)}  # setup() below
    (book / '_config.yml').write_text(yaml.safe_dump(config, sort_keys=False))
    shutil.copy(CONFIG.parent / 'favicon.svg', book)
    (book / '_toc.yml').write_text(yaml.safe_dump(toc(entries), sort_keys=False))
    t1 = time.time()
    out = tempfile.mkdtemp(prefix='jupyter-book-')
    try:
        r = subprocess.run([sys.executable, '-c', 'from jupyter_book.cli.main import main; main()', 'build', str(book), '--path-output', out,
                            '--builder', 'html', '--keep-going'], capture_output=True, text=True)
        log = r.stdout + r.stderr
        warnings = [l for l in log.splitlines() if re.search(r'\bWARNING\b|\bERROR\b', l)]
        html = Path(out) / '_build' / 'html'
        if r.returncode or not (html / 'index.html').exists():
            print(log[-6000:]); print('FAIL: jupyter-book build failed'); return 1
        shutil.rmtree(DOCS, ignore_errors=True)
        shutil.copytree(html, DOCS, ignore=shutil.ignore_patterns('.buildinfo', '_sources'))
        (DOCS / '.nojekyll').touch()  # GitHub Pages: serve _static/ and _images/ as they are
    finally: shutil.rmtree(out, ignore_errors=True)
    for w in warnings: print(w)
    n_fig = sum(map(figures, pages.values()))
    n_img = sum(len(re.findall(r'<img [^>]*src="_images/', (DOCS / f'{name}.html').read_text())) for name in pages)
    print(f'{DOCS.relative_to(ROOT)}/: {len(pages)} pages, {sum(map(len, anchors.values()))} API entries, {n_img} of '
          f'{n_fig} figures, {len(warnings)} Sphinx warnings (preparing {t1 - t0:.1f} s, jupyter-book {time.time() - t1:.1f} s)')
    if n_img != n_fig: print(f'FAIL: the notebooks show {n_fig} figures, the site {n_img}')
    return 1 if warnings or n_img != n_fig else 0

# ---- where Quarto is installed
def runs_for_docs(cell) -> bool:
    "Which cells nbdev's `exec_show_docs` runs: exported cells, `show_doc` cells, and cells of imports alone."
    import nbdev.processors
    if cell.cell_type != 'code' or nbdev.processors.cell_lang(cell) != 'python' or not cell.source: return False
    if 'nbdev_export' + '()' in cell.source: return False
    if cell.directives_.get('eval:', [''])[0].lower() == 'false': return False
    trees = cell.parsed_()
    if not trees: return False
    if cell.directives_.keys() & {'export', 'exports', 'exporti', 'exec_doc'}: return True
    if all(isinstance(t, (ast.Import, ast.ImportFrom)) for t in trees): return True
    return len(nbdev.processors._show_docs(trees)) == len(trees)

def quarto() -> None:
    import nbdev.processors
    from nbdev.quarto import nbdev_docs
    sidebar()  # each notebook listed once
    nbdev.processors._do_eval = runs_for_docs  # exec_show_docs looks it up when it runs (in this process: n_workers=0)
    nbdev_docs.__wrapped__(n_workers=0)

# ---- loaded by Sphinx as a local extension
_re_anchor = re.compile(r'^<div id="([^"]+)"></div>\s*$')
def nbdev_anchors(app, doctree):
    """Each API entry's section takes nbdev's anchor (`budget_steps`, `arm.update`) as its id, which docutils would spell
    `budget-steps` (or `id3`); an earlier element holding that id (the prose section "ARM" before the class ARM) gives
    it up. Done as the page is read, so the page's table of contents and the search index link to the same ids."""
    from docutils import nodes
    order = list(doctree.findall(lambda n: isinstance(n, (nodes.raw, nodes.section))))
    for i, node in enumerate(order):
        m = isinstance(node, nodes.raw) and _re_anchor.match(node.astext())
        section = m and next((s for s in order[i + 1:] if isinstance(s, nodes.section)), None)
        if not section: continue
        anchor = m.group(1)
        other = doctree.ids.get(anchor)
        if other is not None and other is not section:
            n = 1
            while f'{anchor}-{n}' in doctree.ids: n += 1
            other['ids'][other['ids'].index(anchor)] = f'{anchor}-{n}'
            doctree.ids[f'{anchor}-{n}'] = other
        if anchor in section['ids']: section['ids'].remove(anchor)
        section['ids'].insert(0, anchor)
        doctree.ids[anchor] = section
        node.parent.remove(node)

def one_of_each_script(app, pagename, templatename, context, doctree):
    "Sphinx 7.4 lists a script added while reading twice (filename None, then ''): sphinx-thebe's `const` then fails."
    seen, scripts = set(), []
    for js in context.get('script_files', []):
        key = (js.filename or '', js.priority, tuple(sorted(js.attributes.items())))
        if key not in seen: seen.add(key); scripts.append(js)
    context['script_files'] = scripts

def setup(app):
    app.connect('doctree-read', nbdev_anchors, priority=100)  # before Sphinx's collectors (500) read the section ids
    app.connect('html-page-context', one_of_each_script)
    return {'parallel_read_safe': True, 'parallel_write_safe': True}

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--keep', help='prepare the book in this folder and keep it')
    ap.add_argument('--quarto', action='store_true', help="nbdev_docs (needs Quarto)")
    a = ap.parse_args()
    if a.quarto: sys.exit(quarto())
    if a.keep:
        Path(a.keep).mkdir(parents=True, exist_ok=True)
        sys.exit(build(Path(a.keep)))
    with tempfile.TemporaryDirectory(prefix='prism-docs-') as d: sys.exit(build(Path(d)))
