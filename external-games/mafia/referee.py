# Mafia, a King-of-the-Hill challenge of Code Golf Stack Exchange ("Let's
# play Mafia!", https://codegolf.stackexchange.com/q/151341, by
# undergroundmonorail), as a koth referee. Written for koth from the
# challenge's rules and from what its original controller (Python 2,
# github.com/undergroundmonorail/Mafia-Engine, controller/main.py) does;
# none of its code is in it (ORIGIN.md).
#
# 6 to 16 players. A third of them (rounded down) are the mafia, one the
# cop, one the doctor, the rest villagers; the mafia know each other. Each
# day, 50 rounds in which every living player may say one of 17 stock
# messages or vote for whom to lynch (no votes on day 0); the most voted
# (no one included) is lynched and their role shown. Each night the mafia
# vote whom to kill, the cop investigates a player's alignment, the doctor
# saves a player (the kill fails if it is the mafia's victim). The village
# wins when no mafioso lives, the mafia when they are at least as many as
# the village; every player of the winning side scores 1, dead or alive.
#
# The bots' protocol is the controller's: a program started in its own
# folder each time it is needed, with no argument; it reads `from_server`
# (what happened since its last run) and `players` (every player's name,
# sorted, one a line), and writes its answer to `to_server`. The controller
# named each player after its folder (players/NAME/); a koth bot's folder
# has no such name, so the referee writes the bot's name in `name` too.
#   day:    "vote NAME", "vote no one", or "say ID [SUBJECT] [RECIPIENT]";
#   night:  a NAME (the mafia's victim, the cop's suspect, the doctor's patient).
# An answer is read as the controller read it: every character other than
# an ASCII letter, digit or space is dropped (line breaks too), then it is
# split at spaces.
#
# Randomness: the controller draws everything with Python's random.shuffle;
# this referee makes the same draws from a Mersenne Twister seeded with the
# match's seed, shuffling as Python 2 did, so the original run after
# random.seed(SEED) (original/compare.sh) plays the same game. The initial
# order of the players is the seats' (the controller's os.listdir order).
import json
import random
import sys

MESSAGES = [
    "No",
    "Yes",
    "I am the cop",
    "I am the doctor",
    "I am a normal villager",
    "I trust this player: ",
    "I think this player is suspicious: ",
    "I think this player is the cop: ",
    "I think this player is the doctor: ",
    "I think this player is a normal villager: ",
    "I think this player is mafia: ",
    "Do you think this player is mafia? ",
    "I tried to save this player: ",
    "I successfully saved this player: ",
    "I investigated this player and found that they were mafia-aligned: ",
    "I investigated this player and found that they were village-aligned: ",
    "Will you please use your power on this player tonight? ",
]
ROUNDS = 50
VILLAGER, MAFIA, COP, DOCTOR = 0, 1, 2, 3
ROLE_NAMES = {MAFIA: "a mafioso", COP: "the cop", DOCTOR: "the doctor", VILLAGER: "a villager"}
# The controller tells the lynch with the role's method, not its value
# (`lynched.get_role` without the call): players read its repr, whose
# address changes from run to run. This is that text with a fixed address.
LYNCH_ROLE = "<bound method Player.get_role of <__main__.Player object at 0x7f0000000000>>"


class Py2Random(random.Random):
    """Python's Mersenne Twister (seeded from an integer as both Python 2
    and 3 seed it), shuffling as Python 2.7 did."""

    def shuffle2(self, x):
        for i in reversed(range(1, len(x))):
            j = int(self.random() * (i + 1))
            x[i], x[j] = x[j], x[i]


def names_of(seats):
    """Each seat's player name: its bot's file name up to the first '.',
    kept to ASCII letters and digits (the only names the controller can
    read back), the seat's number added if it is empty or already taken."""
    names = []
    for i, s in enumerate(seats):
        stem = s["name"].split(".")[0]
        n = "".join(c for c in stem if c.isascii() and c.isalnum()) or "player"
        if n in names:
            n += str(i)
        names.append(n)
    return names


def read(text):
    """An answer as the controller's m_read leaves it."""
    return "".join(c for c in text if (c.isascii() and c.isalnum()) or c == " ")


class Player:
    def __init__(self, seat, name):
        self.seat = seat
        self.name = name
        self.role = VILLAGER
        self.vote = None
        self.messages = ""

    def add(self, s):
        self.messages += s + "\n"

    def role_name(self):
        return ROLE_NAMES[self.role]


