# Snake: never says anything (no TCP connection, no id line).
import time
time.sleep(1e6)
