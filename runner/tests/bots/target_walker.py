# A deterministic Invisible target bot for the external-referee tests:
# its move is a function of what it is told (position, last wall, the
# others), so two runs of the same match answer alike.
import sys

for line in sys.stdin:
    f = [int(x) for x in line.split()]
    print((f[0] * 7 + f[1] * 3 + sum(f[2:])) % 5, flush=True)
