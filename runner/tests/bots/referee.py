# A referee for the engine's tests (runner/tests/referees.rs): a game of
# `rounds` turns in which both seats are asked every turn and seat 0 scores
# a point per turn; at turn `at` it does what `mode` says:
#
#   play           nothing: it plays the game to its end
#   crash          exits with code 3
#   hang           sleeps for an hour
#   spin           spins on the CPU for ever, answering nothing
#   flood          writes megabytes without a newline, for ever
#   flood_lines    writes line after line of garbage, for ever
#   stderr_flood   (every turn) writes 1 MiB to stderr, then answers
#   ghost_seat     asks seat 9, which does not exist
#   malformed      writes half a JSON object
#   two_lines      answers twice
#   memory         allocates 1 GiB
#   close_stdout   closes its output and lives on
#   spin_after     (every turn) answers, then four threads spin for 20 ms
#   silent_start   never answers start (at is ignored)
#   burn           (every turn) burns `at` ms of its own CPU time, then answers
#   events_flood   (every turn) answers with ~1 MiB of events, each line within
#                  the protocol's 1 MiB (at is ignored)
#   write_*        (a per_turn_files game) every request writes note.txt
#                  ("note TURN") in the bot's folder; at turn `at` it asks to
#                  write a file outside the folder (write_escape), 17 files
#                  (write_many), 600,000 bytes (write_big) or over the answer
#                  file (write_answer)
import json
import os
import sys
import threading
import time


def say(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def spin(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def misbehave(mode):
    if mode == "crash":
        sys.exit(3)
    if mode == "hang":
        time.sleep(3600)
    if mode == "spin":
        while True:
            pass
    if mode == "flood":
        chunk = "x" * 65536
        while True:
            sys.stdout.write(chunk)
    if mode == "flood_lines":
        while True:
            sys.stdout.write("garbage\n")
    if mode == "ghost_seat":
        say({"turn": turn, "view": VIEW, "scores": [0, 0], "requests": [{"seat": 9, "text": "hello"}]})
        time.sleep(3600)
    if mode == "malformed":
        sys.stdout.write('{"requests": [{"seat": 0,\n')
        sys.stdout.flush()
        time.sleep(3600)
    if mode == "memory":
        hog = bytearray(1 << 30)
        hog[::4096] = b"x" * len(hog[::4096])
    if mode == "close_stdout":
        os.close(1)
        time.sleep(3600)


VIEW = {"width": 2, "height": 1, "cells": "01"}
mode, at, rounds, turn = "play", 0, 10, 0
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "start":
        s = msg["settings"]
        mode, at, rounds = s.get("mode", "play"), s.get("at", 3), s.get("rounds", 10)
        if mode == "silent_start":
            time.sleep(3600)
    else:
        turn += 1
    if mode == "burn":
        end = time.process_time() + at / 1000
        while time.process_time() < end:
            pass
    if mode == "stderr_flood":
        sys.stderr.write("e" * (1 << 20) + "\n")
    if turn == at and at > 0 and mode not in ("burn", "events_flood"):
        misbehave(mode)
    over = turn >= rounds
    out = {"turn": turn, "view": VIEW, "scores": [turn, 0], "over": over}
    if turn > 0:
        out["events"] = [{"type": "turn", "text": "turn %d" % turn}]
    if turn > 0 and mode == "events_flood":
        # As many values as a turn may have (256), not one string.
        out["events"] += [{"type": "noise", "n": i, "text": "x" * 4000} for i in range(250)]
    if not over:
        out["requests"] = [{"seat": 0, "text": str(turn)}, {"seat": 1, "text": str(turn)}]
        if mode.startswith("write_"):
            # Read in turn+1 (the requests of this answer are the next turn's).
            note = {"note.txt": "note %d" % (turn + 1)}
            files = note
            if turn + 1 == at:
                # Seat 0's request only (two of write_big's would pass the
                # line's own bound).
                files = {
                    "write_escape": {"../escape.txt": "out"},
                    "write_many": {"f%d" % i: "x" for i in range(17)},
                    "write_big": {"big.txt": "x" * 600000},
                    "write_answer": {"order.txt": "a forged answer"},
                }[mode]
            for r in out["requests"]:
                r["write"] = files if r["seat"] == 0 else note
    say(out)
    if mode == "two_lines" and turn == at:
        say(out)
    if mode == "spin_after":
        for _ in range(4):
            threading.Thread(target=spin, args=(0.02,), daemon=True).start()
