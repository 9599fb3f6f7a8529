print("hello from python")
