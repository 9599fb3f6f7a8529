# Slime bot for koth's corpus (koth's own): the move that gains the most
# squares, the LAST one found on ties, answered with words after the four
# numbers ("2 3 3 4 spread, gains 2"). The original controller read the
# first four integers of the line, so these are moves there, and in koth.
import sys

arg = sys.argv[1].split(",")
me, rows = arg[0], arg[1:]
n = len(rows)


def around(r, c):
    for rr in range(r - 1, r + 2):
        for cc in range(c - 1, c + 2):
            if (rr, cc) != (r, c) and 0 <= rr < n and 0 <= cc < n:
                yield rr, cc


best, best_gain, what = None, -100, ""
for r in range(n):
    for c in range(n):
        if rows[r][c] != me:
            continue
        for r2 in range(max(0, r - 2), min(n, r + 3)):
            for c2 in range(max(0, c - 2), min(n, c + 3)):
                dist = max(abs(r2 - r), abs(c2 - c))
                t = rows[r2][c2]
                if t == "." and dist in (1, 2):
                    gain = sum(1 for a, b in around(r2, c2) if rows[a][b] not in (".", me))
                    gain, kind = gain + (dist == 1), ("spread" if dist == 1 else "jump")
                elif t == me and dist == 1:
                    gain, kind = sum(1 for a, b in around(r2, c2) if rows[a][b] == ".") - 1, "merge"
                else:
                    continue
                if gain >= best_gain:
                    best, best_gain, what = (r, c, r2, c2), gain, kind
if best is None:
    print("pass: nothing to move")
else:
    print("%d %d %d %d %s, gains %d" % (best + (what, best_gain)))
