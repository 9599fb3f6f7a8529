# Slime, a process per turn: answers a move (the first it finds), closes
# its output and spins on until koth stops it.
import os
import sys

arg = sys.argv[1].split(",")
me, rows = arg[0], arg[1:]
move = "0 0 0 0"
for r, row in enumerate(rows):
    for c, cell in enumerate(row):
        for r2, c2 in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
            if cell == me and 0 <= r2 < len(rows) and 0 <= c2 < len(row) and rows[r2][c2] == ".":
                move = "%d %d %d %d" % (r, c, r2, c2)
sys.stdout.write(move + "\n")
sys.stdout.flush()
os.close(1)
while True:
    pass
