r"""Check the built docs site (_docs/) in a real browser: headless Chromium, driven through chromedriver's
W3C WebDriver HTTP interface with the standard library only (Debian's `chromium` and `chromium-driver`).

_docs/ is served on 127.0.0.1 (a free port). On every page of the site (or those named) this
fails (exit 1, saying what and where) on
- an image that did not load (naturalWidth 0) or any request of the page that got an HTTP error,
- a link within the site (same origin) that returns 404 (or any HTTP error), or whose `#fragment` names no
  element of its page (nbdev's doc links point at `page.html#name`),
- a JavaScript error or console error (an uncaught exception, a failed resource, console.error),
- math left untypeset: a math element MathJax did not render, or TeX such as `$\lfloor` in the page's text
  outside code; and the sampling page (whose prose has `$\lfloor 128 \cdot 0.2 \rfloor = 25$`) must show
  MathJax output;
- a search page that finds nothing: `search.html?q=make_config` must list at least one page;
- at laptop width (the window is 1280 px wide), on the index and paper pages: a code block that scrolls sideways (it
  would hide part of a command; tools/docs/prism.css makes code wrap);
- on every page, at a 1280-px and at a 1920-px window (`WIDTHS`; the page loaded at the first, then resized): a table
  of the article that does not fit its column: wider than the box it sits in (the cell's output area, a scroll box,
  the article's content box), scrolling within its own box (its last columns hidden to the right), or reaching past
  the column's edge, named by page, width, its number on the page, the heading above it and its first columns
  (tools/docs/prism.js fits tables: compact type, then room from a sidebar); and a page wider than the window;
- on the index, at both widths: no contents panel shown (the right-hand "Contents" list), no entry in it for a
  heading whose text starts with "Headline", or an entry that starts with "Install" before it (the page leads with
  the answer; a heading inside a code cell's output is no section, so it is missing from the panel unless
  tools/build_docs.py makes it one);
- a figure whose text the reader sees below 8 pt (every page, at the 1280-px window). For each <img> of the article
  that is a matplotlib PNG (its `Software` tEXt chunk says Matplotlib): the figure was saved at `dpi` (the PNG's pHYs
  chunk: 100 for notebook outputs, matplotlib's figure.dpi; 150 for figures/*.png, `save_figure`'s default; 100
  assumed where a PNG has no pHYs), so a font of F pt is F * dpi / 72 image pixels tall; the page shows the image
  at s = displayed CSS width / natural width, and a CSS pixel is 1/96 inch, so the reader sees
      effective pt = F * (dpi / 72) * s * (72 / 96) = F * dpi * s / 96
  (the size the text has at the page's scale of 96 CSS px to the inch; at s = 1 and 96 dpi it is F; browser zoom and
  the screen's pixel density scale all text alike, so they are left out). F, the figure's smallest font, is not in
  the pixels: tools/build_docs.py tags each PNG with `prism:min-font-pt`, the smallest size the code that drew it
  uses (paper_style()'s PAPER_RC, smallest 8 pt, where the notebook applies it, else matplotlib's 10-pt defaults,
  and any smaller `fontsize=`/`labelsize=` in the cell or the prism_nb functions it calls); an untagged PNG (a Quarto
  build) is assumed at PAPER_RC's smallest size (read from prism_nb/report.py). Each figure's effective size is
  printed; below 8 fails, naming page and image. Where tools/docs/prism.js is loaded (the Jupyter Book site), a
  figure shown narrower than its natural size must also be click-to-enlarge (class prism-zoomable);
- a table cell that wraps a number (at both widths): a <td> of the article with a digit whose text runs over more than one line
  (lines counted from the text's line boxes, Range.getClientRects, not from the cell's height and padding), where
  the cell is a number (digits and the signs numbers come with: . , ± % — ( ) /, and 3 other characters at most,
  as in `n=3`) or a number in it (outside code and links: a hash, a file name or a URL may break) is itself broken
  across lines; prose in a cell that merely holds a digit may wrap;
- more or fewer than one search box (visible search fields and buttons outside the article) on a page;
- any link (href or src) in any HTML file of the site, _repo/ included, to a placeholder: github.com/prism-nb,
  settings.ini's git_url or doc_host (prism-nb.github.io), the example domains, or a file's name taken for a host
  (`http://SOURCE.md`, what Markdown's fuzzy linkify made of "SOURCE.md: 212 deaths"). The repository has no public
  URL; its files are shown within the site (_repo/, see tools/build_docs.py).

Usage: python tools/check_docs.py [--docs _docs] [--pages index.html sampling.html ...]
Build the site first: bash tools/build_docs.sh"""
import argparse, functools, http.server, json, os, re, socket, subprocess, sys, tempfile, threading, time
import urllib.error, urllib.parse, urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# without these Chromium waits on the network (updates, sync, field trials) that this closed machine lacks
CHROME_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
               '--disable-background-networking', '--disable-component-update', '--disable-sync',
               '--disable-dev-shm-usage', '--window-size=1280,1000']

