# Minimal Flit bot: answers every "M" line with the move "0 0 0 0".
import sys

print("hello from python", file=sys.stderr, flush=True)
for line in sys.stdin:
    if line.rstrip("\r\n") == "M":
        print("0 0 0 0", flush=True)
