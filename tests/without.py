"""Code run in a fresh interpreter where one package cannot be imported: what the library
does for a user who has not installed an optional extra."""

from __future__ import annotations

import json
import subprocess
import sys

_BLOCK = (
    "import sys\n"
    "class _NotInstalled:\n"
    "    def find_spec(self, name, path=None, target=None):\n"
    "        if name.split('.')[0] == {package!r}:\n"
    "            raise ImportError({package!r} + ' is not installed')\n"
    "sys.meta_path.insert(0, _NotInstalled())\n"
)


def run_without(package: str, code: str):
    """Run ``code`` where ``package`` (a top-level name) cannot be imported; the JSON that
    its last line of output holds."""
    result = subprocess.run(
        [sys.executable, "-c", _BLOCK.format(package=package) + code], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])
