# Caveman Duels, a King-of-the-Hill challenge of Code Golf Stack Exchange
# (https://codegolf.stackexchange.com/questions/34968, by Doorknob, 2014),
# as a koth referee. Written for koth from the challenge's rules; no code of
# the original controller is in it (ORIGIN.md says where everything is from).
#
# Two cavemen, one stick each, sharpness 0. Every turn both are asked at
# once (a new process each, the history as its one argument) and answer one
# letter:
#   S  sharpen: sharpness + 1 (5 or more makes the stick a sword);
#   P  poke: sharpness - 1; a poke with sharpness 0 does nothing;
#   B  block: a poke does nothing against it (a sword's does).
# A poke wins against a caveman who sharpens; two pokes knock the sticks
# together (both lose 1 sharpness); a poke into a block only dulls the
# poker's stick. A sword's poke always wins, unless the other caveman also
# pokes with a sword: then both lose 1 sharpness. A duel no one has won
# after 100 turns is lost by both. A match is `duels` duels (the original
# played 3 against every opponent); a seat's score is the duels it won.
#
# The request: "MINE,THEIRS", every move of this duel so far, mine first
# ("SPB,SBB"); on a duel's first turn the original passed no argument at
# all, koth's per_turn_argv passes one, empty ("").
#
# Where the rules are silent this referee decides, and says so:
# - an answer other than S, P or B (its first character, upper case; the
#   original read the first character of the output), a timeout or a bot
#   gone loses the duel; both at once: both lose it;
# - a poke with sharpness 0 against a poke: the sticks meet (the sharp one
#   loses 1 sharpness), as "if the opponent is poking" reads.
import json
import sys

MOVES = {"S": "sharpen", "P": "poke", "B": "block"}
MAX_TURNS = 100


def resolve(a, b, sa, sb):
    """One turn of a duel: the moves, the sharpness before it. Returns the
    winners (a set of 0/1, empty if no one) and the sharpness after it."""
    sword_a = a == "P" and sa >= 5
    sword_b = b == "P" and sb >= 5
    if sword_a and sword_b:
        return set(), sa - 1, sb - 1
    if sword_a:
        return {0}, sa - 1, sb
    if sword_b:
        return {1}, sa, sb - 1
    na = sa + (a == "S") - (a == "P" and sa > 0)
    nb = sb + (b == "S") - (b == "P" and sb > 0)
    poke_a = a == "P" and sa > 0
    poke_b = b == "P" and sb > 0
    if poke_a and b == "S":
        return {0}, na, sb
    if poke_b and a == "S":
        return {1}, sa, nb
    return set(), na, nb


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
        return [{"seat": s, "text": "" if not h[s] else h[s] + "," + h[1 - s]} for s in (0, 1)]

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
        moves = [None, None]
        judgements = []
        for a in msg["answers"]:
            s = a["seat"]
            if a["status"] != "answer":
                continue
            text = a.get("text", "").strip()
            m = text[:1].upper()
            if m in MOVES:
                moves[s] = m
                judgements.append({"seat": s, "move": MOVES[m]})
            else:
                judgements.append({"seat": s, "invalid": "answer S, P or B: this duel is lost"})
        duel = self.duel
        turn_in_duel = len(self.history[0]) + 1
        if None in moves:
            winners = {s for s in (0, 1) if moves[s] is not None}
            why = "no valid move from " + " and ".join(self.names[s] for s in (0, 1) if moves[s] is None)
        else:
            winners, sa, sb = resolve(moves[0], moves[1], self.sharp[0], self.sharp[1])
            self.sharp = [sa, sb]
            self.history = [self.history[0] + moves[0], self.history[1] + moves[1]]
            why = "%s %s, %s %s" % (self.names[0], MOVES[moves[0]], self.names[1], MOVES[moves[1]])
        ended = bool(winners) or None in moves or turn_in_duel >= MAX_TURNS
        events = []
        if ended:
            for s in winners:
                self.scores[s] += 1
            if winners:
                result = "%s won" % self.names[next(iter(winners))]
            else:
                result = "both lost"
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
