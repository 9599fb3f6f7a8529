# Allocate and touch memory until something stops us.
chunks = []
while True:
    chunks.append(bytearray(1 << 20))
