# Target: answers the first request, then exits with code 3.
import sys
sys.stdin.readline()
print(2, flush=True)
sys.stdin.readline()
sys.exit(3)
