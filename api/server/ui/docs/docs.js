// The API reference, drawn from this server's own OpenAPI document. Swagger UI is served from
// this folder (swagger-ui-dist 5.35.0, Apache License 2.0: see LICENSE and NOTICE here), so the
// page loads nothing from another origin and works offline.
window.ui = SwaggerUIBundle({ url: "/openapi.json", dom_id: "#swagger-ui", deepLinking: true });
