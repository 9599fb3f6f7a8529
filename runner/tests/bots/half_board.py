# Hostile, for external-games/board-lines: reads the board, answers one
# line of three, then hangs (it times out).
import sys
import time

rows = [sys.stdin.readline() for _ in range(3)]
print(rows[0].rstrip("\n")[::-1], flush=True)
while True:
    time.sleep(60)
