"""The owner API (/v1): DRF views, strict request parsing, signed list cursors, output
serializers and OpenAPI documentation. Views call services and selectors only."""