def free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]

class Handler(http.server.SimpleHTTPRequestHandler):
    "Serves _docs/ and remembers every request's status."
    log = []
    def log_request(self, code='-', size='-'):
        self.log.append((self.path, int(code) if str(code).isdigit() else 0))
    def log_message(self, *a): pass

class Server(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        "A request the browser gave up on (a preload it did not need) is no error of the site."
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)): super().handle_error(request, client_address)

def serve(docs: Path):
    srv = Server(('127.0.0.1', free_port()), functools.partial(Handler, directory=str(docs)))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, f'http://127.0.0.1:{srv.server_address[1]}/'

class WebDriver:
    "The few W3C WebDriver commands this check needs, over HTTP to a chromedriver it starts and stops."
    def __init__(self, chromium: str, chromedriver: str, profile: str):
        port = free_port()
        self.base = f'http://127.0.0.1:{port}'
        self.proc = subprocess.Popen([chromedriver, f'--port={port}'], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            try:
                if self.call('GET', '/status')['ready']: break
            except (urllib.error.URLError, ConnectionError): time.sleep(0.1)
        else: self.close(); raise RuntimeError(f'{chromedriver} did not start')
        caps = {'browserName': 'chrome', 'goog:loggingPrefs': {'browser': 'ALL'},
                'goog:chromeOptions': {'binary': chromium, 'args': CHROME_ARGS + [f'--user-data-dir={profile}']}}
        self.sid = None
        self.sid = self.call('POST', '/session', {'capabilities': {'alwaysMatch': caps}})['sessionId']

    def call(self, method, path, body=None, timeout=60):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method, headers={'Content-Type': 'application/json'})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r: return json.loads(r.read())['value']
        except urllib.error.HTTPError as e:
            raise RuntimeError(f'WebDriver {method} {path}: {e.read().decode(errors="replace")[:500]}') from None

    def session(self, method, path, body=None): return self.call(method, f'/session/{self.sid}{path}', body)
    def get(self, url): self.session('POST', '/url', {'url': url})
    def js(self, script): return self.session('POST', '/execute/sync', {'script': script, 'args': []})
    def console(self): return self.session('POST', '/se/log', {'type': 'browser'})  # chromedriver's log endpoint

    def close(self):
        try:
            if self.sid: self.call('DELETE', f'/session/{self.sid}', timeout=20)
        except Exception: pass
        self.proc.terminate()
        try: self.proc.wait(10)
        except subprocess.TimeoutExpired: self.proc.kill()

