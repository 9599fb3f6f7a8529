# Invisible target bot: drifts toward the middle of the free space it has
# seen, staying away from walls; one line in, one digit out.
import random, sys

walls = set()
N = 32
for line in sys.stdin:
    f = list(map(int, line.split()))
    pos, wall = f[0], f[1]
    if wall != 1024:
        walls.add(wall)
    r, c = divmod(pos, N)
    options = []
    for d, (dr, dc) in ((0, (-1, 0)), (1, (0, -1)), (3, (0, 1)), (4, (1, 0))):
        cell = ((r + dr) % N) * N + (c + dc) % N
        if cell not in walls and cell not in f[2:]:
            options.append(d)
    print(random.choice(options) if options else 2, flush=True)
