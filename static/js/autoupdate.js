// A page still at work (an entry being scored, statistics or an export being prepared)
// names the seconds between checks in <meta name="refresh-seconds">; without JavaScript a
// <noscript> meta refresh reloads it. With JavaScript the page is fetched in the background
// and its <main> replaced only when its text changed, the change said in the live region of
// base.html: a reload every few seconds would send the focus back to the top and cut a
// screen reader short (axe's meta-refresh). upload.js starts it for the page it shows.
(function () {
  "use strict";

  var timer = null;

  function clean(text) {
    return text.replace(/\s+/g, " ").trim();
  }

  // The new page's message (a status, else its heading): focused if the focus was in the
  // old <main> (or nowhere), and said aloud.
  function show(main) {
    var current = document.querySelector("main");
    var active = document.activeElement;
    var hadFocus = !active || active === document.body || current.contains(active);
    current.replaceWith(main);
    // An alert first, else a status, else the heading (a status comes after the h1).
    var target = null;
    ["[role=alert]", "[role=status]", "h1"].forEach(function (selector) {
      target = target || Array.prototype.filter.call(main.querySelectorAll(selector), function (element) {
        return !element.closest("[hidden]") && element.textContent.trim();
      })[0];
    });
    if (target && hadFocus) {
      if (!target.hasAttribute("tabindex")) {
        target.setAttribute("tabindex", "-1");
      }
      target.focus();
    }
    var live = document.getElementById("page-announcer");
    if (live && target) {
      live.textContent = clean(target.textContent);
    }
    if (window.markScrollingBoxes) {
      window.markScrollingBoxes();
    }
  }

  function watch(seconds) {
    window.clearTimeout(timer);
    timer = window.setTimeout(function () {
      var xhr = new XMLHttpRequest();
      xhr.open("GET", window.location.href);
      xhr.addEventListener("load", function () {
        var page = xhr.status === 200 ? new DOMParser().parseFromString(xhr.responseText, "text/html") : null;
        var main = page && page.querySelector("main");
        if (!main) {
          watch(seconds * 2);  // a hiccup (a restart, a 502): try again, less often
          return;
        }
        var next = page.querySelector('meta[name="refresh-seconds"]');
        if (!next || clean(main.textContent) !== clean(document.querySelector("main").textContent)) {
          document.title = page.title;
          show(main);
        }
        if (next) {
          watch(parseInt(next.getAttribute("content"), 10) || seconds);
        }
      });
      xhr.addEventListener("error", function () { watch(seconds * 2); });
      xhr.send();
    }, seconds * 1000);
  }

  window.refreshWhileWorking = watch;
  var own = document.querySelector('meta[name="refresh-seconds"]');
  if (own && window.XMLHttpRequest && window.DOMParser) {
    watch(parseInt(own.getAttribute("content"), 10) || 5);
  }
})();
