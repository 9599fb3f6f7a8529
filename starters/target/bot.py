# Invisible target starter bot (Python 3.11).
# 2-16 bots wander a 32x32 torus while walls appear; at the end (when no
# more wall can be placed) the bot nearest the hidden target cell wins.
# Protocol (stdin/stdout, one long-lived process), every turn one line:
#   "POS WALL ENEMY..."  cells numbered row*32 + col; WALL is the wall added
#   since your last turn, or 1024 for none; enemies always in the same order.
# Answer one digit and flush: 0 up, 1 left, 2 stay, 3 right, 4 down
# (the board wraps around). Moving into a wall, or into a cell another bot
# also wants, leaves you where you are. 50 ms per move, or you stay.
# Nothing is sent at the end: stdin closes and the bot is stopped.
# Stderr is for debugging: koth shows it beside your moves in the replay.
# Try it:  koth match --game target bot.py   (watch: add --open)
import random
import sys

N = 32
CELLS = N * N
NO_WALL = 1024
DIRS = (0, 1, 3, 4)              # up, left, right, down (2 = stay)


def step(p, d):
    """The cell reached from p going d, wrapping around the edges."""
    r, c = divmod(p, N)
    if d == 0: r = (r - 1) % N
    elif d == 1: c = (c - 1) % N
    elif d == 3: c = (c + 1) % N
    elif d == 4: r = (r + 1) % N
    return r * N + c


NEXT = [[step(p, d) for d in DIRS] for p in range(CELLS)]
wall = [False] * CELLS           # walls never go away: remember them all


def farthest(start, enemies):
    """Walking distance (a BFS around walls) from start to the farthest likely
    target: a dead end (a cell with at most one open side) that no other bot
    stands on; while there are none, the farthest reachable cell."""
    dist = [-1] * CELLS
    dist[start] = 0
    todo = [start]
    far_dead_end = -1
    for p in todo:               # the list grows while we walk it
        open_sides = 0
        for q in NEXT[p]:
            if not wall[q]:
                open_sides += 1
                if dist[q] < 0:
                    dist[q] = dist[p] + 1
                    todo.append(q)
        if open_sides <= 1 and p not in enemies:
            far_dead_end = dist[p]
    # A BFS meets the farthest cells last.
    return far_dead_end if far_dead_end >= 0 else dist[todo[-1]]


# Strategy: the target is somewhere in the area we can reach (walls never cut
# a bot off from it). A wall can always fill a dead end unless a bot or the
# target is on it, so the dead ends that stay open are where the target hides:
# at the very end it is the only one no bot stands on. So stand where the
# farthest such dead end is nearest (early on, when there are none: at the
# centre of the area), and follow that spot as walls close in.
# This is the place to do better: weigh dead ends by how long they have stayed
# open, keep out of other bots' way or block them...
turn, last_pos, last_move = 0, -1, 2
for line in sys.stdin:
    turn += 1
    f = [int(x) for x in line.split()]
    pos, new_wall, enemies = f[0], f[1], set(f[2:])
    if new_wall != NO_WALL:
        wall[new_wall] = True
    best, best_far = 2, farthest(pos, enemies)     # staying is the default
    for d in DIRS:
        q = step(pos, d)
        if wall[q] or q in enemies:
            continue                               # that move would fail
        far = farthest(q, enemies)
        if far < best_far:
            best, best_far = d, far
    # A move that did not happen means another bot wanted the same cell; if
    # both insist, neither ever moves again. So after one, wait half the time.
    if last_move != 2 and pos == last_pos and random.random() < 0.5:
        best = 2
    last_pos, last_move = pos, best
    if new_wall != NO_WALL:
        print(f"turn {turn}: wall at {new_wall}, I'm at {pos}, move {best}, "
              f"farthest likely target {best_far} steps away", file=sys.stderr)
    print(best, flush=True)
