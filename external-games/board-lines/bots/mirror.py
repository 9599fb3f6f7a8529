# Reads a board of three lines a turn; answers three lines on odd turns
# (each row mirrored), the rows bottom to top and END on even ones.
import sys

turn = 0
while True:
    rows = [sys.stdin.readline() for _ in range(3)]
    if not rows[2]:
        break
    rows = [r.rstrip("\n") for r in rows]
    turn += 1
    if turn % 2 == 1:
        out = [r[::-1] for r in rows]
    else:
        out = rows[::-1] + ["END"]
    print("\n".join(out), flush=True)
