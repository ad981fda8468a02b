// The main menu on a narrow screen: a "Menu" button that shows and hides the links
// (the CSS hides them only once this script has marked the nav "has-menu"; without
// JavaScript the links simply wrap under the site's name).
(function () {
  "use strict";

  function enhance(nav) {
    var button = nav.querySelector(".nav-toggle");
    var menu = document.getElementById(button.getAttribute("aria-controls"));
    if (!menu) {
      return;
    }

    function setOpen(open) {
      button.setAttribute("aria-expanded", open ? "true" : "false");
    }

    button.hidden = false;
    nav.classList.add("has-menu");
    button.addEventListener("click", function () {
      setOpen(button.getAttribute("aria-expanded") !== "true");
    });
    // Escape closes the open menu and gives the focus back to its button.
    nav.addEventListener("keydown", function (event) {
      if (event.key === "Escape" && button.getAttribute("aria-expanded") === "true") {
        setOpen(false);
        button.focus();
      }
    });
  }

  var nav = document.querySelector(".site-header nav");
  if (nav && nav.querySelector(".nav-toggle")) {
    enhance(nav);
  }
})();
