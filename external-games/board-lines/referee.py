# The referee of board-lines: each turn every seat gets a board of three
# lines ("lines"). On odd turns its answer is three lines (the manifest's
# "answer"), each row mirrored; on even turns the rows bottom to top, up
# to a line END (the request's own "answer"). A point per right answer.
import json
import sys

BOARDS = [["#..", ".#.", "..#"], ["##.", "...", ".##"], ["#.#", "###", "..."]]


def say(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def board(turn):
    return BOARDS[(turn - 1) % len(BOARDS)]


def want(turn):
    rows = board(turn)
    if turn % 2 == 1:
        return "\n".join(r[::-1] for r in rows)
    return "\n".join(rows[::-1])


def ask(turn, seats):
    shape = {} if turn % 2 == 1 else {"answer": {"until": "END"}}
    return [dict(seat=s, lines=board(turn), **shape) for s in range(seats)]


start = json.loads(sys.stdin.readline())
seats = len(start["seats"])
rounds = start["settings"]["rounds"]
scores = [0] * seats
view = {"width": 3, "height": 3, "cells": "".join(board(1))}
say({"turn": 0, "requests": ask(1, seats), "scores": scores, "view": view})
for line in sys.stdin:
    msg = json.loads(line)
    turn = msg["turn"]
    judgements = []
    for a in msg["answers"]:
        if a["status"] != "answer":
            continue
        if a["text"] == want(turn):
            scores[a["seat"]] += 1
        else:
            judgements.append({"seat": a["seat"], "invalid": "expected " + json.dumps(want(turn))})
    over = turn == rounds
    out = {"turn": turn, "judgements": judgements, "scores": scores, "over": over}
    if not over:
        out["requests"] = ask(turn + 1, seats)
        out["view"] = {"width": 3, "height": 3, "cells": "".join(board(turn + 1))}
    say(out)
