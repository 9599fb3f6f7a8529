# Slime bot for koth's corpus (koth's own) that keeps a file in its own
# folder for the whole tournament, as the seed allows ("You may read and
# write files within your own folder in order to persist data"): calls.txt
# counts every turn it was ever asked, over all its games, and it plays the
# (count mod k)-th of its k legal spreads (else jumps), in reading order. So
# its second game differs from its first only if the file was kept. It
# writes the file before answering: the original controller went on once it
# had read the line, koth stops the process then.
import os
import sys

arg = sys.argv[1].split(",")
me, rows = arg[0], arg[1:]
n = len(rows)
store = os.path.join(os.path.dirname(os.path.abspath(__file__)), "calls.txt")
try:
    with open(store) as f:
        calls = int(f.read().strip() or 0)
except FileNotFoundError:
    calls = 0
with open(store, "w") as f:
    f.write("%d\n" % (calls + 1))

for reach in (1, 2):
    moves = [
        (r, c, r2, c2)
        for r in range(n)
        for c in range(n)
        if rows[r][c] == me
        for r2 in range(max(0, r - reach), min(n, r + reach + 1))
        for c2 in range(max(0, c - reach), min(n, c + reach + 1))
        if max(abs(r2 - r), abs(c2 - c)) == reach and rows[r2][c2] == "."
    ]
    if moves:
        print("%d %d %d %d" % moves[calls % len(moves)])
        break
else:
    print("0 0 0 0")
