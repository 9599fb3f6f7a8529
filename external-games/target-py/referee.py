# Invisible target (docs/games/target.md) as an external referee: the same
# rules as koth's built-in game (games/src/target.rs), move for move, from
# the same seed. It is the proof that a game written outside koth plays
# exactly like one inside it: runner/tests/referees.rs checks the built-in
# game's replays with this referee and plays it beside the built-in one.
#
# Its randomness is the built-in game's: a ChaCha8 generator seeded from the
# 64-bit seed as rand_core 0.6's seed_from_u64 does it (PCG32 fills the
# 32-byte key), drawn with rand 0.8's gen_range (widening multiply with a
# rejection zone) and gen_bool (a 64-bit draw below p * 2^64).
import json
import sys

M32 = 0xFFFFFFFF
M64 = 0xFFFFFFFFFFFFFFFF


class ChaCha8:
    def __init__(self, seed):
        key = []
        state = seed
        for _ in range(8):
            state = (state * 6364136223846793005 + 11634580027462260723) & M64
            xorshifted = (((state >> 18) ^ state) >> 27) & M32
            rot = state >> 59
            key.append(((xorshifted >> rot) | (xorshifted << ((32 - rot) & 31))) & M32)
        self.key = key
        self.counter = 0
        self.words = []
        self.index = 0

    def _block(self):
        s = [0x61707865, 0x3320646E, 0x79622D32, 0x6B206574] + self.key + [self.counter & M32, self.counter >> 32, 0, 0]
        x = s[:]

        def qr(a, b, c, d):
            x[a] = (x[a] + x[b]) & M32
            x[d] ^= x[a]
            x[d] = ((x[d] << 16) | (x[d] >> 16)) & M32
            x[c] = (x[c] + x[d]) & M32
            x[b] ^= x[c]
            x[b] = ((x[b] << 12) | (x[b] >> 20)) & M32
            x[a] = (x[a] + x[b]) & M32
            x[d] ^= x[a]
            x[d] = ((x[d] << 8) | (x[d] >> 24)) & M32
            x[c] = (x[c] + x[d]) & M32
            x[b] ^= x[c]
            x[b] = ((x[b] << 7) | (x[b] >> 25)) & M32

        for _ in range(4):
            qr(0, 4, 8, 12)
            qr(1, 5, 9, 13)
            qr(2, 6, 10, 14)
            qr(3, 7, 11, 15)
            qr(0, 5, 10, 15)
            qr(1, 6, 11, 12)
            qr(2, 7, 8, 13)
            qr(3, 4, 9, 14)
        self.counter += 1
        return [(x[i] + s[i]) & M32 for i in range(16)]

    def next_u64(self):
        # Only whole 64-bit draws are made, so pairs of words never straddle
        # a block: the low word first.
        if self.index >= len(self.words):
            self.words = self._block()
            self.index = 0
        lo, hi = self.words[self.index], self.words[self.index + 1]
        self.index += 2
        return (hi << 32) | lo

    def gen_range(self, n):
        """A number in 0..n, as rand 0.8's UniformInt::sample_single."""
        rng = n & M64
        zone = ((rng << (64 - rng.bit_length())) & M64) - 1
        while True:
            product = self.next_u64() * rng
            if product & M64 <= zone:
                return product >> 64

    def gen_bool(self, p):
        return self.next_u64() < int(p * 2.0**64)


SIZE = 32
CELLS = SIZE * SIZE
NO_WALL = CELLS
WALL_CHANCE = 1.0 / 7.0
SATURATED_TURNS = 10
MAX_TURNS = 50000


def neighbour(p, d):
    r, c = divmod(p, SIZE)
    if d == 0:
        return ((r + SIZE - 1) % SIZE) * SIZE + c
    if d == 1:
        return r * SIZE + (c + SIZE - 1) % SIZE
    if d == 3:
        return r * SIZE + (c + 1) % SIZE
    if d == 4:
        return ((r + 1) % SIZE) * SIZE + c
    return p


NEIGHBOURS = [[neighbour(p, d) for d in (0, 1, 3, 4)] for p in range(CELLS)]


def torus(x, y):
    d = abs(x - y)
    return min(d, SIZE - d)


