// Click to enlarge (tools/build_docs.py copies this into the book's _static/; Jupyter Book adds it to every page):
// a figure of the article shown narrower than its natural size gets class prism-zoomable and, on click, opens at
// its natural size in an overlay that scrolls; a click or Esc closes it. tools/check_docs.py checks the class.
// Also: table cells that are numbers are kept on one line (class prism-number, prism.css), and each table of the
// article is fitted to its column (`fit`: compact type, then room taken from a sidebar; prism.css).
(function () {
  function zoomable(img) {
    var shown = img.getBoundingClientRect().width;
    img.classList.toggle('prism-zoomable', shown > 0 && img.naturalWidth > shown + 1);
    if (img.classList.contains('prism-zoomable')) img.title = img.title || 'click to enlarge';
  }
  function open(img) {
    var overlay = document.createElement('div'), big = new Image();
    overlay.className = 'prism-zoom';
    overlay.setAttribute('role', 'dialog');
    overlay.setAttribute('aria-label', (img.alt || 'figure') + ' at full size (click or Esc to close)');
    big.src = img.currentSrc || img.src;
    big.alt = img.alt;
    overlay.appendChild(big);
    function close() { overlay.remove(); document.removeEventListener('keydown', esc); }
    function esc(e) { if (e.key === 'Escape') close(); }
    overlay.addEventListener('click', close);
    document.addEventListener('keydown', esc);
    document.body.appendChild(overlay);
  }
  // a table cell that is a number (digits and the signs numbers come with, 3 other characters at most, as
  // tools/check_docs.py reads it) never wraps: the table scrolls in its own box instead (prism.css)
  function numbers() {
    Array.prototype.forEach.call(document.querySelectorAll('.bd-article td'), function (td) {
      var t = td.textContent.trim();
      if (/\d/.test(t) && (t.match(/[^\d\s.,:;±+\-−–—%()\[\]\/×*<>=≈~^]/g) || []).length <= 3) td.classList.add('prism-number');
    });
  }
  // tables fit their column: a table wider than its column is set compact (prism-compact), then more compact
  // (prism-compact-2); if one still does not fit, the page makes room: a page without the wide layout takes it
  // (prism-widened: no right-hand contents panel), a wide page hides its left-hand navigation as the header's
  // toggle does (the toggle brings it back). Done again when the window is resized.
  var LEVELS = ['prism-compact', 'prism-compact-2'], madeRoom = [];
  function article() { return document.querySelector('.bd-article'); }
  function tables() { var a = article(); return a ? Array.prototype.slice.call(a.querySelectorAll('table')) : []; }
  function column(el) {  // the width of the box the table sits in: its parent's content box, and the article's
    var widths = [el.parentElement, article()].map(function (box) {
      var s = getComputedStyle(box);
      return box.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
    });
    return Math.min.apply(null, widths);
  }
  function tooWide(t) {
    return t.getBoundingClientRect().width > 0 &&
      (t.scrollWidth > t.clientWidth + 1 || Math.max(t.scrollWidth, t.getBoundingClientRect().width) > column(t) + 1);
  }
  function breakable() {  // long names in cells (WALKING_UPSTAIRS, committed_avg) may break after an underscore
    tables().forEach(function (t) {
      Array.prototype.forEach.call(t.querySelectorAll('th, td:not(.prism-number)'), function (cell) {
        var w = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT), nodes = [];
        for (var n = w.nextNode(); n; n = w.nextNode()) if (/[A-Za-z0-9]_[A-Za-z0-9]/.test(n.textContent) && !n.parentElement.closest('code')) nodes.push(n);
        nodes.forEach(function (n) {  // a <wbr> after each such underscore (the text copies as it is)
          var parts = n.textContent.split(/(?<=[A-Za-z0-9]_)(?=[A-Za-z0-9])/), frag = document.createDocumentFragment();
          parts.forEach(function (p, i) { if (i) frag.appendChild(document.createElement('wbr')); frag.appendChild(document.createTextNode(p)); });
          n.parentNode.replaceChild(frag, n);
        });
      });
    });
  }
  function compact() {  // the least compact level at which each table fits; true if one still does not
    var left = false;
    tables().forEach(function (t) {
      LEVELS.forEach(function (c) { t.classList.remove(c); });
      for (var i = 0; i < LEVELS.length && tooWide(t); i++) t.classList.add(LEVELS[i]);
      if (tooWide(t)) left = true;
    });
    return left;
  }
  function fit() {
    madeRoom.forEach(function (undo) { undo(); });
    madeRoom = [];
    if (!compact()) return;
    if (!document.querySelector('.prism-wide-page') && !document.body.classList.contains('prism-widened')) {
      document.body.classList.add('prism-widened');
      madeRoom.push(function () { document.body.classList.remove('prism-widened'); });
      if (!compact()) return;
    }
    var nav = document.querySelector('.bd-sidebar-primary');
    if (nav && !nav.classList.contains('pst-sidebar-hidden') && window.matchMedia('(min-width: 992px)').matches) {
      nav.style.transition = 'none';  // measured at once, not halfway through the theme's slide
      nav.classList.add('pst-sidebar-hidden');
      madeRoom.push(function () { nav.classList.remove('pst-sidebar-hidden'); });
      void nav.offsetWidth;
      nav.style.transition = '';
      compact();
    }
  }
  function init() {
    numbers();
    breakable();
    fit();
    var timer;
    window.addEventListener('resize', function () { clearTimeout(timer); timer = setTimeout(fit, 100); });
    var imgs = Array.prototype.slice.call(document.querySelectorAll('.bd-article img'));
    imgs.forEach(function (img) {
      if (img.complete) zoomable(img); else img.addEventListener('load', function () { zoomable(img); });
      img.addEventListener('click', function () { if (img.classList.contains('prism-zoomable')) open(img); });
    });
    window.addEventListener('resize', function () { imgs.forEach(zoomable); });
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init); else init();
})();
