# Snake bot over TCP: connects to 127.0.0.1:4040, sends its name, then picks
# the direction with the most free space ahead (a flood fill).
import socket

N = 32
seen = set()
s = socket.create_connection(("127.0.0.1", 4040))
f = s.makefile("rw")
f.write("tcp_survivor\n")
f.flush()

def step(p, d):
    r, c = divmod(p, N)
    r, c = {"u": (r - 1, c), "d": (r + 1, c), "l": (r, c - 1), "r": (r, c + 1)}[d]
    return r * N + c if 0 <= r < N and 0 <= c < N else None

def room(start):
    todo, area = [start], {start}
    while todo and len(area) < 200:
        p = todo.pop()
        for d in "udlr":
            q = step(p, d)
            if q is not None and q not in seen and q not in area:
                area.add(q)
                todo.append(q)
    return len(area)

while True:
    line = f.readline().strip()
    if not line or line in ("WIN", "LOSS", "TIE"):
        break
    me, them = map(int, line.split())
    seen.update((me, them))
    best = max("udlr", key=lambda d: room(step(me, d)) if step(me, d) is not None and step(me, d) not in seen else -1)
    f.write(best + "\n")
    f.flush()
