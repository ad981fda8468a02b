// Boxes that scroll (a wide table, a code example, a plot kept readable, a long error
// report): a keyboard user can focus one and scroll it with the arrow keys (axe's
// scrollable-region-focusable), a screen reader hears what it is, and a sighted user is
// told when a table scrolls sideways. Only boxes that overflow are marked, again when the
// window is resized, an image inside loads or a <details> opens. upload.js calls window.markScrollingBoxes after it
// replaces <main>.
(function () {
  "use strict";

  var BOXES = "main .table-wrap, main pre, main .plot-scroll, main .error-report";
  var HINT = "Scroll sideways to see every column →";

  function clean(text) {
    return text.replace(/\s+/g, " ").trim();
  }

  // The table's caption, else the heading the box comes under; a region's name must be
  // unique on the page (axe's landmark-unique), so a repeated one is numbered.
  function name(box, taken) {
    var caption = box.querySelector("caption");
    var text = caption ? clean(caption.textContent) : "";
    if (!text) {
      var before = box.previousElementSibling;
      while (before && !/^H[1-6]$/.test(before.tagName)) {
        before = before.previousElementSibling;
      }
      var kind = box.classList.contains("error-report") ? "Report"
        : box.tagName === "PRE" ? "Example" : box.querySelector("table") ? "Table" : "Figure";
      text = before ? kind + " under “" + clean(before.textContent) + "”" : kind;
    }
    var how = box.scrollWidth > box.clientWidth + 1 ? "scrolls sideways" : "scrolls";
    var label = text + " (" + how + ")";
    for (var n = 2; taken[label]; n += 1) {
      label = text + " (" + n + ", " + how + ")";
    }
    taken[label] = true;
    return label;
  }

  // A hint before each table that scrolls sideways; the box's own label says it to a
  // screen reader, so the hint is hidden from one.
  function hint(box, show) {
    var before = box.previousElementSibling;
    var has = before && before.classList.contains("scroll-hint");
    if (show && !has && box.querySelector("table")) {
      var note = document.createElement("p");
      note.className = "scroll-hint";
      note.setAttribute("aria-hidden", "true");
      note.textContent = HINT;
      box.parentNode.insertBefore(note, box);
    } else if (has) {
      before.hidden = !show;
    }
  }

  function mark(box, taken) {
    var scrolls = box.scrollWidth > box.clientWidth + 1 || box.scrollHeight > box.clientHeight + 1;
    // Attributes the page set itself are left alone; only ours are taken back.
    if (scrolls && !box.hasAttribute("tabindex")) {
      box.setAttribute("tabindex", "0");
      box.setAttribute("role", "region");
      box.setAttribute("aria-label", name(box, taken));
      box.setAttribute("data-scroll-marked", "");
    } else if (!scrolls && box.hasAttribute("data-scroll-marked")) {
      ["tabindex", "role", "aria-label", "data-scroll-marked"].forEach(function (attribute) {
        box.removeAttribute(attribute);
      });
    }
    box.classList.toggle("scrolls", scrolls);
    hint(box, box.scrollWidth > box.clientWidth + 1);
  }

  function markAll() {
    var taken = {};
    Array.prototype.forEach.call(document.querySelectorAll("[role=region][aria-label]"), function (box) {
      taken[box.getAttribute("aria-label")] = true;
    });
    Array.prototype.forEach.call(document.querySelectorAll(BOXES), function (box) {
      mark(box, taken);
    });
  }

  var pending = null;
  function later() {
    window.clearTimeout(pending);
    pending = window.setTimeout(markAll, 100);
  }

  window.markScrollingBoxes = markAll;
  markAll();
  window.addEventListener("load", markAll);
  window.addEventListener("resize", later);
  // An image loaded late (lazy, or in a <details> opened later) can widen its box.
  document.addEventListener("load", function (event) {
    if (event.target.tagName === "IMG") {
      later();
    }
  }, true);
  document.addEventListener("toggle", later, true);
})();
