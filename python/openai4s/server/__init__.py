"""Host-side session runtime (the HTTP/WebSocket server arrives later)."""
