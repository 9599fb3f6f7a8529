# A bot of unterminated messages, as Speed Clue's AIs were (SpeedClueAI.java:
# `in.read(buffer)` for a message, `out.format(message)` with no line ending
# for an answer): started as `unterminated.py IDENTIFIER PORT ...`, it
# connects to 127.0.0.1:PORT and says "IDENTIFIER alive" with no newline
# (or, with PORT "-", talks on stdin/stdout, with no id: a stdio game's bot). Each message it reads with one
# read answers with its arguments as a JSON list, no newline; a message that
# holds a newline answers "newline!", which the launch-args referee refuses.
#
# Started with "flood" first, it writes 256 KiB with no newline before each
# answer; with "pieces", it writes each answer in two writes 50 ms apart.
import json
import os
import socket
import sys
import time

args = sys.argv[1:]
mode = args.pop(0) if args and args[0] in ("flood", "pieces") else None
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
    answer = b"newline!" if b"\n" in message else json.dumps(args).encode()
    if mode == "flood":
        send(b"x" * (256 << 10))
    if mode == "pieces":
        send(answer[:5])
        time.sleep(0.05)
        answer = answer[5:]
    send(answer)
