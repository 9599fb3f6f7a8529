# The referee of argv-shapes: every seat's program is started once a turn,
# each turn asked in another of the shapes koth's per-turn requests have,
# and scored a point for each answer as expected. It draws no board (it
# leaves out "view").
#
# settings.mode: "shapes" (the game), "one_empty_argument" (turn 1 asked as
# koth asked before argv lists: one argument, empty), or a hostile referee:
# "argv10k" (10,000 arguments), "stdin600k" (600 KiB on stdin),
# "stdin100m" (100 MB on stdin).
import json
import sys

ASKS = [
    # No argument at all, as original controllers start a duel's first turn.
    ({}, "hello"),
    # Several arguments.
    ({"argv": ["3", "4", "5"]}, "12"),
    # The state on stdin (and one flag).
    ({"argv": ["--stdin"], "stdin": "3\n1 2 3\n"}, "6"),
    # The text as the one argument, as per_turn_argv always did.
    ({"text": "7"}, "7"),
    # An answer of two lines.
    ({"argv": ["pair"], "answer": {"lines": 2}}, "left\nright"),
    # An answer of lines up to END.
    ({"argv": ["list"], "answer": {"until": "END"}}, "a\nb\nc"),
]


def say(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


start = json.loads(sys.stdin.readline())
seats = len(start["seats"])
mode = start["settings"].get("mode", "shapes")
scores = [0] * seats


def requests(k):
    shape = dict(ASKS[k][0])
    if k == 0 and mode == "one_empty_argument":
        shape = {"text": ""}
    if mode == "argv10k":
        shape = {"argv": [str(i) for i in range(10000)]}
    if mode == "stdin600k":
        shape = {"stdin": "x" * (600 << 10)}
    if mode == "stdin100m":
        shape = {"stdin": "x" * (100 << 20)}
    return [dict(seat=s, **shape) for s in range(seats)]


say({"turn": 0, "requests": requests(0), "scores": scores})
for line in sys.stdin:
    msg = json.loads(line)
    turn = msg["turn"]
    want = ASKS[turn - 1][1]
    judgements = []
    for a in msg["answers"]:
        if a["status"] != "answer":
            continue
        if a["text"] == want:
            scores[a["seat"]] += 1
        else:
            judgements.append({"seat": a["seat"], "invalid": "expected " + json.dumps(want)})
    over = turn == len(ASKS)
    out = {"turn": turn, "judgements": judgements, "scores": scores, "over": over,
           "events": [{"type": "ask", "text": "turn %d: %s" % (turn, json.dumps(ASKS[turn - 1][0]))}]}
    if not over:
        out["requests"] = requests(turn)
    say(out)
