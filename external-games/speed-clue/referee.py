# The referee of speed-clue: Speed Clue (sadakatsu, Code Golf Stack Exchange,
# 2014), a boardless Cluedo for 3 to 6 AIs, written for koth from the
# challenge's rules (speed_clue_rules.md, protocol.md) and the behaviour of
# its contest server (core/code/com/sadakatsu/clue/contestserver: Match.java
# and Player.java). Each AI is started as `COMMAND IDENTIFIER PORT` (koth's
# "launch": p0, p1, ... and 4040), connects and says `IDENTIFIER alive`;
# every message and answer is unterminated ("framing": "unterminated"), as
# the server's `out.format(message)` and `in.read(buffer)` were.
#
# One koth turn is one of the server's exchanges: `reset` to every AI,
# `suggest` to the active AI, `disprove` to the first AI after it holding
# two or more of the suggested cards (one card is shown without asking),
# `suggestion` to every AI, `accuse` to the active AI, `accusation` to every
# AI when it accused, and, once the game is over, `done` to every AI.
#
# Where the server threw (ProtocolViolation, TimeoutViolation,
# DuplicateSuggestion, InvalidDisprove, SuicidalAccusation,
# MissedAccusation), disqualifying the AI for the whole tournament and
# keeping none of its games, this referee ends the game at once: the
# offender scores -1 and everyone else 0 (no winner), the judgement names
# the server's exception.
#
# settings.deal (optional): {"solution": "Pl Kn Li", "hands": ["Gr Ca ...",
# ...]}, the deal of a game the original server played (its shuffles are
# unseeded), to play the same game here; without it the deal is drawn from
# the seed.
import json
import random
import sys

SUSPECTS = ["Gr", "Mu", "Pe", "Pl", "Sc", "Wh"]
WEAPONS = ["Ca", "Kn", "Pi", "Re", "Ro", "Wr"]
ROOMS = ["Ba", "Bi", "Co", "Di", "Ha", "Ki", "Li", "Lo", "St"]
CARDS = SUSPECTS + WEAPONS + ROOMS
CATEGORIES = [SUSPECTS, WEAPONS, ROOMS]