IMAGES_JS = "return Array.from(document.images).map(i => [i.getAttribute('src'), i.currentSrc || i.src, i.complete, i.naturalWidth]);"
LINKS_JS = "return Array.from(document.querySelectorAll('a[href]')).map(a => a.href);"
READY_JS = "return document.readyState;"
# math: Sphinx marks each formula `.math`; MathJax 3 puts an <mjx-container> in it once typeset. Raw TeX is looked for
# in the text outside code (a code cell may well hold a TeX string such as a matplotlib label).
MATH_JS = r"""
const math = Array.from(document.querySelectorAll('.math'));
const done = window.MathJax && MathJax.startup && MathJax.startup.document ? 1 : 0;
const body = document.body.cloneNode(true);
body.querySelectorAll('pre, code, script, style, mjx-container, .highlight').forEach(e => e.remove());
const raw = (body.textContent.match(/\$\\[a-zA-Z]+|\\\(|\\\[/g) || []).slice(0, 3);
return [done, math.length, math.filter(e => !e.querySelector('mjx-container')).length,
        document.querySelectorAll('mjx-container').length, raw];"""
# Sphinx's search page fills #search-results from searchindex.js, then says "Search finished, found N page(s)..."
SEARCH_JS = "return [document.querySelectorAll('#search-results ul.search li').length, " \
            "(document.querySelector('.search-summary') || {}).textContent || ''];"
MATH_PAGE, SEARCH_TERM = 'sampling.html', 'make_config'
# laptop width: code blocks of the article that scroll sideways (their first line), and how far the page itself does
OVERFLOW_JS = r"""
const root = document.querySelector('.bd-article') || document.body;
const sideways = Array.from(root.querySelectorAll('pre')).filter(e => e.scrollWidth > e.clientWidth + 1);
const page = document.documentElement;
return [sideways.map(e => (e.textContent || '').trim().split('\n')[0].slice(0, 80)), page.scrollWidth - page.clientWidth];"""
OVERFLOW_PAGES = ('index.html', 'paper.html')
WIDTHS = (1280, 1920)  # the windows the layout is checked at: a laptop's, and a desktop's
# tables that do not fit their column: wider than the box they sit in (a scroll box such as the cell's output area, or
# the article's content box), scrolling within their own box (display: block), or reaching past the column's right
# edge; each named by its number on the page, the heading above it and its first header cells. And how far the page
# scrolls sideways.
TABLE_FIT_JS = r"""
const root = document.querySelector('.bd-article') || document.querySelector('main') || document.body;
const content = box => { const s = getComputedStyle(box);
                         return box.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight); };
const rs = getComputedStyle(root), rr = root.getBoundingClientRect();
const right = rr.left + root.clientLeft + root.clientWidth - parseFloat(rs.paddingRight);
const heads = Array.from(root.querySelectorAll('h1, h2, h3, h4, h5, h6, .rubric'));
const out = [];
Array.from(root.querySelectorAll('table')).forEach((t, i) => {
  const r = t.getBoundingClientRect();
  if (r.width === 0) return;
  const wide = Math.max(t.scrollWidth, Math.round(r.width)), why = [];
  if (t.scrollWidth > t.clientWidth + 1) why.push(`scrolls within its own box (${t.scrollWidth} px of table in ${t.clientWidth} px)`);
  for (let a = t.parentElement; a && a !== root.parentElement; a = a.parentElement) {
    if (!a.clientWidth) continue;  // an inline element: no box of its own
    if (wide > content(a) + 1) {
      why.push(`${wide} px wide in a ${Math.round(content(a))}-px ${a === root ? 'column' : 'box (' + (a.className || a.tagName).toString().split(' ')[0] + ')'}`);
      break;
    }
  }
  if (r.right > right + 1) why.push(`reaches ${Math.round(r.right - right)} px past the column`);
  if (!why.length) return;
  const above = heads.filter(h => h.compareDocumentPosition(t) & Node.DOCUMENT_POSITION_FOLLOWING).pop();
  const first = t.querySelector('tr');
  const cols = first ? Array.from(first.children).map(c => c.textContent.trim()).filter(x => x).slice(0, 4).join(' | ') : '';
  out.push([i + 1, above ? above.textContent.replace(/[#¶]/g, '').trim().slice(0, 60) : '', cols.slice(0, 70), why.join('; ')]);
});
const p = document.documentElement;
return [out, p.scrollWidth - p.clientWidth, Math.round(content(root))];"""
# the index's contents panel (the right-hand "on this page" list; Quarto: nav#TOC): shown, and its entries in order
TOC_JS = r"""
const panel = document.querySelector('.bd-sidebar-secondary .bd-toc-nav, .bd-sidebar-secondary nav, nav#TOC');
if (!panel) return [false, []];
const r = panel.getBoundingClientRect(), s = getComputedStyle(panel);
const side = panel.closest('.bd-sidebar-secondary, #quarto-margin-sidebar') || panel;
const shown = r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && getComputedStyle(side).display !== 'none';
return [shown, Array.from(panel.querySelectorAll('a')).map(a => [a.textContent.trim().replace(/\s+/g, ' '), a.getAttribute('href') || ''])];"""
HEADLINE_PAGE, HEADLINE, INSTALL = 'index.html', re.compile(r'^headline', re.I), re.compile(r'^install', re.I)
# figures: every image of the article (Quarto: main), its natural and displayed width, whether prism.js made it zoomable
FIGURES_JS = r"""
const root = document.querySelector('.bd-article') || document.querySelector('main') || document.body;
const zoom = !!document.querySelector('script[src*="prism.js"]');
return Array.from(root.querySelectorAll('img')).map(i => [i.getAttribute('src'), i.currentSrc || i.src, i.naturalWidth,
  i.getBoundingClientRect().width, i.classList.contains('prism-zoomable'), zoom]);"""
