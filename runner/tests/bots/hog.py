# Target: on its first request, allocates memory until the kernel stops it.
import sys
sys.stdin.readline()
hoard = []
while True:
    hoard.append(bytearray(1 << 20))
