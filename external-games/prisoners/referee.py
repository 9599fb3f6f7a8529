# 1P5: Iterated Prisoner's Dilemma, a King-of-the-Hill challenge of Code Golf
# Stack Exchange (https://codegolf.stackexchange.com/questions/2357, by
# dmckee, 2011), as a koth referee. Written for koth from the challenge's
# rules and its scorer's behaviour; no code of the scorer is in it
# (ORIGIN.md says where everything is from).
#
# Two prisoners play `rounds` rounds (100). Every round both are asked at
# once, a new process each with the history as its one argument, and answer
# "c" (clam up) or "t" (tell all): both c, 2 points each; both t, 1 each; a
# t against a c, 4 for the teller and -1 for the other. The history is one
# letter a round, the newest first: K both kept the faith, R you were sold
# out, S you sold the other out, E everyone talked.
#
# As the original scorer did it:
# - only the answer's first character counts, and it must be "c" or "t";
# - on a match's first round the scorer passed no argument (the shell
#   command ended in a space): the first request is `"argv": []`;
# - the scorer gave the second prisoner (seat 1) a history made of its own
#   newest outcome followed by the FIRST prisoner's previous history (its
#   runRound returns L2+h1 where h2 was meant). With the setting
#   "scorer_history": true (the default) seat 1 gets exactly that; false
#   gives every seat its own history.
# Where the scorer stopped with an exception (an empty answer, a letter
# other than c or t) koth cannot stop: such an answer, a timeout or a bot
# gone is judged invalid and counts as "c", saying nothing.
import json
import sys

POINTS = {("c", "c"): (2, "K"), ("c", "t"): (-1, "R"), ("t", "c"): (4, "S"), ("t", "t"): (1, "E")}
NAMES = {"c": "clam up", "t": "tell all"}
SHOWN = 100


class Game:
    def __init__(self, msg):
        self.names = [s["name"] for s in msg["seats"]]
        if len(self.names) != 2:
            raise SystemExit("the Prisoner's Dilemma is for 2 prisoners, not %d" % len(self.names))
        settings = msg.get("settings") or {}
        self.rounds = settings.get("rounds", 100)
        if not isinstance(self.rounds, int) or isinstance(self.rounds, bool) or not 1 <= self.rounds <= 1000:
            raise SystemExit("settings.rounds must be a whole number from 1 to 1000, not %r" % (self.rounds,))
        self.scorer_history = settings.get("scorer_history", True)
        if not isinstance(self.scorer_history, bool):
            raise SystemExit("settings.scorer_history must be true or false, not %r" % (self.scorer_history,))
        self.round = 0
        self.history = ["", ""]
        self.moves = ["", ""]
        self.scores = [0, 0]

    def view(self):
        rows = ""
        for s in (0, 1):
            row = ("%x" % s) + self.moves[s][-SHOWN:].upper()
            rows += row + "." * (SHOWN + 1 - len(row))
        caption = "round %d of %d: points %d and %d" % (self.round, self.rounds, self.scores[0], self.scores[1])
        return {"width": SHOWN + 1, "height": 2, "cells": rows, "caption": caption}

    def answer(self, turn, extra=None):
        over = self.round >= self.rounds
        out = {"turn": turn, "view": self.view(), "scores": self.scores, "over": over}
        if not over:
            out["requests"] = [{"seat": s, "argv": [self.history[s]] if self.history[s] else []} for s in (0, 1)]
        out.update(extra or {})
        return out

    def play(self, msg):
        moves = ["c", "c"]
        judgements = []
        for a in msg["answers"]:
            s = a["seat"]
            if a["status"] != "answer":
                continue
            m = a.get("text", "")[:1]
            if m in NAMES:
                moves[s] = m
                judgements.append({"seat": s, "move": NAMES[m]})
            else:
                judgements.append({"seat": s, "invalid": "answer c or t (the first character counts); counted as c"})
        (p0, l0), (p1, l1) = POINTS[(moves[0], moves[1])], POINTS[(moves[1], moves[0])]
        self.scores[0] += p0
        self.scores[1] += p1
        old0 = self.history[0]
        self.history[0] = l0 + old0
        self.history[1] = l1 + (old0 if self.scorer_history else self.history[1])
        self.moves = [self.moves[0] + moves[0], self.moves[1] + moves[1]]
        self.round += 1
        text = "round %d: %s %s, %s %s (%+d, %+d)" % (self.round, self.names[0], NAMES[moves[0]], self.names[1], NAMES[moves[1]], p0, p1)
        events = [{"type": "round", "round": self.round, "moves": moves, "points": [p0, p1], "text": text}]
        return self.answer(msg["turn"], {"judgements": judgements, "events": events})


def main():
    game = None
    for line in sys.stdin:
        msg = json.loads(line)
        if msg["type"] == "start":
            game = Game(msg)
            out = game.answer(0, {"initial": {"rounds": game.rounds, "scorer_history": game.scorer_history}})
        else:
            out = game.play(msg)
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