# tables: each <td> with a digit, its number of text lines, and whether a number in it is broken across lines
TABLES_JS = r"""
const root = document.querySelector('.bd-article') || document.querySelector('main') || document.body;
// lines: the text's line boxes (text nodes only: an element's box sits a little higher than its text), grouped by
// vertical overlap
const lines = rects => {
  const rs = rects.filter(r => r.width > 0.5 && r.height > 0).sort((a, b) => a.top - b.top);
  let n = 0, bottom = -Infinity;
  for (const r of rs) { if (r.top >= bottom - 1) { n++; bottom = r.bottom; } else bottom = Math.max(bottom, r.bottom); }
  return n;
};
const texts = td => { const w = document.createTreeWalker(td, NodeFilter.SHOW_TEXT), all = [];
                      for (let t = w.nextNode(); t; t = w.nextNode()) if (t.textContent.trim()) all.push(t); return all; };
const out = [];
for (const td of root.querySelectorAll('td')) {
  const t = td.textContent.trim();
  if (!/\d/.test(t) || td.getBoundingClientRect().width === 0) continue;
  const rects = [];
  for (const node of texts(td)) { const r = document.createRange(); r.selectNodeContents(node); rects.push(...r.getClientRects()); }
  const n = lines(rects);
  let broken = false;
  for (const node of texts(td)) {
    if (broken) break;
    if (node.parentElement.closest('code, a, kbd, samp')) continue;  // a hash, a file name or a URL: no number
    for (const m of node.textContent.matchAll(/[-+−]?\d[\d.,]*(?:e[-+]?\d+)?%?/g)) {
      const r = document.createRange(); r.setStart(node, m.index); r.setEnd(node, m.index + m[0].length);
      if (lines(Array.from(r.getClientRects())) > 1) { broken = true; break; }
    }
  }
  const table = td.closest('table'), row = td.closest('tr');
  const first = table && table.querySelector('tr');
  const head = first ? Array.from(first.children).map(c => c.textContent.trim()) : [];
  const col = row ? Array.from(row.children).indexOf(td) : -1;
  out.push([t.slice(0, 60), n, broken, (head[col] || '').slice(0, 30),
            (row && row.children[0] ? row.children[0].textContent.trim() : '').slice(0, 30),
            Math.round(td.getBoundingClientRect().width)]);
}
return out;"""
# a cell that is a number: digits and the signs numbers come with (3 letters at most, as in `se` or `n=`)
NUMBER_CHARS = re.compile(r'[^\d\s.,:;±+\-−–—%()\[\]/×*<>=≈~^]')
# search: the visible search fields and buttons outside the article and the search dialog
SEARCH_BOX_JS = r"""
const visible = e => { const r = e.getBoundingClientRect(), s = getComputedStyle(e);
                       return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none'; };
return Array.from(document.querySelectorAll('input[type=search], .search-button, .search-button-field, #quarto-search'))
  .filter(e => !e.closest('article, dialog, #search-results') && visible(e))
  .filter((e, i, all) => !all.some(o => o !== e && o.contains(e)))
  .map(e => (e.className || e.id || e.tagName).toString().split(' ').slice(0, 3).join('.'));"""
