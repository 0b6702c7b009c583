// The API docs page (templates/docs.html): Swagger UI over this server's OpenAPI document.
// A file of its own, as the pages' Content-Security-Policy allows no inline script; Swagger UI
// comes from this server too (/static/swagger-ui/), so the page needs no other network.
"use strict";
window.ui = SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#swagger-ui",
  layout: "BaseLayout",
  deepLinking: true,
  showExtensions: true,
  showCommonExtensions: true,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIBundle.SwaggerUIStandalonePreset],
  // Swagger UI would otherwise send the document to an online validator for its badge.
  validatorUrl: null,
});
