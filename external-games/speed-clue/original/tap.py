# A tap between Speed Clue's original contest server and one AI, for
# compare.sh: started by the server as `tap.py IDENTIFIER PORT COMMAND...`
# (its entries file), it starts `COMMAND IDENTIFIER TAP-PORT`, accepts the
# AI's connection, connects to the server's PORT and passes every read on
# as one write each way, logging each message (JSON, a line each: ">" the
# server's, "<" the AI's) to $TAP_DIR/IDENTIFIER.log.
import json
import os
import select
import socket
import subprocess
import sys

ident, port, command = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
log = open(os.path.join(os.environ["TAP_DIR"], ident + ".log"), "w")
listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen(1)
ai = subprocess.Popen(command + [ident, str(listener.getsockname()[1])])
bot, _ = listener.accept()
server = socket.create_connection(("127.0.0.1", port))
peer = {bot: (server, "<"), server: (bot, ">")}
while True:
    ready, _, _ = select.select([bot, server], [], [])
    for s in ready:
        data = s.recv(512)
        if not data:
            log.close()
            ai.wait(timeout=10)
            sys.exit(0)
        other, way = peer[s]
        log.write(json.dumps([way, data.decode()]) + "\n")
        log.flush()
        other.sendall(data)
