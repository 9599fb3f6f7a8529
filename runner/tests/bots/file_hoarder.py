# Slime, a process per turn: keeps "state" in files of its folder, 8 MiB
# more each turn, until its box (whose memory the files count against) is
# full. Then answers the first move it finds.
import os
import sys

n = len([f for f in os.listdir(".") if f.startswith("state-")])
with open("state-%d" % n, "wb") as f:
    f.write(b"\1" * (8 << 20))
arg = sys.argv[1].split(",")
me, rows = arg[0], arg[1:]
for r, row in enumerate(rows):
    for c, cell in enumerate(row):
        if cell == me:
            for r2, c2 in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
                if 0 <= r2 < len(rows) and 0 <= c2 < len(row) and rows[r2][c2] == ".":
                    print(r, c, r2, c2)
                    sys.exit(0)
print("0 0 0 0")