MIN_PT, PX_PER_IN = 8.0, 96  # the smallest text a reader is asked to read; CSS pixels to the inch


def png_info(data: bytes) -> dict:
    "A PNG's width, dpi (pHYs; None if absent) and tEXt chunks."
    info, i = {'width': int.from_bytes(data[16:20], 'big'), 'dpi': None, 'text': {}}, 8
    while i + 8 <= len(data):
        n, kind = int.from_bytes(data[i:i + 4], 'big'), data[i + 4:i + 8]
        chunk = data[i + 8:i + 8 + n]
        if kind == b'pHYs' and chunk[8] == 1: info['dpi'] = int.from_bytes(chunk[:4], 'big') * 0.0254
        if kind == b'tEXt':
            k, _, v = chunk.partition(b'\0'); info['text'][k.decode('latin-1')] = v.decode('latin-1')
        if kind == b'IEND': break
        i += 12 + n
    return info

@functools.lru_cache()
def paper_min_font() -> float:
    "The smallest type size of paper_style() (PAPER_RC in prism_nb/report.py, the figure title left aside)."
    import ast
    for node in ast.walk(ast.parse((ROOT / 'prism_nb' / 'report.py').read_text())):
        if isinstance(node, ast.Assign) and any(getattr(t, 'id', None) == 'PAPER_RC' for t in node.targets):
            rc = ast.literal_eval(node.value)
            return float(min(v for k, v in rc.items() if isinstance(v, (int, float)) and k != 'figure.titlesize'))
    return 8.0

def check_figures(wd, page, base, docs, problems, report) -> None:
    "Each matplotlib figure's smallest text as the reader sees it (see the module's docstring)."
    for src, full, natural, shown, zoomable, zoom in wd.js(FIGURES_JS):
        f = docs / urllib.parse.unquote(urllib.parse.urlparse(full).path).lstrip('/')
        if not natural or not shown or not full.startswith(base) or not f.is_file() or f.suffix.lower() != '.png': continue
        info = png_info(f.read_bytes())
        if not info['text'].get('Software', '').startswith('Matplotlib'): continue
        dpi = info['dpi'] or 100.0
        tagged = 'prism:min-font-pt' in info['text']
        font = float(info['text']['prism:min-font-pt']) if tagged else paper_min_font()
        eff = font * dpi * (shown / natural) / PX_PER_IN
        why = info['text'].get('prism:font-source', f'assumed: paper_style, {font:g} pt')
        report.append((page, src, natural, shown, info['dpi'], font, eff, why))
        if eff < MIN_PT - 1e-6:
            problems.append(f'{page}: figure {src}: its {font:g}-pt text shows at {eff:.1f} pt (shown {shown:.0f} of '
                            f'{natural} px, {dpi:.0f} dpi; {why}); needs {MIN_PT:g} pt')
        if zoom and shown < natural - 1 and not zoomable:
            problems.append(f'{page}: figure {src} is shown narrower than its natural size but is not click-to-enlarge')

def check_tables(wd, page, problems, window=1280) -> int:
    "A table cell that wraps a number (see the module's docstring); the number of cells with a digit looked at."
    cells = wd.js(TABLES_JS)
    for txt, n, broken, col, row, width in cells:
        if n > 1 and (broken or len(NUMBER_CHARS.findall(txt)) <= 3):
            problems.append(f'{page} at {window} px: a table cell wraps a number over {n} lines: {txt!r} (column {col!r}, '
                            f'row {row!r}, {width} px wide)')
    return len(cells)