def deal(names, rng):
    """The players in the seats' order, dealt their roles as the controller
    deals them: shuffled, then the first third mafia, the next the cop, the
    next the doctor, the list turned one place after each. Returns the
    players in that order, the mafia, the cop and the doctor."""
    players = [Player(i, n) for i, n in enumerate(names)]
    rng.shuffle2(players)
    for _ in range(len(players) // 3):
        players[0].role = MAFIA
        players.append(players.pop(0))
    players[0].role = COP
    players.append(players.pop(0))
    players[0].role = DOCTOR
    return players, [p for p in players if p.role == MAFIA], players[-1], players[0]


def game(dealt, rng, max_days, events):
    """The controller's main loop, as a generator: it yields the requests of
    one koth turn ({seat: text}) and is sent the answers ({seat: text or
    None}). It returns the winning side ("mafia", "village" or None)."""

    def log(s):
        events.append(s)

    players, mafia, cop, doctor = dealt
    players, mafia = list(players), list(mafia)
    by_name = {p.name: p for p in players}

    written = {}  # seat -> its from_server now

    def write(who):
        for p in who:
            written[p.seat] = p.messages
            p.messages = ""

    def run(who):
        answers = yield {p.seat: written[p.seat] for p in who}
        return answers

    def kill(p):
        nonlocal cop, doctor
        players.remove(p)
        if p in mafia:
            mafia.remove(p)
        if cop is p:
            cop = None
        if doctor is p:
            doctor = None

    day = 0
    suspect, victim = None, None
    while mafia and len(players) - len(mafia) > len(mafia):
        if day == max_days:
            log("Day %d would begin: stopped here, with no winner." % day)
            return None
        log("Day %d begins." % day)
        rng.shuffle2(players)
        if day == 0:
            log("Cop: %s\nDoctor: %s\nMafia: %s" % (cop.name, doctor.name, ", ".join(m.name for m in mafia)))
            for p in players:
                p.add("Rise and shine! Today is day 0.\nNo voting will occur today.\nBe warned: Tonight the mafia will strike.")
            for m in mafia:
                m.add("You are a member of the mafia.\nYour allies are:")
                m.add("\n".join(p.name for p in mafia if p is not m))
            cop.add("You are the cop.")
            doctor.add("You are the doctor.")
        else:
            for p in players:
                p.add("Dawn of day %d." % day)
                if victim is not None:
                    p.add("Last night, %s was killed. They were %s." % (victim.name, victim.role_name()))
            if victim is not None:
                kill(victim)
                log("%s, %s, was killed." % (victim.name, victim.role_name()))
                if not mafia or len(mafia) >= len(players) - len(mafia):
                    break
            if suspect is not None and cop is not None:
                side = "mafia" if suspect.role == MAFIA else "village"
                cop.add("Investigations showed that %s is %s-aligned." % (suspect.name, side))
            log("These players are still alive: %s" % ", ".join(p.name for p in players))
        write(players)

        for _ in range(ROUNDS):
            answers = yield from run(players)
            for p in players:
                day_action(p, read(answers.get(p.seat) or "").split(), day, players, by_name, log)
            write(players)

        votes = [p.vote for p in players]
        rng.shuffle2(votes)
        lynched = max(votes, key=votes.count)
        if lynched is not None:
            log("The town has killed %s!" % lynched.name)
            log("They were %s." % lynched.role_name())
            for p in players:
                p.add("The town has killed %s!\nThey were %s." % (lynched.name, LYNCH_ROLE))
            kill(lynched)
        else:
            log("The town opted to lynch no one today.")
            for p in players:
                p.add("The town opted to lynch no one today.")
        write(players)
        # Every living player is run once to read it; its answer is not read.
        yield from run(players)
        for p in players:
            p.vote = None
        if not mafia or len(players) - len(mafia) <= len(mafia):
            break

        # Night: the mafia, the cop and the doctor, each in its own folder;
        # none of them sees what another answers, so they are asked at once
        # and read in the controller's order.
        for m in mafia:
            m.add("It is night. Vote for a victim.")
        write(mafia)
        if cop is not None:
            cop.add("It is night. Who would you like to investigate?")
            write([cop])
        if doctor is not None:
            doctor.add("It is night. Who would you like to save?")
            write([doctor])
        asked = mafia + [x for x in (cop, doctor) if x is not None]
        answers = yield from run(asked)
        said = {seat: read(t or "") for seat, t in answers.items()}
        victim_votes = []
        for m in mafia:
            v = by_name.get(said.get(m.seat, ""))
            if v is not None and v in players:
                victim_votes.append(v)
                log("%s votes to kill %s." % (m.name, v.name))
            else:
                victim_votes.append(None)
                log(m.name + " votes to kill no one.")
        rng.shuffle2(victim_votes)
        victim = max(victim_votes, key=victim_votes.count)
        log("The mafia collectively decides to kill %s." % (victim.name if victim is not None else "no one"))
        if cop is not None:
            suspect = by_name.get(said.get(cop.seat, ""))
            if suspect is not None:
                log("%s spends the night investigating %s." % (cop.name, suspect.name))
            else:
                log("%s chooses not to investigate anyone." % cop.name)
        if doctor is not None:
            patient = by_name.get(said.get(doctor.seat, ""))
            if patient is None:
                log("%s took tonight off." % doctor.name)
            elif patient is victim:
                victim = None
                log("%s was able to save %s from near-certain death." % (doctor.name, patient.name))
            else:
                log("%s tried to save %s, but they were not the target." % (doctor.name, patient.name))
        log("")
        day += 1

    if mafia:
        log("MAFIA VICTORY")
        return "mafia"
    log("VILLAGE VICTORY")
    return "village"


def day_action(p, command, day, players, by_name, log):
    """One answer of a day's round, read as the controller read it; an
    answer it could not read (an exception there) does nothing."""

    def tell(s):
        log(s)
        for q in players:
            q.add(s)

    if not command:
        return
    if command[0] == "vote":
        if day == 0 or len(command) < 2:
            return
        if command[1] == "no":
            if len(command) > 2 and command[2] == "one":
                p.vote = None
                tell("%s has voted to lynch no one." % p.name)
            return
        target = by_name.get(command[1])
        if target is None:
            return  # the vote it had stands
        if target in players:
            p.vote = target
            tell("%s has voted to lynch %s." % (p.name, command[1]))
        else:
            p.vote = None
    elif command[0] == "say":
        if len(command) < 2 or not command[1].isdigit():
            return
        digits = command[1].lstrip("0") or "0"
        if len(digits) > 2 or int(digits) >= len(MESSAGES):
            return
        n = int(digits)
        message = '%s says "' % p.name
        if n > 4:
            if len(command) < 3 or command[2] not in by_name or (len(command) == 4 and command[3] not in by_name):
                return
            if len(command) == 4:
                message += "%s, " % command[3]
            message += MESSAGES[n] + '%s"' % command[2]
        else:
            if len(command) == 3:
                if command[2] not in by_name:
                    return
                message += "%s, " % command[2]
            message += '%s"' % MESSAGES[n]
        tell(message)


def main():
    start = json.loads(sys.stdin.readline())
    seats = start["seats"]
    settings = start.get("settings") or {}
    max_days = settings.get("max_days", 30)
    if not isinstance(max_days, int) or isinstance(max_days, bool) or not 1 <= max_days <= 30:
        raise SystemExit("settings.max_days must be a whole number from 1 to 30, not %r" % (max_days,))
    if not 6 <= len(seats) <= 16:
        raise SystemExit("Mafia is for 6 to 16 players (the controller's minimum is 6), not %d" % len(seats))
    names = names_of(seats)
    rng = Py2Random(int(start["seed"]))
    events = []
    dealt = deal(names, rng)
    side = ["village"] * len(seats)
    for p in dealt[1]:
        side[p.seat] = "mafia"
    g = game(dealt, rng, max_days, events)
    players_file = "\n".join(sorted(names))
    told = set()
    turn = 0
    answers = None
    n = len(seats)
    while True:
        try:
            asks = g.send(answers) if answers is not None else next(g)
            over, winner = False, None
        except StopIteration as stop:
            over, winner = True, stop.value
        out = {"turn": turn}
        # What the controller logged, as events (the answer to start has
        # none: the deal's lines go with turn 1's).
        if turn > 0:
            out["events"] = [{"type": "log", "text": t} for t in events]
            events.clear()
        if over:
            if winner is None:
                out["scores"] = [0] * n
            else:
                out["scores"] = [1 if side[i] == winner else 0 for i in range(n)]
            out["over"] = True
        else:
            reqs = []
            for seat, text in sorted(asks.items()):
                r = {"seat": seat, "text": text}
                if seat not in told:
                    r["write"] = {"players": players_file, "name": names[seat] + "\n"}
                    told.add(seat)
                reqs.append(r)
            out["requests"] = reqs
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()
        if over:
            return
        line = sys.stdin.readline()
        if not line:
            return
        msg = json.loads(line)
        turn = msg["turn"]
        answers = {a["seat"]: (a.get("text") if a["status"] == "answer" else None) for a in msg["answers"]}


if __name__ == "__main__":
    main()
