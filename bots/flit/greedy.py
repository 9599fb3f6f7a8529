# Flit bot: keeps the board from the updates; on "M" moves a piece next to
# another of its own, preferring squares next to neutral pieces (they convert).
# Linear in the number of pieces, so it stays well inside 50 ms.
import random, sys

N = 32
board = [[0] * N for _ in range(N)]
mine = set()
me = None

def nbrs(x, y):
    return ((x + 1) % N, y), ((x - 1) % N, y), (x, (y + 1) % N), (x, (y - 1) % N)

def choose():
    if len(mine) < 2:
        return "0 0 0 0"
    best, best_gain = None, -1.0
    for (ax, ay) in mine:
        for (tx, ty) in nbrs(ax, ay):
            if board[ty][tx] == 0:
                gain = sum(1 for (nx, ny) in nbrs(tx, ty) if board[ny][nx] == 5) + random.random() * 0.5
                if gain > best_gain:
                    best, best_gain = (tx, ty, ax, ay), gain
    if best is None:
        return "0 0 0 0"
    tx, ty, ax, ay = best
    # Move any other piece; the anchor (ax, ay) stays so the target stays legal.
    for (x0, y0) in random.sample(sorted(mine), min(len(mine), 8)):
        if (x0, y0) != (ax, ay):
            return "%d %d %d %d" % (x0, y0, tx, ty)
    return "0 0 0 0"

for line in sys.stdin:
    f = line.split()
    if f == ["M"]:
        print(choose(), flush=True)
    elif len(f) == 1:
        me = int(f[0])
    elif len(f) == 3:
        x, y, c = map(int, f)
        if board[y][x] == me:
            mine.discard((x, y))
        board[y][x] = c
        if c == me:
            mine.add((x, y))