def check_search_box(wd, page, problems) -> None:
    boxes = wd.js(SEARCH_BOX_JS)
    if len(boxes) != 1: problems.append(f'{page}: {len(boxes)} search boxes, not one: {boxes}')

def placeholder_hosts() -> list:
    """Where the repository and its site are said to live but do not: settings.ini's git_url and doc_host (nbdev's
    source and doc links are made from them), github.com/prism-nb, and the example domains."""
    import configparser
    c = configparser.ConfigParser(); c.read(ROOT / 'settings.ini')
    urls = [c['DEFAULT'].get(k, '').rstrip('/').split('://')[-1] for k in ('git_url', 'doc_host')]
    return sorted({u for u in urls + ['github.com/prism-nb', 'prism-nb.github.io', 'example.com', 'example.org', 'example.net'] if u})

# a file's name taken for a host: Markdown's linkify made `http://SOURCE.md` of the words "SOURCE.md: 212 deaths"
_re_file_host = re.compile(r'^[a-z]+://[^/.?#]+\.(md|py|ipynb|txt|csv|json|ya?ml|cff|ini|toml|sh|cfg|png|pdf|zip|gz|parquet)(?=[/?#:]|$)', re.I)
_re_attr = re.compile(r'''\b(?:href|src)\s*=\s*["']?([^"'\s>]+)''', re.I)
def check_placeholder_links(docs: Path, problems) -> int:
    """No href or src in any HTML file of the site (_repo/ included) points at a placeholder: the repository's or the
    site's nonexistent host (`placeholder_hosts`), or a file's name taken for a host (`http://SOURCE.md`)."""
    hosts, n = [h.lower() for h in placeholder_hosts()], 0
    for f in sorted(docs.rglob('*.html')):
        for url in _re_attr.findall(f.read_text(errors='replace')):
            low = url.lower().split('://')[-1] if '://' in url else ''
            what = ('a host that does not exist' if any(low.startswith(h) or f'.{h}' in low.split('/')[0] for h in hosts)
                    else 'a file name taken for a host (Markdown linkify)' if _re_file_host.match(url) else None)
            if what:
                n += 1
                if n <= 20: problems.append(f'{f.relative_to(docs)}: link to {url}: {what}')
    if n > 20: problems.append(f'... and {n - 20} more links to placeholders')
    return n

def status_of(url: str) -> tuple:
    "HTTP status of a page, and the ids its HTML defines (id= or name=), which a #fragment may name."
    try:
        with urllib.request.urlopen(url, timeout=20) as r:
            html = r.read().decode(errors='replace') if url.endswith('.html') or url.endswith('/') else ''
            return r.status, set(re.findall(r'\s(?:id|name)="([^"]+)"', html))
    except urllib.error.HTTPError as e: return e.code, set()

def wait(wd, script, ok, seconds=20):
    "Run `script` until `ok(result)` or `seconds` pass; the last result."
    for _ in range(int(seconds * 10)):
        res = wd.js(script)
        if ok(res): break
        time.sleep(0.1)
    return res

def check_math(wd, page, problems) -> int:
    # a page without math does not load MathJax; one with math is waited for until MathJax has typeset all of it
    done, n, untypeset, n_mjx, raw = wait(wd, MATH_JS, lambda r: (r[0] and not r[2]) or (not r[1] and page != MATH_PAGE))
    if untypeset: problems.append(f'{page}: {untypeset} of {n} formulas not typeset by MathJax')
    if raw: problems.append(f'{page}: raw TeX in the text: {raw}')
    if page == MATH_PAGE and not n_mjx: problems.append(f'{page}: no MathJax output (math is not rendered)')
    return n_mjx

def check_overflow(wd, page, problems) -> None:
    "On the index and paper pages: no code block scrolls sideways, and the page is no wider than the window."
    if Path(page).name not in OVERFLOW_PAGES: return
    sideways, excess = wd.js(OVERFLOW_JS)
    for first_line in sideways: problems.append(f'{page}: a code block scrolls sideways at this width: {first_line!r}')
    if excess > 1: problems.append(f'{page}: the page is {excess} px wider than the window')

