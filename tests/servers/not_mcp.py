"""Not an MCP server: prints `hello` lines on stdout, then waits until its stdin closes.

`python not_mcp.py [PIDFILE]` writes its process id to PIDFILE first, so a test can check that the
client stopped it.
"""

import os
import sys

if len(sys.argv) > 1:
    with open(sys.argv[1], "w", encoding="utf-8") as f:
        f.write(str(os.getpid()))
for i in range(3):
    print(f"hello {i}", flush=True)
while sys.stdin.read(1):
    pass
