// Upload progress for the submission form. Without JavaScript (or without XHR and
// FormData) the form posts as usual; with it, the same request is sent by XHR so the
// progress of the upload can be shown.
(function () {
  "use strict";

  function megabytes(bytes) {
    return (bytes / 1000000).toFixed(1) + " MB";
  }

  // After <main> is replaced the focus would fall on <body> and a screen reader would
  // hear nothing: move it to the new page's message (or its heading) and say that text
  // in the live region of base.html, which stays in place across the replacement.
  function focusNewPage(main) {
    // An alert first, else a status, else the heading (a status comes after the h1); the
    // form's own alert, empty and hidden, is skipped.
    var target = null;
    ["[role=alert]", "[role=status]", "h1"].forEach(function (selector) {
      target = target || Array.prototype.filter.call(main.querySelectorAll(selector), function (element) {
        return !element.closest("[hidden]") && element.textContent.trim();
      })[0];
    });
    if (!target) {
      return;
    }
    if (!target.hasAttribute("tabindex")) {
      target.setAttribute("tabindex", "-1");
    }
    target.focus();
    var live = document.getElementById("page-announcer");
    if (live) {
      var heading = main.querySelector("h1");
      var said = target.textContent.replace(/\s+/g, " ").trim();
      if (heading && heading !== target) {
        said = heading.textContent.replace(/\s+/g, " ").trim() + ". " + said;
      }
      live.textContent = said;
    }
    if (window.markScrollingBoxes) {
      window.markScrollingBoxes();
    }
  }

  function showAccepted(url, html) {
    var page = new DOMParser().parseFromString(html, "text/html");
    var main = page.querySelector("main");
    if (!main) {
      window.location.assign(url);
      return;
    }
    window.history.replaceState(null, "", url);
    document.title = page.title;
    document.querySelector("main").replaceWith(main);
    window.scrollTo(0, 0);
    focusNewPage(main);
    // The page updates itself until the submission is scored (static/js/autoupdate.js, in
    // the background, without a reload that would lose the focus): keep doing so.
    var refresh = page.querySelector('meta[name="refresh-seconds"]');
    if (refresh && window.refreshWhileWorking) {
      window.refreshWhileWorking(parseInt(refresh.getAttribute("content"), 10) || 2);
    }
  }

  function enhance(form) {
    var box = form.querySelector(".upload-progress");
    var bar = box.querySelector("progress");
    var percent = box.querySelector(".upload-percent");
    var problem = form.querySelector(".upload-error");
    var button = form.querySelector("button[type=submit]");
    var maxBytes = parseInt(form.getAttribute("data-max-bytes"), 10);

    function fail(message) {
      problem.textContent = message;
      problem.hidden = false;
      box.hidden = true;
      button.disabled = false;
    }

    form.addEventListener("submit", function (event) {
      var input = form.querySelector("input[type=file]");
      var file = input && input.files && input.files[0];
      if (file && maxBytes && file.size > maxBytes) {
        event.preventDefault();
        fail("The file is " + megabytes(file.size) + "; a submission zip may be at most " +
             megabytes(maxBytes) + ".");
        return;
      }
      event.preventDefault();
      var target = form.action || window.location.href;
      var xhr = new XMLHttpRequest();
      xhr.open("POST", target);
      xhr.upload.addEventListener("progress", function (e) {
        if (e.lengthComputable) {
          var done = Math.round((100 * e.loaded) / e.total);
          bar.value = done;
          percent.textContent = done + " %";
        }
      });
      xhr.upload.addEventListener("load", function () {
        bar.value = 100;
        percent.textContent = "uploaded; checking the zip…";
      });
      xhr.addEventListener("load", function () {
        // Accepted: the server redirected to the submission's page. The XHR has fetched it,
        // with the one-time "received" message, so show that page rather than load it again.
        if (xhr.status < 400 && xhr.responseURL && xhr.responseURL !== new URL(target, window.location.href).href) {
          showAccepted(xhr.responseURL, xhr.responseText);
          return;
        }
        // Refused: show the form as the server answered it, with its messages.
        var page = new DOMParser().parseFromString(xhr.responseText, "text/html");
        var main = page.querySelector("main");
        if (!main) {
          fail("The server answered " + xhr.status + " " + xhr.statusText + ". Please try again.");
          return;
        }
        document.querySelector("main").replaceWith(main);
        var again = document.getElementById("submission-form");
        if (again) {
          enhance(again);
        }
        focusNewPage(main);
      });
      xhr.addEventListener("error", function () {
        fail("The upload did not reach the server (connection lost?). Please try again.");
      });
      problem.hidden = true;
      box.hidden = false;
      button.disabled = true;
      xhr.send(new FormData(form));
    });
  }

  var form = document.getElementById("submission-form");
  if (form && window.FormData && window.XMLHttpRequest && window.DOMParser) {
    enhance(form);
  }
})();