def check_fit(wd, page, width, problems) -> tuple:
    "At this window width: every table of the article fits its column, and the page does not scroll sideways."
    bad, excess, column = wd.js(TABLE_FIT_JS)
    for n, above, cols, why in bad:
        problems.append(f'{page} at {width} px: table {n} (under {above!r}; columns {cols!r}) does not fit the '
                        f'{column}-px column: {why}')
    if excess > 1: problems.append(f'{page} at {width} px: the page is {excess} px wider than the window (it scrolls sideways)')
    return len(bad)

def check_headline(wd, page, width, problems) -> None:
    """On the index: the contents panel is shown and lists a heading whose text starts with "Headline", before any
    entry that starts with "Install" (the page leads with the answer; a heading that only code displays is no
    section of the page and is missing from the panel: tools/build_docs.py makes one that opens a cell's output a
    section)."""
    if Path(page).name != HEADLINE_PAGE: return
    shown, entries = wd.js(TOC_JS)
    names = [t for t, _ in entries]
    head = next((i for i, t in enumerate(names) if HEADLINE.match(t)), None)
    install = next((i for i, t in enumerate(names) if INSTALL.match(t)), None)
    if not shown: problems.append(f'{page} at {width} px: no contents panel shown (the right-hand "Contents" list)')
    if head is None:
        problems.append(f'{page} at {width} px: the contents panel has no entry for a heading that starts with '
                        f'"Headline" (it lists {names[:8]}); the headline result must be a Markdown heading of the page')
    elif install is not None and install < head:
        problems.append(f'{page} at {width} px: the contents panel lists {names[install]!r} before {names[head]!r}: '
                        'the headline result must come before the install details')

def settle(wd, script, seconds=5):
    "`script`'s result once two readings 0.2 s apart agree (the page re-laid out after a resize), or after `seconds`."
    last = wd.js(script)
    for _ in range(int(seconds / 0.2)):
        time.sleep(0.2)
        now = wd.js(script)
        if now == last: break
        last = now
    return last

def resize(wd, width, height=1000): wd.session('POST', '/window/rect', {'width': width, 'height': height})

def check_search(wd, base, problems) -> int:
    wd.get(urllib.parse.urljoin(base, f'search.html?q={SEARCH_TERM}'))
    n, summary = wait(wd, SEARCH_JS, lambda r: 'found' in r[1].lower() or 'did not match' in r[1].lower())
    print(f'  search.html?q={SEARCH_TERM}: {n} results ({" ".join(summary.split())[:80]})')
    if not n: problems.append(f'search for {SEARCH_TERM!r} found nothing: {summary.strip()[:200]}')
    return n