def say(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def card(token):
    # Card.from: the first two characters, case ignored.
    for c in CARDS:
        if c.lower() == token[:2].lower():
            return c
    return None


def suggestion(text):
    # new Suggestion(String): three tokens split on single blanks, each of
    # exactly two characters naming a suspect, a weapon and a room in order.
    tokens = text.split(" ")
    if len(tokens) != 3:
        return None
    out = []
    for t, category in zip(tokens, CATEGORIES):
        c = card(t) if len(t) == 2 else None
        if c is None or c not in category:
            return None
        out.append(c)
    return tuple(out)


def clean(text):
    # Player.getResponse: trailing NUL characters are dropped.
    return text.rstrip("\0")


class Violation(Exception):
    def __init__(self, seat, what):
        Exception.__init__(self, what)
        self.seat = seat
        self.what = what


start = json.loads(sys.stdin.readline())
n = len(start["seats"])
settings = start["settings"]
deal = settings.get("deal")
if deal is not None:
    solution = tuple(deal["solution"].split(" "))
    hands = [h.split(" ") for h in deal["hands"]]
else:
    rng = random.Random(int(start["seed"]))
    solution = (rng.choice(SUSPECTS), rng.choice(WEAPONS), rng.choice(ROOMS))
    deck = [c for c in CARDS if c not in solution]
    rng.shuffle(deck)
    hands, dealt = [], 0
    for i in range(n):
        size = 18 // n + (1 if i < 18 % n else 0)
        hands.append(deck[dealt : dealt + size])
        dealt += size
if sorted(sum(hands, []) + list(solution)) != sorted(CARDS) or len(hands) != n:
    sys.stderr.write("settings.deal is not a deal of the 21 cards to %d hands\n" % n)
    sys.exit(1)

scores = [0] * n
judgements = []
events = []


def answers_of(msg):
    out = {}
    for a in msg["answers"]:
        out[a["seat"]] = a.get("text") if a["status"] == "answer" else None
    return out


def game():
    """Yields each turn's requests ({seat: text}); is sent its answers
    ({seat: text or None}). Returns the winner's seat, or raises Violation."""
    eliminated = [False] * n
    made = [set() for _ in range(n)]
    seen = [set(h) for h in hands]
    must_accuse = [False] * n

    def expect(answers, seat, want, what):
        text = answers.get(seat)
        if text is None:
            raise Violation(seat, "TimeoutViolation: no answer to %s" % what)
        if clean(text).lower() != want:
            raise Violation(seat, "ProtocolViolation: %r to %s" % (text, what))

    answers = yield {i: "reset %d %d %s" % (n, i, " ".join(hands[i])) for i in range(n)}
    for i in range(n):
        expect(answers, i, "ok", "reset")
    active, in_game, rounds, winner = 0, n, 1, None
    while winner is None:
        answers = yield {active: "suggest"}
        text = answers.get(active)
        if text is None:
            raise Violation(active, "TimeoutViolation: no answer to suggest")
        text = clean(text)
        s = suggestion(text[8:]) if len(text) == 16 and text[:8].lower() == "suggest " else None
        if s is None:
            raise Violation(active, "ProtocolViolation: %r to suggest" % text)
        if s in made[active]:
            raise Violation(active, "DuplicateSuggestion: %s made before" % " ".join(s))
        made[active].add(s)
        events.append({"type": "suggest", "seat": active, "cards": list(s), "round": rounds, "text": "p%d suggests %s" % (active, " ".join(s))})
        disprover, shown = None, None
        for k in range(1, n):
            j = (active + k) % n
            if set(hands[j]) & set(s):
                disprover = j
                break
        if disprover is not None:
            candidates = [c for c in s if c in hands[disprover]]
            if len(candidates) == 1:
                shown = candidates[0]
            else:
                answers = yield {disprover: "disprove %d %s" % (active, " ".join(s))}
                text = answers.get(disprover)
                if text is None:
                    raise Violation(disprover, "TimeoutViolation: no answer to disprove")
                text = clean(text)
                if len(text) != 7 or text[:5].lower() != "show ":
                    raise Violation(disprover, "ProtocolViolation: %r to disprove" % text)
                shown = card(text[5:])
                if shown is None:
                    raise Violation(disprover, "ProtocolViolation: %r to disprove" % text)
                if shown not in candidates:
                    raise Violation(disprover, "InvalidDisprove: %s cannot disprove %s" % (shown, " ".join(s)))
            events.append({"type": "disproved", "seat": disprover, "card": shown, "text": "p%d shows a card" % disprover})
        else:
            events.append({"type": "undisproved", "text": "nobody can disprove"})
        told = {}
        for p in range(n):
            line = "suggestion %d %s " % (active, " ".join(s))
            if disprover is not None:
                line += str(disprover)
                if p in (active, disprover):
                    line += " " + shown
                    if p == active:
                        seen[active].add(shown)
            else:
                line += "-"
                if p == active and not (seen[active] & set(s)):
                    must_accuse[active] = True
            told[p] = line
        answers = yield told
        for p in range(n):
            expect(answers, p, "ok", "suggestion")
        answers = yield {active: "accuse"}
        text = answers.get(active)
        if text is None:
            raise Violation(active, "TimeoutViolation: no answer to accuse")
        text = clean(text)
        if text != "-":
            a = suggestion(text[7:]) if len(text) == 15 and text[:7].lower() == "accuse " else None
            if a is None:
                raise Violation(active, "ProtocolViolation: %r to accuse" % text)
            if seen[active] & set(a):
                raise Violation(active, "SuicidalAccusation: %s holds a card it has seen" % " ".join(a))
            correct = a == solution
            if correct:
                winner = active
            else:
                eliminated[active] = True
                in_game -= 1
            events.append({"type": "accuse", "seat": active, "cards": list(a), "correct": correct, "text": "p%d accuses %s: %s" % (active, " ".join(a), "correct" if correct else "wrong")})
            answers = yield {p: "accusation %d %s %s" % (active, " ".join(a), "+" if correct else "-") for p in range(n)}
            for p in range(n):
                expect(answers, p, "ok", "accusation")
        elif must_accuse[active]:
            raise Violation(active, "MissedAccusation: nobody disproved its suggestion of unseen cards")
        # Match.startNextPlayerTurn, and the last player in wins.
        for _ in range(2 if (winner is None and in_game == 1) else 1):
            first, wrapped = active, False
            while True:
                before = active
                active = (active + 1) % n
                wrapped = wrapped or before > active
                if not eliminated[active]:
                    break
            if winner is None and in_game > 1 and wrapped and first != active:
                rounds += 1
            if winner is None and in_game == 1:
                winner = active
    events.append({"type": "winner", "seat": winner, "rounds": rounds, "text": "p%d wins after %d rounds" % (winner, rounds)})
    scores[winner] = 1
    answers = yield {p: "done" for p in range(n)}
    for p in range(n):
        text = answers.get(p)
        if text is None or clean(text).lower() != "dead":
            judgements.append({"seat": p, "invalid": "ProtocolViolation: %r to done (the server disqualified it at the tournament's end)" % text})


def requests(asked):
    return [{"seat": s, "text": t} for s, t in sorted(asked.items())]


g = game()
asked = next(g)
say({"turn": 0, "launch": [{"seat": s, "argv": ["p%d" % s, "4040"]} for s in range(n)], "requests": requests(asked), "scores": scores, "initial": {"solution": list(solution), "hands": hands}})
for line in sys.stdin:
    msg = json.loads(line)
    judgements, events = [], []
    out = {"turn": msg["turn"]}
    try:
        asked = g.send(answers_of(msg))
        out["requests"] = requests(asked)
    except StopIteration:
        out["over"] = True
    except Violation as v:
        judgements.append({"seat": v.seat, "invalid": v.what})
        events.append({"type": "disqualified", "seat": v.seat, "text": "p%d is disqualified: %s" % (v.seat, v.what)})
        scores = [0] * n
        scores[v.seat] = -1
        out["over"] = True
    # A judgement only for a seat that answered this turn.
    answered = set(a["seat"] for a in msg["answers"] if a["status"] == "answer")
    out["judgements"] = [j for j in judgements if j["seat"] in answered]
    out["events"] = events
    out["scores"] = scores
    say(out)
