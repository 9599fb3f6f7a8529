# Linkage starter bot (Python 3.11).
# Two players, More and Fewer, take turns laying shared coloured dominoes
# (6 each of R B G Y) on a 7x7 board; at the end More wins with 12 or more
# one-colour groups, Fewer with fewer than 12.
# Protocol: a NEW process is started every turn in your folder. Read
# input.txt: "M6666" (M = you are More, F = Fewer; then dominoes left in
# R B G Y) and 7 rows of '.' empty, 'X' centre, 'x' empty but touching the
# opponent's last domino (forbidden), RBGY played. Write order.txt: colour
# + two adjacent cells, column A-G then row 1-7 from the top ("YA1A2"), or
# "Skip" only when nothing fits. 5 s per turn. Started with any argument,
# print one id line on stdout instead. Stderr is for debugging: koth shows
# it beside your moves in the replay.
# Try it:  koth match --game linkage bot.py   (watch: add --open)
import sys

if len(sys.argv) > 1:
    print("StarterPy. koth starter kit (Python), v1", flush=True)
    sys.exit(0)

lines = open("input.txt").read().split()
me = lines[0][0]                              # 'M' (More) or 'F' (Fewer)
left = dict(zip("RBGY", map(int, lines[0][1:5])))
grid = lines[1:8]                             # grid[row][col], row 0 = row 1


def touching(colour, cells):
    """How many cells next to the domino already hold `colour`."""
    n = 0
    for r, c in cells:
        for rr, cc in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
            if 0 <= rr < 7 and 0 <= cc < 7 and (rr, cc) not in cells and grid[rr][cc] == colour:
                n += 1
    return n


# Strategy: More wants many groups, so it lays the domino touching the
# fewest cells of its own colour; Fewer wants few groups, so it touches the
# most. First found wins ties. This is the place to do better: look ahead,
# count real groups, block the opponent with your 'x' zone...
best, best_score = None, None
for colour in "RBGY":
    if left[colour] == 0:
        continue
    for r in range(7):
        for c in range(7):
            for r2, c2 in ((r, c + 1), (r + 1, c)):       # right, down
                # Only '.' is free: 'x' touches the opponent's last domino.
                if r2 < 7 and c2 < 7 and grid[r][c] == "." and grid[r2][c2] == ".":
                    t = touching(colour, [(r, c), (r2, c2)])
                    score = -t if me == "M" else t
                    if best_score is None or score > best_score:
                        best, best_score = (colour, r, c, r2, c2), score

if best is None:
    order = "Skip"                            # legal only when nothing fits
else:
    colour, r, c, r2, c2 = best
    order = "%s%s%d%s%d" % (colour, "ABCDEFG"[c], r + 1, "ABCDEFG"[c2], r2 + 1)
print(f"{me} {lines[0][1:5]}: {order} (score {best_score})", file=sys.stderr)
with open("order.txt", "w") as f:             # read once this process exits
    f.write(order + "\n")
