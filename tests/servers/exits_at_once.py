"""Not a working server: prints an error on stderr and exits with status 1 before any MCP traffic."""

import sys

print("toy-config: loading settings from /nonexistent/settings.toml", file=sys.stderr)
print("fatal: DATABASE_URL is not set; refusing to start", file=sys.stderr)
sys.exit(1)
