# Snake over TCP that prints a debug line to stdout every turn (as the
# original project's example TCP bot did): connects, sends its name, then
# hugs the walls.
import socket

N = 32
seen = set()
s = socket.create_connection(("127.0.0.1", 4040))
f = s.makefile("rw")
f.write("tcp_chatty\n")
f.flush()
order, heading = "urdl", 0


def step(p, d):
    r, c = divmod(p, N)
    r, c = {"u": (r - 1, c), "d": (r + 1, c), "l": (r, c - 1), "r": (r, c + 1)}[d]
    return r * N + c if 0 <= r < N and 0 <= c < N else None


turn = 0
while True:
    line = f.readline().strip()
    if not line or line in ("WIN", "LOSS", "TIE"):
        print(f"debug: the game ended: {line or 'EOF'}", flush=True)
        break
    turn += 1
    me, them = map(int, line.split())
    seen.update((me, them))
    for k in range(4):
        q = step(me, order[(heading + k) % 4])
        if q is not None and q not in seen:
            heading = (heading + k) % 4
            break
    print(f"debug: turn {turn} at {me}, going {order[heading]}", flush=True)
    f.write(order[heading] + "\n")
    f.flush()
