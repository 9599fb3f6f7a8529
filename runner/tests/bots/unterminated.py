# A bot of unterminated messages, as Speed Clue's AIs were (SpeedClueAI.java:
# `in.read(buffer)` for a message, `out.format(message)` with no line ending
# for an answer): started as `unterminated.py IDENTIFIER PORT ...`, it
# connects to 127.0.0.1:PORT and says "IDENTIFIER alive" with no newline
# (or, with PORT "-", talks on stdin/stdout, with no id: a stdio game's bot). Each message it reads with one
# read answers with its arguments as a JSON list, no newline; a message that
# holds a newline answers "newline!", which the launch-args referee refuses.
import json
import os
import socket
import sys

args = sys.argv[1:]
if len(args) >= 2 and args[1].isdigit():
    conn = socket.create_connection(("127.0.0.1", int(args[1])))
    recv, send = (lambda: conn.recv(512)), conn.sendall
    send((args[0] + " alive").encode())
else:
    recv, send = (lambda: os.read(0, 512)), (lambda b: os.write(1, b))
while True:
    message = recv()
    if not message:
        break
    send(b"newline!" if b"\n" in message else json.dumps(args).encode())