def distance(a, b):
    return torus(a // SIZE, b // SIZE) + torus(a % SIZE, b % SIZE)


class Target:
    def __init__(self, seats, seed):
        self.rng = ChaCha8(seed)
        self.target = self.rng.gen_range(CELLS)
        players = []
        for _ in range(seats):
            free = [c for c in range(CELLS)
                    if all(torus(c // SIZE, p // SIZE) > 2 or torus(c % SIZE, p % SIZE) > 2 for p in players)]
            players.append(free[self.rng.gen_range(len(free))])
        self.players = players
        self.wall = [False] * CELLS
        self.last_wall = NO_WALL
        self.turn = 0
        self.saturated_for = 0

    def over(self):
        return self.saturated_for >= SATURATED_TURNS or self.turn >= MAX_TURNS

    def resolve(self, dirs):
        dest = []
        for p, d in zip(self.players, dirs):
            n = neighbour(p, d)
            dest.append(p if self.wall[n] else n)
        while True:
            clashing = [i for i in range(len(dest))
                        if dest[i] != self.players[i] and any(j != i and dest[j] == dest[i] for j in range(len(dest)))]
            if not clashing:
                return dest
            for i in clashing:
                dest[i] = self.players[i]

    def wall_candidates(self):
        """Cells a wall may go on: reached from the target, free, and not
        cutting a bot off from it (articulation points by one DFS)."""
        unseen = -1
        disc = [unseen] * CELLS
        low = [0] * CELLS
        parent = [-1] * CELLS
        bots_below = [0] * CELLS
        cuts = [False] * CELLS
        wall = self.wall
        for p in self.players:
            bots_below[p] += 1
        time = 0
        disc[self.target] = low[self.target] = 0
        stack = [[self.target, 0]]
        while stack:
            top = stack[-1]
            v = top[0]
            if top[1] < 4:
                w = NEIGHBOURS[v][top[1]]
                top[1] += 1
                if wall[w]:
                    continue
                if disc[w] == unseen:
                    time += 1
                    disc[w] = low[w] = time
                    parent[w] = v
                    stack.append([w, 0])
                elif w != parent[v]:
                    if disc[w] < low[v]:
                        low[v] = disc[w]
            else:
                stack.pop()
                u = parent[v]
                if u != -1:
                    if low[v] < low[u]:
                        low[u] = low[v]
                    bots_below[u] += bots_below[v]
                    if low[v] >= disc[u] and bots_below[v] > 0:
                        cuts[u] = True
        players = set(self.players)
        return [c for c in range(CELLS) if disc[c] != unseen and c != self.target and c not in players and not cuts[c]]

    def requests(self):
        out = []
        for s, p in enumerate(self.players):
            others = "".join(" %d" % q for o, q in enumerate(self.players) if o != s)
            out.append({"seat": s, "text": "%d %d%s" % (p, self.last_wall, others)})
        return out

    def apply(self, answers):
        self.turn += 1
        dirs = [2] * len(self.players)
        judgements = []
        for a in answers:
            if a["status"] != "answer":
                continue  # koth records a timeout or a gone bot as it is
            d = parse_digit(a["text"])
            if d is not None and d <= 4:
                dirs[a["seat"]] = d
                judgements.append({"seat": a["seat"], "move": str(d)})
            else:
                judgements.append({"seat": a["seat"], "invalid": "expected one digit 0-4; treated as 2 (stay)"})
        self.players = self.resolve(dirs)
        events = [{"type": "move", "turn": self.turn, "moves": dirs, "positions": self.players}]
        self.last_wall = NO_WALL
        cands = self.wall_candidates()
        if self.rng.gen_bool(WALL_CHANCE) and cands:
            c = cands[self.rng.gen_range(len(cands))]
            self.wall[c] = True
            self.last_wall = c
            events.append({"type": "wall", "cell": c})
        self.saturated_for = 0 if cands else self.saturated_for + 1
        return judgements, events

    def standings(self):
        dist = [distance(p, self.target) for p in self.players]
        best = min(dist)
        scores = [1 if d == best else 0 for d in dist]
        ranks = [1 + sum(1 for o in dist if o < d) for d in dist]
        return scores, ranks

    def view(self):
        cells = ["#" if w else "." for w in self.wall]
        cells[self.target] = "*"
        for s, p in enumerate(self.players):
            cells[p] = "0123456789abcdef"[s]
        d = " ".join(str(distance(p, self.target)) for p in self.players)
        return {"width": SIZE, "height": SIZE, "cells": "".join(cells),
                "marks": [{"cell": self.target, "seat": None, "label": "target"}],
                "caption": "turn %d: distance to the target %s" % (self.turn, d)}


def parse_digit(text):
    """Rust's `text.trim().parse::<u8>()`: an optional '+', then digits,
    at most 255; None otherwise."""
    s = text.strip()
    if s.startswith("+"):
        s = s[1:]
    if not s or not all("0" <= ch <= "9" for ch in s):
        return None
    v = int(s)
    return v if v <= 255 else None


def answer(game, judgements=None, events=None, initial=None):
    scores, ranks = game.standings()
    # turn: the turn whose answers this answers (0: the start).
    out = {"turn": game.turn, "view": game.view(), "scores": scores, "ranks": ranks, "over": game.over()}
    if not game.over():
        out["requests"] = game.requests()
    if judgements:
        out["judgements"] = judgements
    if events:
        out["events"] = events
    if initial is not None:
        out["initial"] = initial
    sys.stdout.write(json.dumps(out, separators=(",", ":")) + "\n")
    sys.stdout.flush()


game = None
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "start":
        game = Target(len(msg["seats"]), int(msg["seed"]))
        answer(game, initial={"size": SIZE, "target": game.target, "positions": game.players})
    else:
        judgements, events = game.apply(msg["answers"])
        answer(game, judgements, events)
