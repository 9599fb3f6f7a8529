# Slime bot: the move that gains the most squares (spread, jump or merge).
import sys

arg = sys.argv[1].split(",")
me, rows = arg[0], [list(r) for r in arg[1:]]
n = len(rows)

def around(r, c):
    for dr in (-1, 0, 1):
        for dc in (-1, 0, 1):
            rr, cc = r + dr, c + dc
            if (dr or dc) and 0 <= rr < n and 0 <= cc < n:
                yield rr, cc

best, best_gain = None, -99
for r in range(n):
    for c in range(n):
        if rows[r][c] != me:
            continue
        for r2 in range(max(0, r - 2), min(n, r + 3)):
            for c2 in range(max(0, c - 2), min(n, c + 3)):
                dist = max(abs(r2 - r), abs(c2 - c))
                t = rows[r2][c2]
                if t == "." and dist in (1, 2):
                    gain = sum(1 for (a, b) in around(r2, c2) if rows[a][b] not in (".", me))
                    gain += 1 if dist == 1 else 0
                elif t == me and dist == 1:
                    gain = sum(1 for (a, b) in around(r2, c2) if rows[a][b] == "." and (a, b) != (r, c)) - 1
                else:
                    continue
                if gain > best_gain:
                    best, best_gain = (r, c, r2, c2), gain
print("%d %d %d %d" % best if best else "0 0 0 0")
