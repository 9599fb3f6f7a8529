# Linkage bot: reads input.txt, writes order.txt with the first legal domino,
# in the colour it has most of. With any argument it prints its id line.
import sys

if len(sys.argv) > 1:
    print("FirstFit. koth example bot (Python), v1")
    sys.exit(0)
lines = open("input.txt").read().split("\n")
head, grid = lines[0], lines[1:8]
counts = dict(zip("RBGY", map(int, head[1:5])))
colour = max(counts, key=counts.get)
order = "Skip"
if counts[colour] > 0:
    for r in range(7):
        for c in range(7):
            for (r2, c2) in ((r, c + 1), (r + 1, c)):
                if r2 < 7 and c2 < 7 and grid[r][c] == "." and grid[r2][c2] == ".":
                    order = "%s%s%d%s%d" % (colour, "ABCDEFG"[c], r + 1, "ABCDEFG"[c2], r2 + 1)
                    break
            if order != "Skip":
                break
        if order != "Skip":
            break
open("order.txt", "w").write(order + "\n")
