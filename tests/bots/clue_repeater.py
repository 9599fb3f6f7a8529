# A Speed Clue AI that breaks the contest's rule against repeating a
# suggestion: it suggests Gr Ca Ba every turn and never accuses. The
# original server threw DuplicateSuggestion at its second suggestion;
# koth's speed-clue referee ends the game there (tests/corpus.rs).
import socket
import sys

conn = socket.create_connection(("127.0.0.1", int(sys.argv[2])))
conn.sendall((sys.argv[1] + " alive").encode())
while True:
    message = conn.recv(512).decode().split()
    if not message:
        break
    kind = message[0]
    if kind == "suggest":
        conn.sendall(b"suggest Gr Ca Ba")
    elif kind == "accuse":
        conn.sendall(b"-")
    elif kind == "disprove":
        conn.sendall(("show " + message[2]).encode())
    elif kind == "done":
        conn.sendall(b"dead")
        break
    else:
        conn.sendall(b"ok")
