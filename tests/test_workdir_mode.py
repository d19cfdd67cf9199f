"""``deploy-local --workdir``: a folder the user already has keeps its mode; the run's private files go
in a 0700 folder of their own."""
from __future__ import annotations

import os
import stat

from dpfed_core.deployment.launcher import GuardedFolder


class _Folder(GuardedFolder):
    def __init__(self, workdir):
        self.guard, self.workdir, self.keep = None, workdir, True


def _mode(p) -> int:
    return stat.S_IMODE(os.stat(p).st_mode)


def test_an_existing_workdir_keeps_its_mode_and_the_run_gets_a_private_folder_inside(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o755)
    f = _Folder(shared)
    f._open_dir()
    try:
        assert _mode(shared) == 0o755
        assert f.dir.parent == shared and f.dir.name.startswith("dpfed-run-") and _mode(f.dir) == 0o700
    finally:
        f._release_guard()


def test_a_new_workdir_is_made_private(tmp_path):
    new = tmp_path / "new" / "run"
    f = _Folder(new)
    f._open_dir()
    try:
        assert f.dir == new and _mode(new) == 0o700
    finally:
        f._release_guard()
