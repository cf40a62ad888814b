"""A preload module that starts a thread when imported: its zygote must not fork (spawn mode)."""
import threading
import time

_thread = threading.Thread(target=lambda: time.sleep(3600), name="preload-sleeper", daemon=True)
_thread.start()
