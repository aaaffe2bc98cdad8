// Boots Swagger UI on /docs against the server's own OpenAPI document. A served file, not an inline
// script, so the page's Content-Security-Policy can forbid inline scripts altogether.
window.addEventListener('load', function () {
  window.ui = window.SwaggerUIBundle({
    url: '/v1/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    presets: [window.SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
    // Nothing leaves the server: no validator badge calling out, no remote config.
    validatorUrl: null,
    tryItOutEnabled: false,
  });
});
