# Always clams up. Written for koth's corpus (not an original answer).
print("c")