def check(docs: Path, pages, chromium, chromedriver) -> int:
    if not (docs / 'index.html').exists():
        print(f'FAIL: {docs} has no index.html: build the site first (bash tools/build_docs.sh)'); return 1
    for exe in (chromium, chromedriver):
        if not Path(exe).exists():
            print(f'FAIL: {exe} not found: apt-get install -y chromium chromium-driver'); return 1
    srv, base = serve(docs)
    problems, n_img, n_links, n_math, site_links, figures, n_cells = [], 0, 0, 0, set(), [], 0
    t0 = time.time()
    n_repo = check_placeholder_links(docs, problems)
    with tempfile.TemporaryDirectory(prefix='chromium-profile-') as profile:
        wd = WebDriver(chromium, chromedriver, profile)
        try:
            for page in pages:
                url = urllib.parse.urljoin(base, page)
                Handler.log.clear()
                wd.get(url)
                wait(wd, READY_JS, lambda r: r == 'complete', 10)
                n_mjx = check_math(wd, page, problems)
                check_overflow(wd, page, problems)
                check_figures(wd, page, base, docs, problems, figures)
                n_tables = []
                for width in WIDTHS:  # the page loads at the first; the others are the same page resized
                    if width != WIDTHS[0]: resize(wd, width); settle(wd, TABLE_FIT_JS)
                    n_cells += check_tables(wd, page, problems, width)
                    n_tables.append(check_fit(wd, page, width, problems))
                    check_headline(wd, page, width, problems)
                if len(WIDTHS) > 1: resize(wd, WIDTHS[0])
                if Path(page).name != 'search.html': check_search_box(wd, page, problems)
                time.sleep(0.3)  # late console messages
                imgs, links, logs = wd.js(IMAGES_JS), wd.js(LINKS_JS), wd.console()
                for src, full, complete, width in imgs:
                    if not width: problems.append(f'{page}: image did not load: {src}')
                for path, code in list(Handler.log):
                    if code >= 400: problems.append(f'{page}: HTTP {code} for {path}')
                for e in logs:
                    if e.get('level') == 'SEVERE': problems.append(f'{page}: console error: {e.get("message", "")[:300]}')
                same = {l for l in links if l.startswith(base)}
                n_img += len(imgs); n_links += len(links); n_math += n_mjx; site_links.update((page, l) for l in same)
                print(f'  {page}: {len(imgs)} images, {len(links)} links ({len({l.split("#")[0] for l in same})} distinct '
                      f'within the site), {n_mjx} formulas typeset, {sum(e.get("level") == "SEVERE" for e in logs)} console errors')
            if 'search.html' in {Path(p).name for p in pages} or len(pages) > 1: check_search(wd, base, problems)
        finally:
            wd.close()
    targets = {}
    for page, l in sorted(site_links):
        url, _, frag = l.partition('#')
        if url not in targets: targets[url] = status_of(url)
        code, ids = targets[url]
        if code >= 400: problems.append(f'link within the site returns {code}: {url[len(base) - 1:]} (on {page})')
        elif frag and ids and urllib.parse.unquote(frag) not in ids:
            problems.append(f'{page}: link to a missing anchor: {l[len(base) - 1:]}')
    srv.shutdown(); srv.server_close()
    n_frag = sum(bool(l.partition('#')[2]) for _, l in site_links)
    if figures:
        print(f'figures: smallest text as shown at a 1280-px window (effective pt = font pt * dpi * shown/natural / '
              f'{PX_PER_IN}; at least {MIN_PT:g}):')
        for page, src, natural, shown, dpi, font, eff, why in figures:
            print(f'  {"FAIL" if eff < MIN_PT - 1e-6 else "ok  "} {eff:4.1f} pt  {page}: {src}  {shown:.0f}/{natural} px, '
                  f'{f"{dpi:.0f} dpi" if dpi else "100 dpi assumed"}, {font:g} pt ({why})')
    print(f'{len(figures)} matplotlib figures sized, {n_cells} table cells with a digit looked at, '
          f'{n_repo} links to placeholders')
    print(f'checked {len(pages)} pages, {n_img} images, {n_math} typeset formulas, {n_links} links ({len(targets)} distinct '
          f'pages within the site, each fetched; {n_frag} links with a #fragment, each found) in {time.time() - t0:.1f} s')
    for p in problems: print('FAIL:', p)
    if problems: print(f'docs check FAILED: {len(problems)} problem(s)'); return 1
    print('docs check passed'); return 0

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0], allow_abbrev=False)
    ap.add_argument('--docs', default=str(ROOT / '_docs'))
    ap.add_argument('--pages', nargs='+', help='default: every page of the site')
    ap.add_argument('--chromium', default=os.environ.get('CHROMIUM', '/usr/bin/chromium'))
    ap.add_argument('--chromedriver', default=os.environ.get('CHROMEDRIVER', '/usr/bin/chromedriver'))
    a = ap.parse_args()
    if not Path(a.docs).is_dir():
        ap.error(f'--docs {a.docs}: no such folder; build the site first: bash tools/build_docs.sh')
    pages = a.pages or sorted(p.name for p in Path(a.docs).glob('*.html'))
    sys.exit(check(Path(a.docs), pages, a.chromium, a.chromedriver))
