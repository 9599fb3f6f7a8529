import time
time.sleep(1e6)
