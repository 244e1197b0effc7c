import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


# The cache's default folder is the user's cache directory: every test run gets its own, so the suite
# never reads or writes the real one (tests that exercise the cache pass --cache-dir themselves).
import atexit
import os
import shutil
import tempfile

os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="meshlint-test-cache-")
atexit.register(shutil.rmtree, os.environ["XDG_CACHE_HOME"], True)
