# Grid-Routing Battle, a King-of-the-Hill challenge of Code Golf Stack
# Exchange (https://codegolf.stackexchange.com/questions/46886, by Zgarb,
# 2015), as a koth referee. Written for koth from the challenge's rules and
# from what its original controller (Python 3, github.com/iatorm/grid-routing-battle,
# controller.py) does; none of its code is in it (ORIGIN.md).
#
# N bots share a square grid of S = int(4/3 * N*N) columns and rows that
# wraps around east-west; every vertex (x, y) below the top row has edges to
# (x-1, y+1), (x, y+1) and (x+1, y+1). A round is N*N turns; a turn is a
# destruction phase (every bot may break one inactive vertex) and an
# activation phase (every bot may activate one; several bots that activate
# the same vertex in the same phase all own it). Each phase asks every bot
# at once; their choices are applied in seat order, so of two bots breaking
# the same vertex only the first breaks it (the second's choice is reported
# as none), as the original controller, which asked them one after another,
# did.
#
# Every bot is one long-lived process (stdio) and every request is two
# lines: the report of the last phase, then the order:
#   BEGIN N T S              (the first report), or
#   BROKEN t MINE E1 E2 ...  (after a destruction phase), or
#   OWNED t MINE E1 E2 ...   (after an activation phase),
# then "DESTROY t" or "ACTIVATE t". A choice is "x,y" or "N". The bot sees
# its own choice first and the others' in an order of its own, drawn at the
# start and fixed for the match: it never learns which bot is which. It
# answers "VERTEX x,y" or "NONE". After the last turn it gets the last report
# and "SCORE MINE E1 E2 ..." (the others in its own order) and the match is
# over.
#
# Scoring, as the original controller does it: from every active source
# (bottom row), N times, a depth-first search over active vertices that
# takes the children of each vertex in a random order finds a path to the
# top row, if there is one; every owner of every vertex on it scores 1.
# Every random draw (the others' order for each bot, the searches' orders)
# comes from Python's `random` seeded with the match's seed, in the order
# the original controller draws them, so the original controller run with
# `random.seed(SEED)` scores a line-up exactly as this referee does.
#
# Where the original controller stopped the whole tournament (an answer
# that is not VERTEX or NONE, a vertex off the grid, VERTEX with no valid
# "x,y"; a bot that died reads as an empty answer there), this referee
# judges the answer invalid and reads it as NONE; a timeout is NONE.
import json
import random
import sys

INACTIVE, ACTIVE, BROKEN = 0, 1, 2
SEAT_CODES = "0123456789abcdef"


def parse(text, side):
    """An answer as the original controller reads it: (vertex or None,
    why it is invalid or None)."""
    words = text.split()
    if words and words[0] == "NONE":
        return None, None
    if not words or words[0] != "VERTEX":
        return None, "answer VERTEX x,y or NONE; read as NONE"
    try:
        x, y = (int(v) for v in words[1].split(","))
    except (IndexError, ValueError):
        return None, "VERTEX needs x,y (two whole numbers); read as NONE"
    if not (0 <= x < side and 0 <= y < side):
        return None, "vertex %d,%d is off the %d x %d grid; read as NONE" % (x, y, side, side)
    return (x, y), None


def show(pos):
    return "N" if pos is None else "%d,%d" % pos


