# Grid-Routing Battle, koth's own bot: builds one column from the bottom
# row up, moving one column east when the next vertex is taken. Breaks
# nothing. Reads every report to know which vertices are no longer free.
import sys

taken = set()
col = height = side = 0
for line in sys.stdin:
    w = line.split()
    if not w:
        continue
    if w[0] == "BEGIN":
        side = int(w[3])
        taken, col, height = set(), 0, 0
    elif w[0] in ("BROKEN", "OWNED"):
        for i, c in enumerate(w[2:]):
            if c != "N":
                x, y = map(int, c.split(","))
                taken.add((x, y))
                if w[0] == "OWNED" and i == 0:
                    height = y + 1
    elif w[0] == "DESTROY":
        print("NONE", flush=True)
    elif w[0] == "ACTIVATE":
        while (col, height) in taken and col < side - 1:
            col += 1
        print("VERTEX %d,%d" % (col, min(height, side - 1)) if height < side else "NONE", flush=True)
    elif w[0] == "SCORE":
        break
