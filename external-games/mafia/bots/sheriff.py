# A Mafia bot for koth's corpus (external-games/mafia), written for koth.
# Started anew for every action in its own folder, as the original
# controller started its bots: it reads `from_server`, `players` and `name`, keeps
# what it learnt in `notes.json`, and writes its answer to `to_server`.
#
# As the cop it investigates the players in sorted order and, once it finds
# a mafioso, says so (message 14) and votes for them; everyone else votes
# for whoever a player said they found mafia-aligned. The mafia vote for no
# one by day and kill, at night, whoever accused one of them, else the
# first living non-mafioso in sorted order they have not chosen before. The doctor saves whoever said
# they are the cop, else itself. Deterministic.
import json
import os
import re

# Its own name: the controller named each player after its folder
# (players/NAME/); koth's referee writes it in `name`.
me = open("name").read().strip()
names = open("players").read().split("\n")
try:
    notes = json.load(open("notes.json"))
except (OSError, ValueError):
    notes = {"role": "villager", "allies": [], "dead": [], "found": {}, "accused": [], "cop_claims": []}
text = open("from_server").read() if os.path.exists("from_server") else ""
lines = text.split("\n")
for i, line in enumerate(lines):
    if line == "You are a member of the mafia.":
        notes["role"] = "mafia"
        notes["allies"] = [l for l in lines[i + 2:] if l in names]
    elif line == "You are the cop.":
        notes["role"] = "cop"
    elif line == "You are the doctor.":
        notes["role"] = "doctor"
    m = re.match(r"Last night, (\w+) was killed\.", line) or re.match(r"The town has killed (\w+)!", line)
    if m and m.group(1) not in notes["dead"]:
        notes["dead"].append(m.group(1))
    m = re.match(r"Investigations showed that (\w+) is (\w+)-aligned\.", line)
    if m:
        notes["found"][m.group(1)] = m.group(2)
    m = re.match(r'(\w+) says "I investigated this player and found that they were mafia-aligned: (\w+)"', line)
    if m and m.group(2) not in notes["accused"]:
        notes["accused"].append(m.group(2))
        if m.group(1) not in notes["cop_claims"]:
            notes["cop_claims"].append(m.group(1))
json.dump(notes, open("notes.json", "w"))

alive = [n for n in names if n not in notes["dead"]]
others = [n for n in alive if n != me]
answer = ""
if "It is night. Vote for a victim." in text:
    # Whoever survived a night it chose them was saved: the next one.
    targets = [n for n in notes["cop_claims"] if n in others and n not in notes["allies"]]
    targets += [n for n in others if n not in notes["allies"] and n not in targets]
    fresh = [n for n in targets if n not in notes.setdefault("tried", [])]
    answer = (fresh or targets or [""])[0]
    if answer:
        notes["tried"].append(answer)
        json.dump(notes, open("notes.json", "w"))
elif "It is night. Who would you like to investigate?" in text:
    unknown = [n for n in others if n not in notes["found"]]
    answer = unknown[0] if unknown else ""
elif "It is night. Who would you like to save?" in text:
    claims = [n for n in notes["cop_claims"] if n in alive]
    answer = claims[-1] if claims else me
elif text.startswith("Rise and shine!"):
    answer = ""
elif notes["role"] == "cop":
    mafia = [n for n in others if notes["found"].get(n) == "mafia"]
    if mafia and mafia[0] not in notes["accused"]:
        answer = "say 14 " + mafia[0]
    elif mafia:
        answer = "vote " + mafia[0]
elif notes["role"] == "mafia":
    answer = "vote no one"
else:
    accused = [n for n in notes["accused"] if n in others]
    if accused:
        answer = "vote " + accused[0]
with open("to_server", "w") as f:
    f.write(answer + "\n")
