# A bot of launch-args, started as `caller.py IDENTIFIER PORT ...` as Speed
# Clue's server started its AIs: when PORT is a number it connects to
# 127.0.0.1:PORT and says "IDENTIFIER alive" first, else it talks on
# stdin/stdout. Asked anything, it answers its arguments as a JSON list.
import json
import socket
import sys

args = sys.argv[1:]
if len(args) >= 2 and args[1].isdigit():
    conn = socket.create_connection(("127.0.0.1", int(args[1])))
    inp = out = conn.makefile("rw", encoding="utf-8", newline="\n")
    out.write(args[0] + " alive\n")
    out.flush()
else:
    inp, out = sys.stdin, sys.stdout
for line in inp:
    out.write(json.dumps(args) + "\n")
    out.flush()
