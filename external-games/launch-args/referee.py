# The referee of launch-args: every long-lived bot is started with an
# argument list of its own ("launch" in the answer to start), in the shape
# Speed Clue's server used (`COMMAND IDENTIFIER PORT`) and a few more:
# an argument with a space, an empty one, one not ASCII, and one drawn
# from the seed. Each turn every seat is asked "argv?" and answers its
# arguments as a JSON list on one line: a point for each answer that is
# exactly what it was launched with. It draws no board.
#
# settings.connect: the port argument is 4040, where a tcp_or_stdio bot
# connects (false: "-", a stdio bot). settings.mode: "launch" (the game),
# "none" (no "launch": every bot is started with no argument), or a
# hostile referee: "late" (a "launch" with turn 1), "many" (1025
# arguments), "bytes" (an argument of 70,000 bytes), "nul" (a NUL byte in
# an argument), "seat9" (a seat that does not exist), "twice" (seat 0 twice).
import json
import sys


def say(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


start = json.loads(sys.stdin.readline())
seats = len(start["seats"])
settings = start["settings"]
rounds, mode = settings["rounds"], settings["mode"]
port = "4040" if settings["connect"] else "-"
drawn = str(int(start["seed"]) % 997)


def argv(seat):
    return ["seat%d" % seat, port, "two words", "", "\u00e9t\u00e9", str((int(drawn) + seat) % 997)]


launch = [{"seat": s, "argv": argv(s)} for s in range(seats)]
if mode == "none":
    launch = []
elif mode == "many":
    launch[0]["argv"] = [str(i) for i in range(1025)]
elif mode == "bytes":
    launch[0]["argv"] = ["x" * 70000]
elif mode == "nul":
    launch[0]["argv"] = ["a\u0000b"]
elif mode == "seat9":
    launch.append({"seat": 9, "argv": ["x"]})
elif mode == "twice":
    launch.append({"seat": 0, "argv": ["again"]})
expected = [argv(s) if mode != "none" else [] for s in range(seats)]
ask = [{"seat": s, "text": "argv?"} for s in range(seats)]
scores = [0] * seats
first = {"turn": 0, "requests": ask, "scores": scores, "initial": {"drawn": drawn}}
if mode != "late":
    first["launch"] = launch
say(first)
for line in sys.stdin:
    msg = json.loads(line)
    turn = msg["turn"]
    judgements = []
    for a in msg["answers"]:
        if a["status"] != "answer":
            continue
        try:
            heard = json.loads(a["text"])
        except ValueError:
            heard = None
        if heard == expected[a["seat"]]:
            scores[a["seat"]] += 1
        else:
            judgements.append({"seat": a["seat"], "invalid": "expected " + json.dumps(expected[a["seat"]])})
    over = turn == rounds
    out = {"turn": turn, "judgements": judgements, "scores": scores, "over": over}
    if not over:
        out["requests"] = ask
    if mode == "late":
        out["launch"] = launch
    say(out)
