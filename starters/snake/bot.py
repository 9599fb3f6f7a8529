# Snake starter bot (Python 3.11).
# Tron light cycles for 2 players on a 32x32 board: both snakes move one cell
# per turn at the same time and leave a permanent trail; whoever crashes
# (edge, any trail, or the other head) last wins.
# Protocol (stdin/stdout, one long-lived process):
#   first print an id line (your bot's name);
#   then each turn you get "ME THEM": the cells of both heads, cell = row*32 + col
#   (you always see the board as the snake that started at 484);
#   answer one line "u", "d", "l" or "r" and flush. Anything else crashes you.
#   At the end you get "WIN", "LOSS" or "TIE" instead; then exit.
# Only the heads are sent: remember the trails yourself. 200 ms per move.
# Stderr is for debugging: koth shows it beside your moves in the replay.
# Try it:  koth match --game snake bot.py   (watch: add --open)
import sys

N = 32
taken = [False] * (N * N)        # every cell either snake has ever occupied
MOVES = {"u": (-1, 0), "d": (1, 0), "l": (0, -1), "r": (0, 1)}


def step(p, d):
    """The cell reached from p going d, or None past the edge."""
    r, c = divmod(p, N)
    dr, dc = MOVES[d]
    r, c = r + dr, c + dc
    return r * N + c if 0 <= r < N and 0 <= c < N else None


def free(p):
    return p is not None and not taken[p]


def room(start):
    """How many free cells can be reached from start (a flood fill)."""
    seen, todo = {start}, [start]
    while todo:
        p = todo.pop()
        for d in MOVES:
            q = step(p, d)
            if free(q) and q not in seen:
                seen.add(q)
                todo.append(q)
    return len(seen)


def choose(me, them):
    """Your strategy goes here. This one: go where the most room is; on a
    tie, prefer a cell the opponent cannot also step into (head-on = tie)."""
    best, best_score = "u", -1   # if every way is blocked we crash anyway
    for d in MOVES:
        q = step(me, d)
        if not free(q):
            continue
        contested = any(step(them, e) == q for e in MOVES)
        score = room(q) * 2 + (0 if contested else 1)
        if score > best_score:
            best, best_score = d, score
    return best


print("starter_py", flush=True)   # the id line
for line in sys.stdin:
    words = line.split()
    if len(words) != 2:          # "WIN", "LOSS" or "TIE": the match is over
        print("result:", line.strip(), file=sys.stderr)
        break
    me, them = int(words[0]), int(words[1])
    taken[me] = taken[them] = True
    move = choose(me, them)
    print(f"at {me}, opponent at {them}: {move}", file=sys.stderr)
    print(move, flush=True)
