// Starts Swagger UI on /api/docs/ (templates/api/docs.html): a file rather than an
// inline script, which the site's Content-Security-Policy refuses.
(function () {
  "use strict";
  function start() {
    var element = document.getElementById("api-reference");
    if (!element || typeof SwaggerUIBundle === "undefined") {
      return;
    }
    window.ui = SwaggerUIBundle({
      url: element.getAttribute("data-schema-url"),
      domNode: element,
      presets: [SwaggerUIBundle.presets.apis],
      layout: "BaseLayout",
      deepLinking: true,
      // No call to validator.swagger.io: the policy allows this site alone.
      validatorUrl: null,
      docExpansion: "list",
      defaultModelsExpandDepth: 0,
      persistAuthorization: false,
    });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
