# Flit starter bot (Python 3.11).
# Four bots on a 32x32 torus (edges wrap; neighbours are up/down/left/right)
# take turns moving one of their pieces to any empty square next to ANOTHER
# of their pieces; landing next to a neutral piece converts it. Most pieces wins.
# Protocol (stdin/stdout, one long-lived process):
#   first line: your colour, "1" to "4";
#   then updates "x y c" (x = column, y = row, c = 0 empty, 1-4 a bot,
#   5 neutral) and, on your turn, "M": answer "x0 y0 x1 y1" and flush.
#   The board is never resent: keep it up to date from the updates yourself.
#   "x y x y" (same square twice) passes; an illegal move is a pass counted
#   as invalid output. Four passes in a row end the game.
#   50 ms per move; 5 timeouts in a row freeze you. There is no end message:
#   koth stops your process when the game ends (exit if stdin closes).
# Stderr is for debugging: koth shows it beside your moves in the replay.
# Try it:  koth match --game flit bot.py   (watch: add --open)
import sys
from collections import deque

N = 32
FAR = 99                          # "distance" when there is no neutral piece
board = [0] * (N * N)             # board[y*N + x]: 0 empty, 1-4 bots, 5 neutral
NB = [[((x + 1) % N) + y * N, ((x - 1) % N) + y * N, x + ((y + 1) % N) * N,
       x + ((y - 1) % N) * N] for y in range(N) for x in range(N)]
me = 0


def distances():
    """Steps from every square to the nearest neutral piece (a BFS)."""
    dist = [FAR] * (N * N)
    todo = deque(i for i in range(N * N) if board[i] == 5)
    for i in todo:
        dist[i] = 0
    while todo:
        i = todo.popleft()
        for j in NB[i]:
            if dist[j] == FAR:
                dist[j] = dist[i] + 1
                todo.append(j)
    return dist


def choose():
    """Your strategy goes here. This one: land where the most neutral pieces
    are taken, else as close as possible to one (else where our pieces are
    densest), and move our piece that is farthest from any neutral."""
    dist = distances()
    mine = [i for i in range(N * N) if board[i] == me]
    own = lambda i: sum(board[j] == me for j in NB[i])
    best, best_score = None, -1
    for i in range(N * N):        # a legal target: empty, next to our piece
        if board[i] == 0 and own(i) > 0:
            takes = sum(board[j] == 5 for j in NB[i])
            score = takes * 10000 + (100 - dist[i]) * 10 + own(i)
            if score > best_score:
                best, best_score = i, score
    if best is None or len(mine) < 2:
        return "0 0 0 0", 0       # nothing legal: pass
    # The target must stay next to another of our pieces once the mover left.
    anchors = [j for j in NB[best] if board[j] == me]
    movers = [i for i in mine if anchors != [i]]
    origin = max(movers, key=lambda i: dist[i] * 10 + 4 - own(i))
    takes = best_score // 10000
    return f"{origin % N} {origin // N} {best % N} {best // N}", takes


for line in sys.stdin:
    words = line.split()
    if words == ["M"]:
        move, takes = choose()
        if takes:
            print(f"{move}: takes {takes} neutral", file=sys.stderr)
        print(move, flush=True)
    elif len(words) == 1:         # the very first line: our colour
        me = int(words[0])
    elif len(words) == 3:         # an update "x y c"
        x, y, c = map(int, words)
        board[y * N + x] = c
