# Caveman Duels, a King-of-the-Hill challenge of Code Golf Stack Exchange
# (https://codegolf.stackexchange.com/questions/34968, by Doorknob, 2014),
# as a koth referee. Written for koth from the challenge's rules and from
# what its original controller (C++, github.com/KeyboardFire/caveman-duels,
# src/Caveman.cpp) does; none of its code is in it (ORIGIN.md).
#
# Two cavemen, one stick each, sharpness 0. Every turn both are asked at
# once (a new process each, the history as its one argument) and answer one
# letter:
#   S  sharpen: sharpness + 1;
#   P  poke: a poke with sharpness 5 or more is a sword's;
#   B  block.
# As the original controller reads an answer: its first character only;
# anything but S, P or B (an empty answer, a crash, and here a timeout) is
# B; a poke with sharpness 0 is B. Then both sharpen, then both poke, the
# first seat first: a poke against a block, a poke or a sword loses the
# poker 1 sharpness, against a sharpener it wins; a sword against a sword
# loses 1 sharpness, against anything else it wins. The history records
# each move as read (a sword's poke as P). A duel no one has won after 100
# turns is lost by both. A match is `duels` duels (the original played 3
# for every pair of cavemen, the one listed first as the first seat); a
# seat's score is the duels it won.
#
# The request: "MINE,THEIRS", every move of this duel so far, mine first
# ("SPB,SBB"), as the program's one argument; on a duel's first turn no
# argument at all (`"argv": []`), as the original controller did.
import json
import sys

MOVES = {"S": "sharpen", "P": "poke", "B": "block"}
NAMES = {"S": "sharpened", "P": "poked", "B": "blocked", "^": "poked with a sword"}
MAX_TURNS = 100


def read(answer, sharpness):
    """A move as the original controller reads it: 'S', 'P', 'B', or '^' for
    a sword's poke."""
    m = answer[:1]
    if m not in MOVES or (m == "P" and sharpness == 0):
        return "B"
    return "^" if m == "P" and sharpness >= 5 else m


def resolve(a, b, sa, sb):
    """One turn of a duel, the moves as read: the winners (a set of seats,
    empty if no one) and the sharpness after it."""
    sharp = [sa + (a == "S"), sb + (b == "S")]
    moves = (a, b)
    dead = [False, False]
    for me, other in ((0, 1), (1, 0)):
        mine, theirs = moves[me], moves[other]
        if mine == "P":
            if theirs in "BP^":
                sharp[me] -= 1
            else:
                dead[other] = True
        elif mine == "^":
            if theirs == "^":
                sharp[me] -= 1
            else:
                dead[other] = True
    if dead[0]:
        return {1}, sharp[0], sharp[1]
    if dead[1]:
        return {0}, sharp[0], sharp[1]
    return set(), sharp[0], sharp[1]


class Game:
    def __init__(self, msg):
        self.names = [s["name"] for s in msg["seats"]]
        settings = msg.get("settings") or {}
        duels = settings.get("duels", 3)
        if not isinstance(duels, int) or isinstance(duels, bool) or not 1 <= duels <= 100:
            raise SystemExit("settings.duels must be a whole number from 1 to 100, not %r" % (duels,))
        if len(self.names) != 2:
            raise SystemExit("Caveman Duels is for 2 cavemen, not %d" % len(self.names))
        self.duels = duels
        self.duel = 1
        self.scores = [0, 0]
        self.new_duel()

    def new_duel(self):
        self.history = ["", ""]
        self.sharp = [0, 0]

    def requests(self):
        h = self.history
        if not h[0]:
            return [{"seat": s, "argv": []} for s in (0, 1)]
        return [{"seat": s, "argv": [h[s] + "," + h[1 - s]]} for s in (0, 1)]

    def view(self):
        width = MAX_TURNS + 1
        rows = ""
        for s in (0, 1):
            row = "%x" % s + self.history[s]
            rows += row + "." * (width - len(row))
        caption = "duel %d of %d, turn %d: sharpness %d and %d; duels won %d and %d" % (
            min(self.duel, self.duels), self.duels, len(self.history[0]), self.sharp[0], self.sharp[1], self.scores[0], self.scores[1])
        return {"width": width, "height": 2, "cells": rows, "caption": caption}

    def answer(self, turn, extra=None):
        over = self.duel > self.duels
        out = {"turn": turn, "view": self.view(), "scores": self.scores, "over": over}
        if not over:
            out["requests"] = self.requests()
        out.update(extra or {})
        return out

    def play(self, msg):
        texts = [None, None]
        for a in msg["answers"]:
            if a["status"] == "answer":
                texts[a["seat"]] = a.get("text", "")
        read_as = [read(texts[s] or "", self.sharp[s]) for s in (0, 1)]
        judgements = []
        for s in (0, 1):
            if texts[s] is None:
                continue
            m, r = texts[s][:1], read_as[s]
            if m not in MOVES:
                judgements.append({"seat": s, "invalid": "answer S, P or B (the first character counts); read as B, as the original controller did"})
            elif m == "P" and r == "B":
                judgements.append({"seat": s, "move": "poke with a blunt stick: read as block"})
            else:
                judgements.append({"seat": s, "move": "sword" if r == "^" else MOVES[m]})
        duel = self.duel
        turn_in_duel = len(self.history[0]) + 1
        winners, sa, sb = resolve(read_as[0], read_as[1], self.sharp[0], self.sharp[1])
        self.sharp = [sa, sb]
        recorded = ["P" if r == "^" else r for r in read_as]
        self.history = [self.history[0] + recorded[0], self.history[1] + recorded[1]]
        why = "%s %s, %s %s" % (self.names[0], NAMES[read_as[0]], self.names[1], NAMES[read_as[1]])
        events = []
        if winners or turn_in_duel >= MAX_TURNS:
            for s in winners:
                self.scores[s] += 1
            result = "%s won" % self.names[next(iter(winners))] if winners else "both lost"
            events.append({"type": "duel", "duel": duel, "turns": turn_in_duel, "winners": sorted(winners),
                           "text": "duel %d, turn %d: %s; %s" % (duel, turn_in_duel, why, result)})
            self.duel += 1
            self.new_duel()
        return self.answer(msg["turn"], {"judgements": judgements, "events": events})


def main():
    game = None
    for line in sys.stdin:
        msg = json.loads(line)
        if msg["type"] == "start":
            game = Game(msg)
            out = game.answer(0, {"initial": {"duels": game.duels}})
        else:
            out = game.play(msg)
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
