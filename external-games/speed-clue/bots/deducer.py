# A Speed Clue AI (koth's own, for the speed-clue corpus entry): it keeps
# the cards it has seen (its hand and those shown to it) and suggests the
# first unseen suspect, weapon and room (the first unmade suggestion with
# the most unseen cards), accuses once one card is left unseen in each
# category, or when nobody could disprove a suggestion of cards it has not
# seen; it shows the first card it can, in the rules' order. Started as
# `deducer.py IDENTIFIER PORT`, as the contest server started every AI:
# it connects to PORT, says "IDENTIFIER alive", and reads each message
# with one read and answers with no line ending (protocol.md).
import itertools
import socket
import sys

SUSPECTS = ["Gr", "Mu", "Pe", "Pl", "Sc", "Wh"]
WEAPONS = ["Ca", "Kn", "Pi", "Re", "Ro", "Wr"]
ROOMS = ["Ba", "Bi", "Co", "Di", "Ha", "Ki", "Li", "Lo", "St"]
ORDER = {c.lower(): c for c in SUSPECTS + WEAPONS + ROOMS}


def canon(token):
    return ORDER[token.lower()]


conn = socket.create_connection(("127.0.0.1", int(sys.argv[2])))
conn.sendall((sys.argv[1] + " alive").encode())
me, hand, seen, made, forced = -1, set(), set(), set(), None
while True:
    message = conn.recv(512).decode().rstrip("\0").split()
    if not message:
        break
    kind, args = message[0].lower(), message[1:]
    if kind == "reset":
        me, hand, made, forced = int(args[1]), set(canon(c) for c in args[2:]), set(), None
        seen = set(hand)
        answer = "ok"
    elif kind == "suggest":
        unseen = lambda cat: sum(c not in seen for c in cat)
        options = [s for s in itertools.product(SUSPECTS, WEAPONS, ROOMS) if s not in made]
        best = max(options, key=unseen)
        made.add(best)
        answer = "suggest " + " ".join(best)
    elif kind == "disprove":
        cards = [canon(c) for c in args[1:]]
        answer = "show " + next(c for c in SUSPECTS + WEAPONS + ROOMS if c in hand and c in cards)
    elif kind == "suggestion":
        who, cards, rest = int(args[0]), [canon(c) for c in args[1:4]], args[4:]
        if who == me and rest[0] == "-" and not seen & set(cards):
            forced = cards
        if who == me and len(rest) > 1:
            seen.add(canon(rest[1]))
        answer = "ok"
    elif kind == "accuse":
        left = [[c for c in cat if c not in seen] for cat in (SUSPECTS, WEAPONS, ROOMS)]
        if forced:
            answer = "accuse " + " ".join(forced)
        elif all(len(cat) == 1 for cat in left):
            answer = "accuse " + " ".join(cat[0] for cat in left)
        else:
            answer = "-"
    elif kind == "accusation":
        answer = "ok"
    elif kind == "done":
        conn.sendall(b"dead")
        break
    else:
        answer = "ok"
    conn.sendall(answer.encode())
conn.close()
