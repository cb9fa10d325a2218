"""Every test process gets its own kernel cache (never ~/.cache)."""
import os
import tempfile

os.environ.setdefault("FLEXJIT_CACHE_DIR", tempfile.mkdtemp(prefix="flexjit-pytest-cache-"))
