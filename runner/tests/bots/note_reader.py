# A per_turn_files bot for runner/tests/referees.rs: its answer (order.txt)
# is what the referee wrote in its folder as note.txt.
with open("note.txt") as f:
    note = f.read()
with open("order.txt", "w") as f:
    f.write(note)
