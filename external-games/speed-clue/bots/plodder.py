# A Speed Clue AI (koth's own, for the speed-clue corpus entry) that learns
# as little as the rules let it: it makes every suggestion in the rules'
# order (Gr Ca Ba, Gr Ca Bi, ...), skipping those holding a card of its own
# hand, accuses only when nobody disproved a suggestion of cards it has not
# seen (which the server demands), and shows the last card it can. Started
# as `plodder.py IDENTIFIER PORT`, it speaks as every contest AI did:
# "IDENTIFIER alive" first, one read a message, answers with no line ending.
import itertools
import socket
import sys

SUSPECTS = ["Gr", "Mu", "Pe", "Pl", "Sc", "Wh"]
WEAPONS = ["Ca", "Kn", "Pi", "Re", "Ro", "Wr"]
ROOMS = ["Ba", "Bi", "Co", "Di", "Ha", "Ki", "Li", "Lo", "St"]
ALL = SUSPECTS + WEAPONS + ROOMS
ORDER = {c.lower(): c for c in ALL}

conn = socket.create_connection(("127.0.0.1", int(sys.argv[2])))
conn.sendall((sys.argv[1] + " alive").encode())
me, hand, seen, queue, forced = -1, set(), set(), [], None
while True:
    message = conn.recv(512).decode().rstrip("\0").split()
    if not message:
        break
    kind, args = message[0].lower(), message[1:]
    if kind == "reset":
        me, hand, forced = int(args[1]), set(ORDER[c.lower()] for c in args[2:]), None
        seen = set(hand)
        queue = [s for s in itertools.product(SUSPECTS, WEAPONS, ROOMS) if not hand & set(s)]
        answer = "ok"
    elif kind == "suggest":
        answer = "suggest " + " ".join(queue.pop(0))
    elif kind == "disprove":
        cards = [ORDER[c.lower()] for c in args[1:]]
        answer = "show " + [c for c in ALL if c in hand and c in cards][-1]
    elif kind == "suggestion":
        who, cards, rest = int(args[0]), [ORDER[c.lower()] for c in args[1:4]], args[4:]
        if who == me and len(rest) > 1:
            seen.add(ORDER[rest[1].lower()])
        if who == me and rest[0] == "-" and not seen & set(cards):
            forced = cards
        answer = "ok"
    elif kind == "accuse":
        answer = "accuse " + " ".join(forced) if forced else "-"
    elif kind == "done":
        conn.sendall(b"dead")
        break
    else:
        answer = "ok"
    conn.sendall(answer.encode())
conn.close()
