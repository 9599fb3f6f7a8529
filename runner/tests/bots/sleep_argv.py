# A per-turn program: sleeps its one argument's milliseconds, then answers.
import sys
import time

time.sleep(int(sys.argv[1]) / 1000)
print("ok")