class Game:
    def __init__(self, msg):
        self.names = [s["name"] for s in msg["seats"]]
        n = len(self.names)
        if not 1 <= n <= 13:
            raise SystemExit("Grid-Routing Battle takes 1 to 13 bots here (a grid of at most 256 columns), not %d" % n)
        self.rng = random.Random(int(msg["seed"]))
        self.n = n
        self.turns = n * n
        self.side = int(4 / 3 * self.turns)
        # Each bot's order of the others: the first draws of the match.
        self.others = []
        for me in range(n):
            order = [s for s in range(n) if s != me]
            self.rng.shuffle(order)
            self.others.append(order)
        self.status = [[INACTIVE] * self.side for _ in range(self.side)]  # [y][x]
        self.owners = [[set() for _ in range(self.side)] for _ in range(self.side)]
        self.turn = 0
        self.phase = "DESTROY"
        self.reports = ["BEGIN %d %d %d" % (n, self.turns, self.side)] * n
        self.scores = [0] * n

    def report(self, word, choices):
        return ["%s %d %s" % (word, self.turn, " ".join(show(choices[s]) for s in [me] + self.others[me]))
                for me in range(self.n)]

    def requests(self):
        order = "%s %d" % (self.phase, self.turn)
        return [{"seat": s, "lines": [self.reports[s], order]} for s in range(self.n)]

    def view(self):
        cells = []
        for y in reversed(range(self.side)):
            for x in range(self.side):
                st = self.status[y][x]
                if st == INACTIVE:
                    cells.append(".")
                elif st == BROKEN:
                    cells.append("#")
                else:
                    own = self.owners[y][x]
                    cells.append(SEAT_CODES[min(own)] if len(own) == 1 else "+")
        caption = "turn %d of %d, %s" % (min(self.turn + 1, self.turns), self.turns,
                                         "over: scores " + " ".join(map(str, self.scores)) if self.turn >= self.turns
                                         else ("destruction" if self.phase == "DESTROY" else "activation"))
        return {"width": self.side, "height": self.side, "cells": "".join(cells), "caption": caption}

    def children(self, x, y):
        """The active vertices above (x, y), west to east, as the original lists them."""
        if y == self.side - 1:
            return []
        row = self.status[y + 1]
        return [(c, y + 1) for c in ((x - 1) % self.side, x, (x + 1) % self.side) if row[c] == ACTIVE]

    def route(self, x):
        """One random depth-first search from source (x, 0): the vertices of
        the path found to the top row, or [] when there is none."""
        succ = self.children(x, 0)
        self.rng.shuffle(succ)
        stack = [((x, 0), succ)]
        seen = set()
        while stack:
            (cx, cy), todo = stack[-1]
            if cy == self.side - 1:
                return [v for v, _ in stack]
            if not todo:
                stack.pop()
                continue
            nxt = todo.pop(0)
            if nxt in seen:
                continue
            succ = self.children(*nxt)
            self.rng.shuffle(succ)
            stack.append((nxt, succ))
            seen.add(nxt)
        return []

    def score(self):
        for x in range(self.side):
            if self.status[0][x] != ACTIVE:
                continue
            for _ in range(self.n):
                for (vx, vy) in self.route(x):
                    for s in self.owners[vy][vx]:
                        self.scores[s] += 1

    def answer(self, turn, extra=None):
        over = self.turn >= self.turns
        out = {"turn": turn, "view": self.view(), "scores": self.scores, "over": over}
        if over:
            out["notices"] = [{"seat": me, "lines": [self.reports[me], "SCORE " + " ".join(
                str(self.scores[s]) for s in [me] + self.others[me])]} for me in range(self.n)]
        else:
            out["requests"] = self.requests()
        out.update(extra or {})
        return out

    def play(self, msg):
        texts = [None] * self.n
        for a in msg["answers"]:
            if a["status"] == "answer":
                texts[a["seat"]] = a.get("text", "")
        choices = [None] * self.n
        judgements = []
        changed = []
        for s in range(self.n):
            if texts[s] is None:
                continue
            pos, invalid = parse(texts[s].split("\n")[0], self.side)
            if invalid:
                judgements.append({"seat": s, "invalid": invalid})
                continue
            if pos is None:
                judgements.append({"seat": s, "move": "none"})
                continue
            x, y = pos
            if self.status[y][x] != INACTIVE:
                judgements.append({"seat": s, "move": "%d,%d (not inactive: no effect)" % pos})
                continue
            judgements.append({"seat": s, "move": "%d,%d" % pos})
            choices[s] = pos
            if self.phase == "DESTROY":
                self.status[y][x] = BROKEN
            else:
                self.owners[y][x].add(s)
                changed.append(pos)
        for (x, y) in changed:
            self.status[y][x] = ACTIVE
        done = [show(c) for c in choices]
        if self.phase == "DESTROY":
            self.reports = self.report("BROKEN", choices)
            self.phase = "ACTIVATE"
            text = "turn %d: broken %s" % (self.turn, " ".join(done))
        else:
            self.reports = self.report("OWNED", choices)
            self.phase = "DESTROY"
            text = "turn %d: activated %s" % (self.turn, " ".join(done))
            self.turn += 1
            if self.turn >= self.turns:
                self.score()
                text += "; scores " + " ".join(map(str, self.scores))
        events = [{"type": "phase", "turn": self.turn, "text": text}]
        return self.answer(msg["turn"], {"judgements": judgements, "events": events})


def main():
    game = None
    for line in sys.stdin:
        msg = json.loads(line)
        if msg["type"] == "start":
            game = Game(msg)
            out = game.answer(0, {"initial": {"bots": game.n, "turns": game.turns, "side": game.side}})
        else:
            out = game.play(msg)
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
