"""The recall surface of the owner API: POST /v1/memories/search."""
